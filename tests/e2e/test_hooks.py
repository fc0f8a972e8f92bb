"""Hooks end to end: the real ``cat-code`` with the scripted model API, hook scripts written
for Claude Code (bash and ``jq``) in temporary folders, and a project whose hooks leave a
mark (a file) when they run, so each test sees whether they ran at all.

Covered: a PreToolUse guard blocking ``rm -rf`` (the model reads why, the file stays) and an
MCP tool (matched as ``mcp__echo__.*``), a PostToolUse hook's ``additionalContext`` reaching
the model, ``-v`` naming each run, a project's hooks skipped by ``-p`` until approved (one
stderr line naming the command), run once with ``--trust-project``, listed by ``cat-code
hooks``, the REPL's start-up question, ``/hooks``, SessionStart, Notification and
SessionEnd, and a guard and SubagentStop inside a subagent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use, tool_results
from scripted.processes import ECHO_SERVER
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip

#: A PreToolUse hook as Claude Code's documentation writes it: bash and jq, exit 2 blocks.
RM_GUARD = """#!/bin/bash
command=$(jq -r '.tool_input.command')
if echo "$command" | grep -q 'rm -rf'; then
  echo "Blocked: rm -rf is not allowed in this repository" >&2
  exit 2
fi
exit 0
"""


@dataclass
class Place:
    """cat-code's home, and a git project folder to run in."""

    home: Path
    project: Path
    env: dict[str, str] = field(default_factory=dict)

    def script(self, name: str, body: str) -> str:
        path = self.home / name
        path.write_text(body)
        path.chmod(0o755)
        return str(path)

    def user_hooks(self, hooks: dict[str, Any]) -> None:
        (self.home / ".cat-code").mkdir(exist_ok=True)
        (self.home / ".cat-code" / "settings.json").write_text(json.dumps({"hooks": hooks}))

    def project_hooks(self, hooks: dict[str, Any], name: str = "settings.json") -> None:
        (self.project / ".cat-code").mkdir(exist_ok=True)
        (self.project / ".cat-code" / name).write_text(json.dumps({"hooks": hooks}))

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CAT_CODE, *args],
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )


def on(event: str, command: str, matcher: str = "") -> dict[str, Any]:
    return {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}


@pytest.fixture
def api() -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        yield server
    assert server.errors == []


@pytest.fixture
def place(tmp_path: Path, api: ScriptedModelApi) -> Place:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(
        HOME=str(home),
        CAT_CODE_HOME=str(home / ".cat-code"),
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=api.url,
    )
    return Place(home, project, env)


