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
    assert session.registry.names() == [*builtins, "agent"]  # the subagents' tool


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
