"""Hooks in the agent loop, with real hook processes (bash scripts in a temporary folder)
and a scripted model: what each event's answer does to the turn."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cat_code.agent.hooks import HookConfig, Hooks, HookScope, parse_hooks
from cat_code.agent.loop import Agent
from cat_code.agent.permissions import Answer, Permissions
from cat_code.agent.providers.base import Message, UserMessage
from cat_code.agent.providers.fake import ScriptedProvider, reply, use_tools
from cat_code.tools.base import Tool, ToolResult
from cat_code.tools.registry import ToolRegistry

#: Claude Code's documented shape of a Bash guard: bash plus a JSON reader.
RM_GUARD = """#!/bin/bash
command=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["command"])')
if [[ "$command" == *"rm -rf"* ]]; then
  echo "Blocked: rm -rf is not allowed here; delete files one by one" >&2
  exit 2
fi
exit 0
"""


class Recording(Tool):
    def __init__(self, name: str = "shell", *, read_only: bool = False) -> None:
        self.name = name
        self.description = name
        self.input_schema = {"type": "object"}
        self.read_only = read_only
        self.calls: list[dict[str, Any]] = []

    async def execute(self, arguments: dict[str, Any], *, progress: Any = None) -> ToolResult:
        self.calls.append(arguments)
        return ToolResult(f"ran {json.dumps(arguments)}")


def script(folder: Path, name: str, body: str) -> str:
    path = folder / name
    path.write_text(body if body.startswith("#!") else f"#!/bin/bash\n{body}\n")
    path.chmod(0o755)
    return str(path)


def hooks_of(folder: Path, raw: dict[str, Any]) -> Hooks:
    found, warnings = parse_hooks(raw, folder / "settings.json", HookScope.USER)
    assert warnings == []
    hooks = Hooks(HookConfig(tuple(found)), cwd=folder, session_id=lambda: "s-1")
    hooks.notices = []  # type: ignore[attr-defined]
    hooks.on_notice = hooks.notices.append  # type: ignore[attr-defined]
    return hooks


def on(event: str, command: str, matcher: str = "") -> dict[str, Any]:
    return {event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}]}


def results(message: Message) -> list[str]:
    assert isinstance(message, UserMessage)
    return [r.content for r in message.tool_results]


async def test_a_claude_code_bash_guard_blocks_rm_rf_and_the_model_reads_why(
    tmp_path: Path,
) -> None:
    hooks = hooks_of(tmp_path, on("PreToolUse", script(tmp_path, "guard.sh", RM_GUARD), "Bash"))
    shell = Recording()
    model = ScriptedProvider(
        [
            use_tools(("shell", {"command": "rm -rf /"})),
            use_tools(("shell", {"command": "ls"})),
            reply("ok"),
        ]
    )
    agent = Agent(
        model, ToolRegistry([shell]), permissions=Permissions(approve_all=True), hooks=hooks
    )

    outcome = await agent.run("clean up")

    assert outcome.text == "ok"
    [blocked] = results(model.calls[1].messages[-1])
    assert blocked == (
        "Error: a PreToolUse hook blocked this call: Blocked: rm -rf is not allowed here; "
        "delete files one by one"
    )
    assert shell.calls == [{"command": "ls"}]  # the guarded call never ran; the next one did


async def test_a_hook_exiting_1_does_not_block_and_the_user_is_told(tmp_path: Path) -> None:
    hooks = hooks_of(tmp_path, on("PreToolUse", "echo broken >&2; exit 1"))
    shell = Recording()
    model = ScriptedProvider([use_tools(("shell", {"command": "rm -rf x"})), reply("ok")])
    agent = Agent(
        model, ToolRegistry([shell]), permissions=Permissions(approve_all=True), hooks=hooks
    )
    await agent.run("go")
    assert shell.calls == [{"command": "rm -rf x"}]
    assert hooks.notices == [  # type: ignore[attr-defined]
        "PreToolUse hook 'echo broken >&2; exit 1' failed with exit 1: broken"
    ]


def decision(value: str, **extra: Any) -> str:
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": value,
            "permissionDecisionReason": f"hook says {value}",
            **extra,
        }
    }
    return f"cat > /dev/null; echo '{json.dumps(out)}'"


async def test_allow_from_a_hook_settles_what_would_be_asked_and_updated_input_is_run(
    tmp_path: Path,
) -> None:
    asked: list[str] = []

    async def asker(tool: Tool, arguments: dict[str, Any]) -> Answer:
        asked.append(tool.name)
        return Answer.NO

    command = decision("allow", updatedInput={"command": "ls -l"})
    hooks = hooks_of(tmp_path, on("PreToolUse", command))
    shell = Recording()
    model = ScriptedProvider([use_tools(("shell", {"command": "ls"})), reply("ok")])
    agent = Agent(model, ToolRegistry([shell]), permissions=Permissions(asker=asker), hooks=hooks)
    await agent.run("go")
    assert asked == []
    assert shell.calls == [{"command": "ls -l"}]


async def test_ask_from_a_hook_asks_even_for_a_read_only_tool_and_deny_wins_over_it(
    tmp_path: Path,
) -> None:
    asked: list[str] = []

    async def asker(tool: Tool, arguments: dict[str, Any]) -> Answer:
        asked.append(tool.name)
        return Answer.YES

    reader = Recording("read_file", read_only=True)
    hooks = hooks_of(tmp_path, on("PreToolUse", decision("ask")))
    model = ScriptedProvider([use_tools(("read_file", {})), reply("ok")])
    agent = Agent(model, ToolRegistry([reader]), permissions=Permissions(asker=asker), hooks=hooks)
    await agent.run("go")
    assert asked == ["read_file"] and len(reader.calls) == 1

    both = hooks_of(
        tmp_path,
        {
            "PreToolUse": [
                {
                    "hooks": [
                        {"type": "command", "command": decision("ask")},
                        {"type": "command", "command": decision("deny")},
                        {"type": "command", "command": decision("allow")},
                    ]
                }
            ]
        },
    )
    model = ScriptedProvider([use_tools(("read_file", {})), reply("ok")])
    agent = Agent(model, ToolRegistry([reader]), permissions=Permissions(asker=asker), hooks=both)
    await agent.run("go")
    assert results(model.calls[1].messages[-1]) == [
        "Error: a PreToolUse hook blocked this call: hook says deny"
    ]
    assert asked == ["read_file"] and len(reader.calls) == 1


async def test_several_hooks_of_one_event_run_at_the_same_time(tmp_path: Path) -> None:
    # Each hook waits for the other through two named pipes: run one after the other,
    # they would both end at their timeout instead.
    first, second = tmp_path / "first", tmp_path / "second"
    os.mkfifo(first)
    os.mkfifo(second)
    a = f'cat > /dev/null; echo a > {first}; read x < {second}; echo "a got $x" >&2; exit 2'
    b = f"cat > /dev/null; read x < {first}; echo b > {second}; exit 0"
    raw = {
        "PreToolUse": [
            {
                "hooks": [
                    {"type": "command", "command": a, "timeout": 10},
                    {"type": "command", "command": b, "timeout": 10},
                ]
            }
        ]
    }
    hooks = hooks_of(tmp_path, raw)
    verdict = await hooks.pre_tool_use("shell", {"command": "ls"})
    assert verdict.blocked and verdict.reason == "a got b" and verdict.ran == 2


async def test_post_tool_use_context_reaches_the_model_with_the_result(tmp_path: Path) -> None:
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "formatted with black",
        }
    }
    reader = script(tmp_path, "post.sh", f"in=$(cat)\necho '{json.dumps(out)}'")
    hooks = hooks_of(tmp_path, on("PostToolUse", reader, "shell|write_file"))
    model = ScriptedProvider([use_tools(("shell", {"command": "ls"})), reply("ok")])
    agent = Agent(
        model, ToolRegistry([Recording()]), permissions=Permissions(approve_all=True), hooks=hooks
    )
    await agent.run("go")
    assert results(model.calls[1].messages[-1]) == ['ran {"command": "ls"}\n\nformatted with black']


async def test_the_hook_gets_claude_codes_fields_on_stdin(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    hooks = hooks_of(tmp_path, on("PostToolUse", f"cat > {seen}"))
    model = ScriptedProvider([use_tools(("edit_file", {"path": "a.py"})), reply("ok")])
    agent = Agent(
        model,
        ToolRegistry([Recording("edit_file")]),
        permissions=Permissions(approve_all=True),
        hooks=hooks,
    )
    await agent.run("go")
    payload = json.loads(seen.read_text())
    assert payload == {
        "session_id": "s-1",
        "transcript_path": "",
        "cwd": str(tmp_path),
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "edit_file",
        "tool_input": {"path": "a.py", "file_path": "a.py"},
        "tool_response": {"content": 'ran {"path": "a.py"}', "is_error": False},
    }


async def test_a_prompt_blocked_by_exit_2_never_reaches_the_model(tmp_path: Path) -> None:
    hooks = hooks_of(tmp_path, on("UserPromptSubmit", "echo 'no secrets in prompts' >&2; exit 2"))
    model = ScriptedProvider([])
    agent = Agent(model, ToolRegistry([]), hooks=hooks)
    outcome = await agent.run("my password is hunter2")
    assert outcome.hook_stop == "no secrets in prompts"
    assert model.calls == [] and agent.messages == []
    assert hooks.notices == [  # type: ignore[attr-defined]
        "the prompt was blocked by a hook: no secrets in prompts"
    ]


async def test_plain_stdout_of_prompt_and_session_start_hooks_joins_the_prompt(
    tmp_path: Path,
) -> None:
    hooks = hooks_of(
        tmp_path,
        {
            **on("UserPromptSubmit", "echo 'ticket ABC-1'"),
            **on("SessionStart", "echo 'on branch main'", "startup"),
        },
    )
    await hooks.session_start("startup")
    model = ScriptedProvider([reply("ok"), reply("ok")])
    agent = Agent(model, ToolRegistry([]), hooks=hooks)
    await agent.run("fix it")
    await agent.run("again")
    assert model.calls[0].messages[0].text == "fix it\n\non branch main\n\nticket ABC-1"
    assert model.calls[1].messages[-1].text == "again\n\nticket ABC-1"  # start context once


async def test_a_stop_hook_makes_the_model_go_on_but_not_a_third_time_in_a_row(
    tmp_path: Path,
) -> None:
    seen = tmp_path / "active"
    stop = script(
        tmp_path,
        "stop.sh",
        f"python3 -c 'import json,sys; print(json.load(sys.stdin)[\"stop_hook_active\"])'"
        f" >> {seen}\necho 'run the tests first' >&2\nexit 2",
    )
    hooks = hooks_of(tmp_path, on("Stop", stop))
    model = ScriptedProvider([reply("done?"), reply("tests pass"), reply("really done")])
    agent = Agent(model, ToolRegistry([]), hooks=hooks)
    outcome = await agent.run("go")
    assert outcome.text == "really done" and len(model.calls) == 3
    assert model.calls[1].messages[-1].text == "Stop hook feedback: run the tests first"
    assert seen.read_text().split() == ["False", "True", "True"]


async def test_continue_false_from_a_tool_hook_ends_the_turn_after_its_results(
    tmp_path: Path,
) -> None:
    out = {"continue": False, "stopReason": "build is red: stopping"}
    hooks = hooks_of(tmp_path, on("PostToolUse", f"cat > /dev/null; echo '{json.dumps(out)}'"))
    model = ScriptedProvider([use_tools(("shell", {"command": "make"}))])
    agent = Agent(
        model, ToolRegistry([Recording()]), permissions=Permissions(approve_all=True), hooks=hooks
    )
    outcome = await agent.run("build")
    assert outcome.hook_stop == "build is red: stopping" and len(model.calls) == 1


async def test_a_subagents_view_fires_subagent_stop_and_no_prompt_hook(tmp_path: Path) -> None:
    fired = tmp_path / "fired"
    raw = {
        **on("UserPromptSubmit", f"echo prompt >> {fired}"),
        **on("Stop", f"echo stop >> {fired}"),
        **on("SubagentStop", f"echo subagent-stop >> {fired}; echo 'check again' >&2; exit 2"),
        **on("PreToolUse", f"echo pre >> {fired}"),
    }
    hooks = hooks_of(tmp_path, raw)
    model = ScriptedProvider(
        [use_tools(("shell", {})), reply("found it"), reply("sure"), reply("really")]
    )
    child = Agent(
        model,
        ToolRegistry([Recording()]),
        permissions=Permissions(approve_all=True),
        hooks=hooks.for_subagent(),
    )
    outcome = await child.run("find the config file")
    assert outcome.text == "really"  # the third block is not obeyed
    assert fired.read_text().split() == ["pre", *["subagent-stop"] * 3]
    assert model.calls[0].messages[0].text == "find the config file"
    assert model.calls[2].messages[-1].text == "Stop hook feedback: check again"
