"""``/help``: the commands, read from the registry, then the servers' prompt commands."""

from __future__ import annotations

from cat_code.repl.commands.registry import CommandContext, Outcome, Show, SlashCommand


def _help(rest: str, ctx: CommandContext) -> Outcome:
    assert ctx.commands is not None  # set by the registry that dispatched here
    text = ctx.commands.help_text()
    prompts = ctx.commands.family_help(ctx)
    return Show(f"{text}\n{prompts}" if prompts else text)


COMMANDS = (SlashCommand("/help", "show this help", _help, aliases=("/", "/?")),)
