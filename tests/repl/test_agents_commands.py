"""``/agents``: declared in the registry, listed by /help, and it lists the definitions."""

from __future__ import annotations

from cat_code.repl.commands import CommandContext, Show, handle_command, help_text
from cat_code.repl.commands.agents import ListAgents
from cat_code.tools.registry import ToolRegistry


def test_agents_is_a_command_that_help_lists_and_tab_completes() -> None:
    ctx = CommandContext(registry=ToolRegistry([]))

    assert isinstance(handle_command("/agents", ctx), ListAgents)
    assert "/agents" in help_text()
    from cat_code.repl.commands import complete

    assert "/agents" in complete("/age", ctx)
    guess = handle_command("/agent", ctx)
    assert isinstance(guess, Show) and "did you mean /agents?" in guess.text
