"""``/plan`` and ``/rewind`` as declared commands, and the plan question's answers."""

from __future__ import annotations

from cat_code.agent.permission_modes import PermissionMode
from cat_code.repl.commands import CommandContext, Show, complete, handle_command
from cat_code.repl.commands.rewind import Rewind, SetMode
from cat_code.repl.modes import parse_plan_answer, show_mode
from cat_code.tools.registry import ToolRegistry


def context() -> CommandContext:
    return CommandContext(registry=ToolRegistry([]))


def test_plan_turns_plan_mode_on_and_takes_no_argument() -> None:
    assert handle_command("/plan", context()) == SetMode(PermissionMode.PLAN)
    refused = handle_command("/plan now", context())
    assert isinstance(refused, Show) and refused.kind == "error"


def test_rewind_is_an_effect_and_both_commands_are_in_help_and_tab() -> None:
    assert isinstance(handle_command("/rewind", context()), Rewind)
    shown = handle_command("/help", context())
    assert isinstance(shown, Show) and "/rewind" in shown.text and "/plan" in shown.text
    assert "/rewind" in complete("/rew", context())


def test_the_plan_question_takes_yes_accept_edits_or_no() -> None:
    assert parse_plan_answer("y") is PermissionMode.DEFAULT
    assert parse_plan_answer(" A ") is PermissionMode.ACCEPT_EDITS
    assert parse_plan_answer("no") is False
    assert parse_plan_answer("maybe") is None
    assert "plan mode on" in show_mode(PermissionMode.PLAN)
