"""Subagents: ``/agents`` lists the definitions the model can start, with their source.

The listing is `cat_code.agent.subagents.listing`'s, the same as ``cat-code agents``; the
catalogue is the session's (read when it started), so it shows what the model was told.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from cat_code.agent.subagents.listing import describe_catalogue
from cat_code.repl.commands.registry import ReplHost, SlashCommand


@dataclass(frozen=True, slots=True)
class ListAgents:
    """``/agents``: the session's subagent definitions."""

    async def perform(self, repl: ReplHost) -> None:
        repl.console.print(Text(describe_catalogue(repl.session.subagents.catalogue)))


COMMANDS = (
    SlashCommand(
        "/agents",
        "the subagent definitions the model can start, with their source",
        lambda rest, ctx: ListAgents(),
    ),
)
