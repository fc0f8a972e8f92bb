"""`Session`: the one wiring of provider, registry, permissions, roots, pool and agent."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cat_code.agent.session import Session, builtin_tool_list
from cat_code.host.config.load import load_config
from cat_code.tools.builtin import FileLedger

REPO = Path(__file__).resolve().parents[2]
ECHO_SERVER = REPO / "examples" / "echo_server.py"


def test_a_session_without_a_usable_model_has_no_agent_and_says_why(tmp_path: Path) -> None:
    session = Session(model="nowhere", approve_all=False, allow_patterns=None, cwd=tmp_path)

    assert session.agent is None and session.provider is None
    assert session.model_problem is not None and "nowhere" in session.model_problem
    builtins = [t.name for t in builtin_tool_list(tmp_path, FileLedger())]
    tasks = ["task_create", "task_update", "task_get", "task_list"]
    jobs = ["job_output", "job_stop"]
    assert session.registry.names() == [*builtins, *jobs, *tasks, "agent"]  # the agent tool last


async def test_the_pool_gets_the_sessions_roots_and_its_tools_join_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    config_file = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    config_file.write_text(json.dumps({"mcpServers": {"echo": entry}}), encoding="utf-8")
    extra = tmp_path / "docs"
    extra.mkdir()
    session = Session(
        model="anthropic:claude-test", approve_all=False, allow_patterns=None, add_dirs=[extra]
    )
    assert session.agent is not None

    async with session.open_pool(load_config([config_file]), elicitation_handler=None) as pool:
        await session.connect()

        assert pool.roots is session.roots and extra.resolve() in session.roots.paths
        names = session.registry.names()
        builtins = [t.name for t in builtin_tool_list(Path.cwd(), FileLedger())]
        assert names[: len(builtins)] == builtins
        assert "list_mcp_resources" in names and "mcp__echo__echo" in names
    assert session.provider is not None
    await session.provider.close()


def test_a_model_switched_to_later_is_the_sessions_agent_so_clear_empties_it(
    tmp_path: Path,
) -> None:
    from cat_code.agent.providers.base import UserMessage
    from cat_code.agent.providers.fake import ScriptedProvider

    session = Session(model="nowhere", approve_all=False, allow_patterns=None, cwd=tmp_path)
    assert session.switch_model(ScriptedProvider([])) is None  # nothing to close before
    agent = session.agent
    assert agent is not None and session.model_problem is None
    agent.messages.append(UserMessage("hello"))

    session.new_conversation()

    assert session.agent is agent and agent.messages == []
    again = ScriptedProvider([], name="fake:other")
    assert session.switch_model(again) is not None  # the first one, for the caller to close
    assert session.agent is agent and agent.provider is again  # the conversation goes on


def test_the_task_list_is_the_sessions_own_and_its_file_records_it(tmp_path: Path) -> None:
    from cat_code.agent.history import load
    from cat_code.agent.providers.base import UserMessage
    from cat_code.agent.providers.fake import ScriptedProvider

    session = Session(model="nowhere", approve_all=False, allow_patterns=None, cwd=tmp_path)
    assert session.tasks.name == session.session_id
    session.tasks.create("step one")
    session.switch_model(ScriptedProvider([]))
    session.log.sync([UserMessage(text="hi")])
    assert load(session.log.path).task_list == session.session_id

    first_id = session.session_id
    session.new_conversation()  # /clear: a new session, a new (empty) list
    assert session.tasks.name == session.session_id != first_id
    assert session.tasks.read() == []

    session.resume(load(next(session.log.path.parent.glob(f"{first_id}.jsonl"))))
    assert session.tasks.name == first_id
    assert [t.subject for t in session.tasks.snapshot] == ["step one"]


def test_a_shared_list_named_in_the_environment_is_used_and_recorded_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cat_code.agent.history import load
    from cat_code.agent.providers.base import UserMessage

    session = Session(model="nowhere", approve_all=False, allow_patterns=None, cwd=tmp_path)
    session.log.sync([UserMessage(text="hi")])
    own = session.session_id
    monkeypatch.setenv("CAT_CODE_TASK_LIST", "team")
    resumed = Session(
        model="nowhere",
        approve_all=False,
        allow_patterns=None,
        cwd=tmp_path,
        resume=load(session.log.path),
    )
    assert resumed.tasks.name == "team"
    assert load(session.log.path).task_list == "team"  # recorded: --resume keeps it
    monkeypatch.delenv("CAT_CODE_TASK_LIST")
    again = Session(
        model="nowhere",
        approve_all=False,
        allow_patterns=None,
        cwd=tmp_path,
        resume=load(session.log.path),
    )
    assert again.tasks.name == "team" and again.session_id == own
