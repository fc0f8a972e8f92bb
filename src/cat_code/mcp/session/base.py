"""What every session and its client agree on: the era names and the two protocols.

`Link` is what a session uses of its client; `ProtocolSession` is what the client needs from an
era's session. They live apart from the package's ``__init__`` so the era modules
(``handshake``, ``modern``, ``detect``) import them without importing the package that
re-exports those modules: no cycle, also not through a type-checking import.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from cat_code.mcp.errors import HttpStatusError
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


class ProtocolSession(Protocol):
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
