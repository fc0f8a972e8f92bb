"""Reading what a hook said (exit code, JSON on stdout) and merging several hooks' verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cat_code.agent.hooks import HookCommand, HookEvent, HookRun, HookScope, merge, read_run


def run(
    event: HookEvent, code: int | None, stdout: Any = "", stderr: str = "", **kw: Any
) -> HookRun:
    hook = HookCommand(event, "", "hook.sh", 60.0, Path("s.json"), HookScope.USER)
    text = stdout if isinstance(stdout, str) else json.dumps(stdout)
    return HookRun(hook, code, text, stderr, **kw)


def test_exit_2_blocks_with_stderr_as_the_reason() -> None:
    verdict = read_run(run(HookEvent.PRE_TOOL_USE, 2, stderr="no rm -rf here\n"))
    assert verdict.blocked and verdict.reason == "no rm -rf here"


def test_exit_1_is_a_non_blocking_error_shown_to_the_user() -> None:
    verdict = read_run(run(HookEvent.PRE_TOOL_USE, 1, stderr="oops\nreally oops\n"))
    assert not verdict.blocked and verdict.permission is None
    assert verdict.notices == ["PreToolUse hook 'hook.sh' failed with exit 1: really oops"]


def test_a_timeout_is_a_non_blocking_error() -> None:
    verdict = read_run(run(HookEvent.PRE_TOOL_USE, None, timed_out=True))
    assert not verdict.blocked
    assert verdict.notices == ["PreToolUse hook 'hook.sh' timed out after 60 s; it was ended"]


def test_json_output_carries_the_permission_decision_input_context_and_message() -> None:
    out = {
        "systemMessage": "checked",
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": "looks risky",
            "updatedInput": {"command": "ls"},
            "additionalContext": "the repo is read-only today",
        },
    }
    verdict = read_run(run(HookEvent.PRE_TOOL_USE, 0, out))
    assert (verdict.permission, verdict.permission_reason) == ("ask", "looks risky")
    assert verdict.updated_input == {"command": "ls"}
    assert verdict.context == ["the repo is read-only today"]
    assert verdict.notices == ["checked"]


def test_decision_block_and_continue_false_are_read() -> None:
    out = {"decision": "block", "reason": "tests fail", "continue": False, "stopReason": "halt"}
    verdict = read_run(run(HookEvent.STOP, 0, out))
    assert verdict.blocked and verdict.reason == "tests fail"
    assert verdict.stop_reason == "halt"


def test_plain_stdout_is_context_only_for_prompt_submit_and_session_start() -> None:
    assert read_run(run(HookEvent.USER_PROMPT_SUBMIT, 0, "today is Tuesday\n")).context == [
        "today is Tuesday"
    ]
    assert read_run(run(HookEvent.SESSION_START, 0, "branch main")).context == ["branch main"]
    assert read_run(run(HookEvent.PRE_TOOL_USE, 0, "just talking")).context == []


def test_a_permission_decision_counts_only_for_pre_tool_use() -> None:
    out = {"hookSpecificOutput": {"permissionDecision": "deny"}}
    assert read_run(run(HookEvent.POST_TOOL_USE, 0, out)).permission is None


def test_deny_wins_over_ask_over_allow_whatever_the_order() -> None:
    def said(decision: str) -> Any:
        out = {"hookSpecificOutput": {"permissionDecision": decision,
                                      "permissionDecisionReason": decision}}  # fmt: skip
        return read_run(run(HookEvent.PRE_TOOL_USE, 0, out))

    assert merge([said("allow"), said("deny"), said("ask")]).permission == "deny"
    assert merge([said("ask"), said("allow")]).permission == "ask"
    assert merge([said("allow")]).permission_reason == "allow"


def test_one_block_among_several_hooks_blocks_and_every_reason_is_kept() -> None:
    verdict = merge(
        [
            read_run(run(HookEvent.STOP, 0, "")),
            read_run(run(HookEvent.STOP, 2, stderr="a")),
            read_run(run(HookEvent.STOP, 2, stderr="b")),
        ]
    )
    assert verdict.blocked and verdict.reason == "a\nb" and verdict.ran == 3
