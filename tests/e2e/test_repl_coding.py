"""The REPL as a coding agent, in a pseudo-terminal: the approval question shows the diff of
an edit (and a new file's first lines), /memory lists the memory files, /model switches."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use
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


@pytest.fixture
def repl(tmp_path: Path, api: ScriptedModelApi) -> Iterator[tuple[Terminal, Path]]:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "none.json").write_text('{"mcpServers": {}}')
    (project / "AGENTS.md").write_text("Use tabs.")
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    term = Terminal(CAT_CODE, ["--mcp-config", "none.json"], env=env, cwd=project)
    try:
        yield term, project
    finally:
        term.close()


def test_the_approval_question_shows_the_diff_and_a_refusal_changes_nothing(
    repl: tuple[Terminal, Path], api: ScriptedModelApi
) -> None:
    term, project = repl
    source = project / "app.py"
    source.write_text("def greet():\n    return 'hello'\n")
    edit = {"path": "app.py", "old_string": "'hello'", "new_string": "'goodbye'"}

    def refused(request: dict[str, Any]) -> dict[str, Any]:
        return anthropic_tool_use("edit_file", edit)

    api.add(
        anthropic_tool_use("read_file", {"path": "app.py"}),
        anthropic_tool_use("edit_file", edit),
        refused,
        anthropic_text("edited"),
        anthropic_tool_use("write_file", {"path": "docs/new.md", "content": "# Title\nbody\n"}),
        anthropic_text("written"),
    )
    term.wait_for(PROMPT)
    term.type("/memory")
    term.wait_for(f"{project / 'AGENTS.md'}  9 characters")
    term.type("say goodbye")
    term.wait_for('? edit_file {"path":"app.py"}')
    term.wait_for("--- a/app.py")
    term.wait_for("+++ b/app.py")
    term.wait_for("-    return 'hello'")
    term.wait_for("+    return 'goodbye'")
    term.wait_for("allow?")
    term.type("n")
    term.wait_for("allow?")
    assert source.read_text() == "def greet():\n    return 'hello'\n"
    term.type("y")
    term.wait_for("edited")
    assert source.read_text() == "def greet():\n    return 'goodbye'\n"
    term.type("write the docs")
    term.wait_for("new file docs/new.md (2 lines)")
    term.wait_for("+ # Title")
    term.wait_for("allow?")
    term.type("y")
    term.wait_for("written")
    assert (project / "docs" / "new.md").read_text() == "# Title\nbody\n"
    term.type("/model anthropic:claude-other")
    term.wait_for("model: anthropic:claude-other (the conversation goes on)")
    term.type("/exit")
    assert term.wait_for_exit() == 0
