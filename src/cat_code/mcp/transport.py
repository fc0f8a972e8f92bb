"""The seam between the client and the wire: a `Transport` moves JSON-RPC messages.

A transport knows JSON-RPC envelopes, not MCP meaning: it sends requests and hands back
the response with the same id, sends notifications and responses, and passes every
message the server originates (requests and notifications) to the handler given to
``start``. Handlers are plain functions called on the event loop; they must not block.
Errors are the `TransportError` family. The same seam serves the handshake era and the
stateless 2026-07-28 protocol: only the client changes what it puts in the messages.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

logger = logging.getLogger(__name__)

JsonObject = dict[str, Any]
#: Receives every server-originated message (a request or a notification).
MessageHandler = Callable[[JsonObject], None]


def ignore_message(message: JsonObject) -> None:
    """The handler a transport holds until ``start`` gives it the real one."""


def hand_up(message: JsonObject, on_message: MessageHandler, name: str) -> None:
    """Give a server-originated message to the handler; a failing handler is logged, never
    raised into the reader that found the message."""
    try:
        on_message(message)
    except Exception:
        logger.exception("%s: handler failed for %s", name, message.get("method"))


def dispatch(
    message: Any,
    pending: dict[Any, asyncio.Future[JsonObject]],
    on_message: MessageHandler,
    name: str,
) -> None:
    """Route one parsed message of a shared reader: server requests and notifications go
    up, a response resolves the waiter for its id. Anything else is logged and dropped."""
    if not isinstance(message, dict):
        logger.warning("%s: skipping a message that is not a JSON object", name)
        return
    if "method" in message:
        hand_up(message, on_message, name)
        return
    try:
        future = pending.get(message.get("id"))
    except TypeError:  # an unhashable id (an array, an object) is none of ours
        future = None
    if future is None or future.done():
        logger.debug("%s: dropping response for unknown id %r", name, message.get("id"))
        return
    future.set_result(message)


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
