"""The task list in the REPL, in a pseudo-terminal: the panel above the prompt while a task
is open (the running one by its activeForm), Ctrl-T to hide and show it, ``/tasks``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_message, anthropic_text
from scripted.processes import REPO
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
PROMPT = "›"
CTRL_T = "\x14"
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
def repl(tmp_path: Path, api: ScriptedModelApi) -> Iterator[Any]:
    terminals: list[Terminal] = []
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {}}))

    def start(*args: str, **extra_env: str) -> Terminal:
        env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
        env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        env.update(extra_env)
        argv = ["--mcp-config", str(config), "--model", "anthropic:claude-sonnet-4-5", *args]
        terminals.append(Terminal(CAT_CODE, argv, env=env, cwd=REPO))
        terminals[-1].wait_for(PROMPT)
        return terminals[-1]

    yield start
    for term in terminals:
        term.close()


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    content = [
        {"type": "tool_use", "id": f"toolu_{n}_{name}", "name": name, "input": arguments}
        for n, (name, arguments) in enumerate(pairs)
    ]
    return anthropic_message(content, "tool_use")


def test_the_panel_shows_open_tasks_above_the_prompt_and_ctrl_t_hides_it(
    repl: Any, api: ScriptedModelApi
) -> None:
    api.add(
        calls(
            ("task_create", {"subject": "Write the parser", "activeForm": "Writing the parser"}),
            ("task_create", {"subject": "Test the parser", "blockedBy": [1]}),
            ("task_create", {"subject": "Ship \x1b[2Jit"}),  # the model's text is shown safe
            ("task_update", {"id": 1, "status": "in_progress"}),
        ),
        anthropic_text("planned and started"),
        calls(*(("task_update", {"id": n, "status": "completed"}) for n in (1, 2, 3))),
        anthropic_text("all done"),
    )
    term = repl()
    term.type("plan the parser work")
    term.wait_for("planned and started")
    # The panel, above the next prompt: the running task by its activeForm.
    term.wait_for("0 of 3 done")
    term.wait_for("▶ #1 Writing the parser")
    term.wait_for("○ #2 Test the parser  (blocked by #1)")
    term.wait_for("○ #3 Ship \\x1b[2Jit")
    term.wait_for(PROMPT)

    term.press(CTRL_T)  # hidden: /tasks still prints the list and says so
    term.type("/tasks")
    term.wait_for("/tasks")
    term.wait_for("  ▶ #1 Writing the parser")
    term.wait_for("(the panel above the prompt is hidden: Ctrl-T shows it)")
    term.wait_for(PROMPT)
    term.press(CTRL_T)  # shown again, at once, without a new line typed
    term.wait_for("0 of 3 done")
    term.wait_for("▶ #1 Writing the parser")

    term.type("finish it all")
    term.wait_for("all done")
    term.wait_for(PROMPT)
    term.type("/tasks")
    term.wait_for("3 of 3 done")
    term.wait_for("✔ #3 Ship")
    term.type("/exit")
    assert term.wait_for_exit() == 0


def test_continue_in_the_repl_brings_the_list_back_above_the_prompt(
    repl: Any, api: ScriptedModelApi
) -> None:
    api.add(
        calls(
            ("task_create", {"subject": "Migrate", "activeForm": "Migrating the database"}),
            ("task_update", {"id": 1, "status": "in_progress"}),
        ),
        anthropic_text("migration started"),
    )
    term = repl()
    term.type("start the migration")
    term.wait_for("migration started")
    term.type("/exit")
    assert term.wait_for_exit() == 0

    again = repl("--continue")  # returns once the first prompt is up, the panel above it
    assert "▶ #1 Migrating the database" in again.screen
    again.type("/exit")
    assert again.wait_for_exit() == 0


def test_a_shared_list_changed_by_another_process_shows_at_the_next_prompt(
    repl: Any, api: ScriptedModelApi
) -> None:
    term = repl(CAT_CODE_TASK_LIST="shared-plan")
    other = subprocess.run(
        [
            sys.executable, "-c",
            "from cat_code.host.tasks import TaskStore, TaskStatus\n"
            "store = TaskStore('shared-plan')\n"
            "store.create('Review the patch', active_form='Reviewing the patch')\n"
            "store.update(1, status=TaskStatus.IN_PROGRESS)\n",
        ],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert other.returncode == 0, other.stderr
    term.type("")  # an empty line: the prompt again, the list read again before it
    term.wait_for("tasks (shared-plan): 0 of 1 done")
    term.wait_for("▶ #1 Reviewing the patch")
    term.type("/exit")
    assert term.wait_for_exit() == 0
