"""``/mcp resources``, ``/mcp prompts``, ``/mcp skills`` and the servers' prompt commands
(``/mcp__server__prompt``, a `CommandFamily`: they come and go with the servers).

The parsing and the effects live in `cat_code.repl.prompt_commands`; here they are declared.
"""

from __future__ import annotations

from collections.abc import Callable

from cat_code.repl import prompt_commands
from cat_code.repl.commands.mcp import server_names, unknown_server
from cat_code.repl.commands.registry import (
    CommandContext,
    CommandFamily,
    Outcome,
    Show,
    SlashCommand,
    only_argument,
)
from cat_code.repl.prompt_commands import ListPrompts, ListResources, ListSkills


def _listing(
    kind: Callable[[str | None], ListResources | ListPrompts | ListSkills],
) -> Callable[[str, CommandContext], Outcome]:
    def handler(rest: str, ctx: CommandContext) -> Outcome:
        if rest and (error := unknown_server(rest, ctx)) is not None:
            return error
        return kind(rest or None)

    return handler


def _run_prompt(word: str, rest: str, ctx: CommandContext) -> Outcome:
    run = prompt_commands.prompt_command(word, rest, ctx)
    return Show(run, "error") if isinstance(run, str) else run


PROMPT_COMMANDS = CommandFamily(
    prefix=prompt_commands.PREFIX,
    handler=_run_prompt,
    names=prompt_commands.complete_command,
    help=prompt_commands.help_lines,
)

_servers = only_argument(server_names)
COMMANDS = (
    SlashCommand("/mcp resources", "the resources of every MCP server; @server:uri attaches one",
                 _listing(ListResources), args="[SERVER]", complete=_servers),
    SlashCommand("/mcp prompts", "the prompts of every MCP server, as /mcp__server__prompt",
                 _listing(ListPrompts), args="[SERVER]", complete=_servers),
    SlashCommand("/mcp skills", "the skills of every MCP server (the model loads them)",
                 _listing(ListSkills), args="[SERVER]", complete=_servers),
)  # fmt: skip