def result_text(request: dict[str, Any]) -> str:
    [result] = tool_results(request)
    content = result["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


def test_a_claude_code_pre_tool_use_guard_blocks_rm_rf_and_the_model_reads_why(
    place: Place, api: ScriptedModelApi
) -> None:
    victim = place.project / "precious.txt"
    victim.write_text("keep me")
    place.user_hooks(on("PreToolUse", place.script("guard.sh", RM_GUARD), "Bash"))
    seen: list[str] = []

    def read_why(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(result_text(request))
        return anthropic_text("I will not delete it then.")

    api.add(anthropic_tool_use("shell", {"command": "rm -rf precious.txt"}), read_why)
    run = place.run("-p", "clean up", "--yes")

    assert run.returncode == 0, run.stderr
    assert seen == [
        "Error: a PreToolUse hook blocked this call: Blocked: rm -rf is not allowed in this "
        "repository"
    ]
    assert victim.read_text() == "keep me"
    assert "refused shell: blocked by a PreToolUse hook" in run.stderr
    assert run.stdout == "I will not delete it then.\n"


def test_a_hook_matches_an_mcp_tool_by_its_registered_name_and_blocks_it(
    place: Place, api: ScriptedModelApi
) -> None:
    config = place.home / "mcp.json"
    server = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    config.write_text(json.dumps({"mcpServers": {"echo": server}}))
    seen = place.home / "seen.json"
    guard = f"cat > {seen}; echo 'echo is off today' >&2; exit 2"
    place.user_hooks(on("PreToolUse", guard, "mcp__echo__.*"))
    results: list[str] = []

    def read_why(request: dict[str, Any]) -> dict[str, Any]:
        results.append(result_text(request))
        return anthropic_text("ok, no echo")

    api.add(anthropic_tool_use("mcp__echo__echo", {"text": "hi"}), read_why)
    run = place.run("--mcp-config", str(config), "-p", "echo hi", "--yes")

    assert run.returncode == 0, run.stderr
    assert results == ["Error: a PreToolUse hook blocked this call: echo is off today"]
    payload = json.loads(seen.read_text())
    assert (payload["tool_name"], payload["tool_input"]) == ("mcp__echo__echo", {"text": "hi"})


def test_a_post_tool_use_hooks_context_reaches_the_model_and_v_logs_each_run(
    place: Place, api: ScriptedModelApi
) -> None:
    seen_input = place.home / "post-input.json"
    out = {"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                  "additionalContext": "lint: 0 problems"}}  # fmt: skip
    post = place.script("post.sh", f"#!/bin/bash\ncat > {seen_input}\necho '{json.dumps(out)}'\n")
    place.user_hooks(on("PostToolUse", post, "Bash|Edit"))
    seen: list[str] = []

    def read_context(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(result_text(request))
        return anthropic_text("done")

    api.add(anthropic_tool_use("shell", {"command": "echo hi"}), read_context)
    run = place.run("-p", "say hi", "--yes", "-v")

    assert run.returncode == 0, run.stderr
    [content] = seen
    assert "hi" in content and content.endswith("\n\nlint: 0 problems")
    payload = json.loads(seen_input.read_text())
    assert payload["hook_event_name"] == "PostToolUse"
    assert payload["tool_name"] == "shell" and payload["tool_input"] == {"command": "echo hi"}
    assert payload["cwd"] == str(place.project)
    assert payload["session_id"] and payload["transcript_path"].endswith(".jsonl")
    logged = [line for line in run.stderr.splitlines() if "hook PostToolUse" in line]
    assert len(logged) == 1 and f"{post!r}: exit 0, " in logged[0] and logged[0].endswith(" ms")


def test_a_projects_hooks_do_not_run_before_approval_and_p_says_so_in_one_line(
    place: Place, api: ScriptedModelApi
) -> None:
    mark = place.project / "HOOK-RAN"
    place.project_hooks(on("UserPromptSubmit", f"touch {mark}"))
    api.add(anthropic_text("hello"))

    run = place.run("-p", "hi")
    assert run.returncode == 0, run.stderr
    assert not mark.exists()
    said = [line for line in run.stderr.splitlines() if "hook" in line]
    assert said == [
        f"cat-code: skipped 1 hook(s) of the project settings in {place.project / '.cat-code'} "
        "that you have not approved: run cat-code project approve hooks"
    ]

    listing = place.run("hooks")
    assert listing.returncode == 1
    assert listing.stdout.startswith(f"NEEDS_APPROVAL UserPromptSubmit: touch {mark}")
    assert "cat-code project approve hooks" in listing.stdout

    api.add(anthropic_text("hello"))  # --trust-project: this run only, nothing recorded
    assert place.run("-p", "hi", "--trust-project").returncode == 0
    assert mark.exists()
    mark.unlink()
    assert json.loads(place.run("hooks", "--json").stdout)[0]["state"] == "NEEDS_APPROVAL"

    approve = place.run("project", "approve", "hooks")
    assert approve.returncode == 0, approve.stderr
    assert "Approved for this folder: hooks of" in approve.stdout
    api.add(anthropic_text("hello"))
    assert place.run("-p", "hi").returncode == 0
    assert mark.exists()

    # A changed hook asks again; so does a new one in settings.local.json.
    mark.unlink()
    place.project_hooks(on("UserPromptSubmit", f"touch {mark}; true"), "settings.local.json")
    api.add(anthropic_text("hello"))
    run = place.run("-p", "hi")
    assert not mark.exists() and "skipped 2 hook(s)" in run.stderr


def test_the_repl_asks_about_project_hooks_at_start_and_hooks_lists_them(
    place: Place, api: ScriptedModelApi
) -> None:
    mark, events = place.project / "HOOK-RAN", place.home / "events"
    place.project_hooks(on("UserPromptSubmit", f"touch {mark}"))
    log = f"jq -c '[.hook_event_name, .source // .reason // .message]' >> {events}"
    place.user_hooks(
        {
            **on("Stop", "true"),
            **on("SessionStart", log),
            **on("SessionEnd", log),
            **on("Notification", log),
        }
    )
    api.add(anthropic_text("hello there"))
    api.add(anthropic_tool_use("shell", {"command": "echo hi"}), anthropic_text("not run"))
    term = Terminal(CAT_CODE, [], env=place.env, cwd=place.project)
    try:
        asked = term.wait_for("approve and apply them? [y/N]")  # (the line may wrap anywhere)
        assert "project hooks of" in asked and "UserPromptSubmit:" in asked
        term.type("y")
        term.wait_for("approved for this folder")
        term.type("/hooks")
        listing = term.wait_for("settings.json")
        assert "ACTIVE" in listing and "Stop: true" in listing
        term.type("hi")
        term.wait_for("hello there")
        assert mark.exists()
        term.type("run echo")
        term.wait_for("allow?")
        term.type("n")
        term.wait_for("not run")
        term.type("/exit")
        assert term.wait_for_exit() == 0
    finally:
        term.close()
    assert [json.loads(line) for line in events.read_text().splitlines()] == [
        ["SessionStart", "startup"],
        ["Notification", "cat-code needs your permission to use shell"],
        ["SessionEnd", "prompt_input_exit"],
    ]


def test_hooks_fire_inside_a_subagent_and_subagent_stop_when_it_ends(
    place: Place, api: ScriptedModelApi
) -> None:
    fired = place.home / "fired"
    log = f"jq -c '[.hook_event_name, .tool_input.command // .stop_hook_active]' >> {fired}"
    place.user_hooks(
        {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command",
                                               "command": place.script("guard.sh", RM_GUARD)}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": log}]},
            ],
            **on("SubagentStop", log),
            **on("Stop", log),
        }
    )  # fmt: skip
    task = "Clean the build folder."
    child_saw: list[str] = []

    def child_reads(request: dict[str, Any]) -> dict[str, Any]:
        child_saw.append(result_text(request))
        return anthropic_text("could not clean it")

    api.add(
        anthropic_tool_use("agent", {"description": "clean up", "prompt": task}),
        anthropic_text("The subagent could not clean it."),
    )
    api.add_conversation(
        task, anthropic_tool_use("shell", {"command": "rm -rf build"}), child_reads
    )
    run = place.run("-p", "go", "--yes")

    assert run.returncode == 0, run.stderr
    assert child_saw == [
        "Error: a PreToolUse hook blocked this call: Blocked: rm -rf is not allowed in this "
        "repository"
    ]
    assert [json.loads(line) for line in fired.read_text().splitlines()] == [
        ["PreToolUse", "rm -rf build"],
        ["SubagentStop", False],
        ["Stop", False],
    ]
