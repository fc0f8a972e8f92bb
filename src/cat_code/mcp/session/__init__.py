"""Sessions: what one protocol era keeps for a connection, on the client's side.

Two eras sit side by side on the same era-neutral transports: `HandshakeSession`
(``handshake``: 2024-11-05 … 2025-11-25, ``initialize`` and, over HTTP, a session id) and
`StatelessSession` (``modern``: 2026-07-28, no handshake, every request self-describing).
`detect` picks one per server — a pinned ``protocolVersion``, a remembered verdict, or a
bounded ``server/discover`` probe. The client asks its session only to decorate the next
request (`Session.prepare`), which tools it can call, and whether an error means the
session is gone; the retries a modern error asks for are the client's.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from cat_code.mcp.errors import HttpStatusError
from cat_code.mcp.session.handshake import CLIENT_INFO, HandshakeSession
from cat_code.mcp.session.modern import StatelessSession
from cat_code.mcp.transports.base import JsonObject, RequestContext, Transport

Era = Literal["handshake", "modern"]


class Link(Protocol):
    """What a session uses of its client."""

    name: str

    @property
    def transport(self) -> Transport: ...

    async def exchange(self, method: str, params: JsonObject, context: RequestContext) -> Any:
        """One request with no timeout or renewal of its own; its result."""

    async def notify(self, method: str, context: RequestContext) -> None:
        """One notification."""

    async def switch_transport(self, transport: Transport) -> None:
        """Close the current transport and start ``transport`` in its place."""

    def renew_soon(self) -> None:
        """Start renewing the session in the background (unless a renewal is under way)."""


class Session(Protocol):
    """What the client needs from an era's session."""

    @property
    def era(self) -> Era: ...

    version: str | None
    server_info: JsonObject
    server_capabilities: JsonObject
    instructions: str | None
    #: What every request after opening carries, before `prepare` (HTTP headers of the era).
    context: RequestContext

    async def open(self, link: Link, capabilities: JsonObject) -> None:
        """Make the connection usable (a handshake, or none at all)."""

    def prepare(
        self, method: str, params: JsonObject | None
    ) -> tuple[JsonObject | None, RequestContext]:
        """The params and context one request goes with in this era."""

    def accept_tools(self, tools: list[JsonObject]) -> list[JsonObject]:
        """The listed tools this client can call in this era (others logged and left out)."""

    def expired(self, exc: HttpStatusError, sent: RequestContext) -> bool:
        """Whether ``exc``, answering a request sent with ``sent``, means: renew, then retry."""

    async def renew(self, link: Link, capabilities: JsonObject) -> None:
        """Replace an expired session."""

    async def close(self, link: Link) -> None:
        """Tell the server we are done (bounded, never raises for the server's sake)."""


__all__ = [
    "CLIENT_INFO",
    "Era",
    "HandshakeSession",
    "Link",
    "Session",
    "StatelessSession",
]
