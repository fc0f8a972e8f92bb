"""The seam between the client and the wire: a `Transport` moves JSON-RPC messages.

A transport knows JSON-RPC envelopes, not MCP meaning: it sends requests and hands back
the response with the same id, sends notifications and responses, and passes every
message the server originates (requests and notifications) to the handler given to
``start``. Handlers are plain functions called on the event loop; they must not block.
Errors are the `TransportError` family. The same seam serves the handshake era and the
stateless 2026-07-28 protocol: only the client changes what it puts in the messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

JsonObject = dict[str, Any]
#: Receives every server-originated message (a request or a notification).
MessageHandler = Callable[[JsonObject], None]


class Transport(Protocol):
    """What the client needs from a connection."""

    #: Set by the client after version negotiation; HTTP sends it as MCP-Protocol-Version.
    protocol_version: str | None

    async def start(self, on_message: MessageHandler) -> None:
        """Open the connection (spawn the process, prepare the HTTP client)."""

    async def request(self, message: JsonObject) -> JsonObject:
        """Send a request and return the response message (``result`` or ``error``).

        Cancelling the awaiting task abandons the request; it never leaks a waiter.
        """

    async def send(self, message: JsonObject) -> None:
        """Send a notification or a response to a server request."""

    async def close(self) -> None:
        """Close the connection and release everything it holds. Idempotent."""

    def describe(self) -> str:
        """A short human description of the target, such as ``stdio: ./server.sh``."""

    def diagnostics(self) -> list[str]:
        """Recent lines that help explain a failure (a stdio server's stderr tail)."""
