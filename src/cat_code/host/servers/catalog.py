"""What the connected servers offer besides tools — resources, templates, prompts,
skills — across servers, each entry with the name of the server it came from.

`gather` asks every chosen server at once; a server that fails its listing does not hide
the others (its reason is kept in ``failures``), and a server that does not declare the
feature is not asked at all (its client answers ``[]`` without a request). Listings are
cached in each server's client until the server says they changed, so asking again is
cheap. `UnknownServer` names the servers there are, for the error the user or model sees.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from cat_code.mcp.errors import McpClientError, describe_error

if TYPE_CHECKING:
    from cat_code.host.servers.server import McpServer

T = TypeVar("T")


class UnknownServer(McpClientError):
    """No connected server has this name; the message names those there are."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        super().__init__(
            f"no connected MCP server named {name!r} (connected: {', '.join(known) or 'none'})"
        )
        self.name = name


class UnknownSkill(McpClientError):
    """A server has no skill of this name (``candidates``: the names it has), or several
    (``ambiguous``; ``candidates``: their uris, one of which names it)."""

    def __init__(
        self, server: str, name: str, candidates: Sequence[str], *, ambiguous: bool = False
    ) -> None:
        listed = ", ".join(candidates) or "none"
        if ambiguous:
            why = f"several skills are named {name!r}; name one by its uri: {listed}"
        else:
            why = f"no skill named {name!r} (its skills: {listed})"
        super().__init__(f"MCP server '{server}': {why}")
        self.server = server
        self.name = name
        self.candidates = list(candidates)
        self.ambiguous = ambiguous


@dataclass(slots=True)
class Gathered(Generic[T]):
    """One listing across servers: ``(server, entry)`` pairs in server order, and why each
    server that failed did."""

    items: list[tuple[str, T]] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)


async def gather(
    servers: Sequence[McpServer], listing: Callable[[McpServer], Awaitable[list[T]]]
) -> Gathered[T]:
    """``listing`` of every server at once, the results in server order."""
    results = await asyncio.gather(*(listing(s) for s in servers), return_exceptions=True)
    gathered: Gathered[T] = Gathered()
    for server, result in zip(servers, results, strict=True):
        if isinstance(result, asyncio.CancelledError):
            raise result
        if isinstance(result, BaseException):
            gathered.failures[server.name] = describe_error(result)
        else:
            gathered.items.extend((server.name, item) for item in result)
    return gathered


__all__ = ["Gathered", "UnknownServer", "UnknownSkill", "gather"]
