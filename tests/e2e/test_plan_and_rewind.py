"""Plan mode and /rewind with the real cat-code and the scripted model API: plan mode
refuses an edit that ``--allow-tool`` allows, ``exit_plan_mode`` ends a ``-p`` run with the
plan as its answer, and ``/rewind`` in the REPL brings back a file a ``shell`` call rewrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use, tool_results
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
PROMPT = "›"
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


@pytest.fixture
def api() -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        yield server
    assert server.errors == []


def environment(tmp_path: Path, api: ScriptedModelApi) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    return env


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, timeout=30
    )
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    git(project, "config", "user.email", "t@example.com")
    git(project, "config", "user.name", "t")
    (project / "none.json").write_text('{"mcpServers": {}}')
    (project / "app.py").write_text("print('hello')\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "first")
    return project


def oneshot(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CAT_CODE, "--mcp-config", "none.json", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def only_result(request: dict[str, Any]) -> dict[str, Any]:
    [result] = tool_results(request)
    return result


def test_plan_mode_refuses_an_edit_even_when_allow_tool_allows_it(
    tmp_path: Path, api: ScriptedModelApi, project: Path
) -> None:
    edit = {"path": "app.py", "old_string": "hello", "new_string": "goodbye"}
    seen: list[str] = []

    def after_refusal(request: dict[str, Any]) -> dict[str, Any]:
        result = only_result(request)
        seen.append(str(result["content"]))
        assert result["is_error"] is True
        return anthropic_text("I will plan instead.")

    api.add(
        anthropic_tool_use("read_file", {"path": "app.py"}),
        anthropic_tool_use("edit_file", edit),
        after_refusal,
    )
    run = oneshot(
        project,
        environment(tmp_path, api),
        "-p", "make it say goodbye", "--permission-mode", "plan", "--allow-tool", "edit_file",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert (project / "app.py").read_text() == "print('hello')\n"
    assert "plan mode is on, so 'edit_file' was not run" in seen[0]
    assert "plan mode refused edit_file" in run.stderr
    system = api.requests[0]["system"]
    assert "Plan mode is on" in json.dumps(system)


def test_exit_plan_mode_ends_a_one_shot_run_with_the_plan_as_the_result(
    tmp_path: Path, api: ScriptedModelApi, project: Path
) -> None:
    plan = "## Plan\n1. Change the greeting in app.py\n2. Run it"
    api.add(anthropic_tool_use("exit_plan_mode", {"plan": plan}))
    env = environment(tmp_path, api)
    run = oneshot(project, env, "-p", "plan the change", "--permission-mode", "plan")
    assert run.returncode == 0, run.stderr
    assert run.stdout == plan + "\n"
    assert len(api.requests) == 1  # the plan ended the turn: the model was not asked again

    api.add(anthropic_tool_use("exit_plan_mode", {"plan": plan}))
    args = ("-p", "plan it", "--permission-mode", "plan", "--output-format", "json")
    run = oneshot(project, env, *args)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["subtype"] == "success" and result["result"] == plan


def test_rewind_brings_back_a_file_a_shell_command_rewrote(
    tmp_path: Path, api: ScriptedModelApi, project: Path, cat_code_home: Path
) -> None:
    command = "printf 'print(1)\\n' > app.py && printf 'x\\n' > made.txt"
    api.add(
        anthropic_tool_use("shell", {"command": command}),
        anthropic_text("rewrote it"),
    )
    term = Terminal(
        CAT_CODE, ["--mcp-config", "none.json", "--allow-tool", "shell"],
        env=environment(tmp_path, api), cwd=project,
    )  # fmt: skip
    try:
        term.wait_for(PROMPT)
        term.type("rewrite app.py with the shell")
        term.wait_for("rewrote it")
        assert (project / "app.py").read_text() == "print(1)\n"
        assert (project / "made.txt").exists()
        term.type("/rewind")
        term.wait_for("rewrite app.py with the shell  code changed since")
        term.wait_for("rewind to before which prompt?")
        term.type("1")
        term.wait_for("restore: b both")
        term.type("b")
        term.wait_for("code restored to before prompt 1: 1 file(s) written back, 1 removed")
        term.wait_for("conversation rewound to before prompt 1")
        assert (project / "app.py").read_text() == "print('hello')\n"
        assert not (project / "made.txt").exists()
        assert git(project, "status", "--porcelain") == ""  # the user's index untouched
        [saved] = (cat_code_home / "sessions").glob("*/*.jsonl")
        last = json.loads(saved.read_text().splitlines()[-1])
        assert last == {"type": "rewind", "to": 0}  # --resume goes on from before prompt 1
    finally:
        term.close()


def test_shift_tab_enters_plan_mode_and_an_approved_plan_lets_the_edit_run_unasked(
    tmp_path: Path, api: ScriptedModelApi, project: Path
) -> None:
    edit = {"path": "app.py", "old_string": "hello", "new_string": "goodbye"}

    def planned(request: dict[str, Any]) -> dict[str, Any]:
        assert "Plan mode is on" in json.dumps(request["system"])
        return anthropic_tool_use("exit_plan_mode", {"plan": "# Plan\n- say **goodbye**"})

    def approved(request: dict[str, Any]) -> dict[str, Any]:
        assert "now acceptEdits" in str(only_result(request)["content"])
        return anthropic_tool_use("edit_file", edit)

    api.add(
        anthropic_tool_use("read_file", {"path": "app.py"}),
        planned,
        approved,
        anthropic_text("said goodbye"),
    )
    term = Terminal(
        CAT_CODE, ["--mcp-config", "none.json"], env=environment(tmp_path, api), cwd=project
    )
    try:
        term.wait_for(PROMPT)
        term.press("\x1b[Z")  # Shift+Tab: acceptEdits
        term.wait_for("accept edits ›")
        term.press("\x1b[Z")  # and plan
        term.wait_for("⏸ plan ›")
        term.type("make it say goodbye")
        term.wait_for("● plan")
        term.wait_for("approve?")
        term.type("a")
        term.wait_for("said goodbye")
        assert (project / "app.py").read_text() == "print('goodbye')\n"
    finally:
        term.close()
