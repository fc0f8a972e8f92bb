"""``/hooks``: what the line means (the handler is pure: no terminal, no files)."""

from __future__ import annotations

from cat_code.host.config.trust import TrustDecision
from cat_code.repl.commands import CommandContext, Show, complete, handle_command
from cat_code.repl.commands.hooks import DecideHooks, ListHooks
from cat_code.tools.registry import ToolRegistry


def ctx() -> CommandContext:
    return CommandContext(registry=ToolRegistry())


def test_hooks_alone_lists_them_and_approve_or_reject_decides_the_projects() -> None:
    assert handle_command("/hooks", ctx()) == ListHooks()
    assert handle_command("/hooks approve", ctx()) == DecideHooks(TrustDecision.APPROVED)
    assert handle_command("/hooks reject", ctx()) == DecideHooks(TrustDecision.REJECTED)


def test_an_unknown_hooks_subcommand_says_what_there_is() -> None:
    outcome = handle_command("/hooks run", ctx())
    assert isinstance(outcome, Show) and outcome.kind == "error"
    assert "/hooks approve" in outcome.text


def test_tab_completes_the_hooks_subcommands() -> None:
    assert complete("/hooks a", ctx()) == ["approve"]
    assert "/hooks" in complete("/hoo", ctx())
