"""Which tool calls may run: read-only tools freely, the rest with the user's approval.

Order of the rules: a read-only tool runs; ``--yes`` approves everything; an
``--allow-tool`` glob matching the registered name approves; an earlier "always" answer
for the tool or for its MCP server approves; otherwise the asker (the REPL's question)
decides, and with no asker (one-shot mode) the call is refused. A refusal is never an
exception: the loop turns it into an error result the model reads, worded so the model
knows why and what the user can do.
"""

from __future__ import annotations

import enum
import fnmatch
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from cat_code.tools.base import Tool

logger = logging.getLogger(__name__)


class Answer(enum.Enum):
    """The user's answer to "run this tool?"."""

    YES = "yes"
    NO = "no"
    ALWAYS_TOOL = "always_tool"
    ALWAYS_SERVER = "always_server"


#: Asks the user about one call. Cancelling it (Ctrl-C) cancels the turn.
Asker = Callable[[Tool, dict[str, Any]], Awaitable[Answer]]


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    #: Why: shown in logs when allowed, sent to the model when refused.
    reason: str


def server_of(tool: Tool) -> str | None:
    """The MCP server a tool belongs to, or None for a built-in tool."""
    return tool.owner.removeprefix("mcp:") if tool.owner.startswith("mcp:") else None


class Permissions:
    """The approval rules of one session, including the "always" answers given so far."""

    def __init__(
        self,
        *,
        approve_all: bool = False,
        allow_patterns: Iterable[str] = (),
        asker: Asker | None = None,
    ) -> None:
        self.approve_all = approve_all
        self.allow_patterns = list(allow_patterns)
        self.asker = asker
        self.always_tools: set[str] = set()
        self.always_servers: set[str] = set()

    def standing_decision(self, tool: Tool) -> Decision | None:
        """The decision the rules make without asking, or None when the user must be asked."""
        if tool.read_only:
            return Decision(True, "read-only")
        if self.approve_all:
            return Decision(True, "--yes")
        for pattern in self.allow_patterns:
            if fnmatch.fnmatchcase(tool.name, pattern):
                return Decision(True, f"--allow-tool {pattern}")
        if tool.name in self.always_tools:
            return Decision(True, "always allowed (tool)")
        server = server_of(tool)
        if server is not None and server in self.always_servers:
            return Decision(True, f"always allowed (server {server})")
        return None

    async def authorize(self, tool: Tool, arguments: dict[str, Any]) -> Decision:
        """Decide one call, asking the user when the rules do not settle it."""
        decision = self.standing_decision(tool)
        if decision is not None:
            return decision
        if self.asker is None:
            return Decision(
                False,
                f"Error: '{tool.name}' needs the user's approval, and this non-interactive "
                f"session cannot ask. The user can allow it with --yes or "
                f"--allow-tool '{tool.name}'.",
            )
        answer = await self.asker(tool, arguments)
        if answer is Answer.ALWAYS_TOOL:
            self.always_tools.add(tool.name)
        elif answer is Answer.ALWAYS_SERVER:
            server = server_of(tool)
            if server is not None:
                self.always_servers.add(server)
            else:
                self.always_tools.add(tool.name)
        if answer is Answer.NO:
            return Decision(
                False,
                f"Error: the user refused to run '{tool.name}'. Do not retry the same call; "
                "continue without it or ask the user what to do instead.",
            )
        logger.debug("%s approved: %s", tool.name, answer.value)
        return Decision(True, answer.value)
