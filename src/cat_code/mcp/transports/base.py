"""The seam between the client and the wire: a `Transport` moves JSON-RPC messages.

A transport knows JSON-RPC envelopes, never an MCP method: it sends a request and hands
back the response with the same id, sends notifications (and, in the handshake era,
responses), and passes every message the server originates to the handler given to
``start``. What the client wants of one message's trip beyond the message itself — extra
HTTP headers, whether it is a long-lived stream, its deadline, a look at the answer's
headers — travels in a `RequestContext`, so the handshake era and the stateless
2026-07-28 era differ only in what the client puts there. When the connection ends by
itself (a child exits, an event stream ends, a message is too large to take) the
transport says so once, through the ``on_close`` handler, at the moment it happens.
Handlers are plain functions called on the event loop; they must not block. Errors are
the `TransportError` family (`cat_code.mcp.errors`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

logger = logging.getLogger(__name__)

JsonObject = dict[str, Any]
#: Receives every server-originated message (a request or a notification).
MessageHandler = Callable[[JsonObject], None]
#: Told, once, why a connection ended by itself (never after our own ``close``).
CloseHandler = Callable[[str], None]
TransportKind = Literal["stdio", "http", "sse"]

#: The largest single message (stdout line, JSON body, SSE event) a transport takes.
#: Above it the request (HTTP) or the connection (stdio, legacy SSE) fails with an error
#: naming the size, instead of memory growing without end.
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
#: A long-lived server stream (the handshake era's GET, 2026-07-28's subscriptions/listen)
#: that lasted this long before it ended was healthy, not a failure: a proxy's idle timeout
#: ends quiet streams, and only streams that fail fast count towards giving up.
HEALTHY_STREAM_S = 10.0

_NO_HEADERS: Mapping[str, str] = {}


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What the client wants of one message's trip, beyond the message itself."""

    #: Extra HTTP headers for this message (session, protocol version, Mcp-Method, ...).
    #: Transports without headers (stdio) ignore them.
    headers: Mapping[str, str] = field(default_factory=lambda: _NO_HEADERS)
    #: A stream the server keeps open on purpose (its own message stream, a 2026-07-28
    #: ``subscriptions/listen``): no read timeout applies and nothing waits for it to end.
    long_lived: bool = False
    #: Event-loop time (``loop.time()``) after which the caller can no longer want the
    #: answer, if it has such a time; a transport never waits (to reconnect, to resume)
    #: past it.
    deadline: float | None = None
    #: Shown the headers of every HTTP answer to this message, whatever its status,
    #: before its body is read.
    on_headers: Callable[[Mapping[str, str]], None] | None = None


#: The context of a message that needs nothing special: the hot path's default.
NO_CONTEXT = RequestContext()


def ignore_message(message: JsonObject) -> None:
    """The message handler a transport holds until ``start`` gives it the real one."""


def ignore_close(reason: str) -> None:
    """The close handler a transport holds until ``start`` gives it the real one."""


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


def size_text(n: int) -> str:
    """A byte count for an error message: ``300.0 MiB``."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"


class Transport(Protocol):
    """What the client needs from a connection: every ability, optional ones included."""

    #: ``stdio``, ``http`` (Streamable HTTP) or ``sse`` (legacy HTTP+SSE).
    @property
    def kind(self) -> TransportKind: ...

    #: Whether `listen` opens anything (Streamable HTTP's GET stream).
    @property
    def can_listen(self) -> bool: ...

    async def start(self, on_message: MessageHandler, on_close: CloseHandler) -> None:
        """Open the connection (spawn the process, prepare the HTTP client)."""

    async def request(
        self, message: JsonObject, context: RequestContext = NO_CONTEXT
    ) -> JsonObject:
        """Send a request and return the response message (``result`` or ``error``).

        Cancelling the awaiting task abandons the request; it never leaks a waiter.
        """

    async def send(self, message: JsonObject, context: RequestContext = NO_CONTEXT) -> None:
        """Send a notification or a response to a server request."""

    async def listen(self, context: RequestContext) -> None:
        """Hold the server's own message stream open (reconnecting it, bounded) and hand
        what it brings to ``on_message``; return when the server has none or ends it,
        raise a `TransportError` when it fails. Transports that cannot return at once."""

    async def release(self, context: RequestContext) -> None:
        """Tell the server the state these headers name is no longer wanted (HTTP DELETE);
        bounded, never raises. Transports without such state do nothing."""

    async def close(self) -> None:
        """Close the connection and release everything it holds. Idempotent; finishes
        even when the caller is cancelled."""

    def hurry(self) -> None:
        """Make a close in progress (or the next one) skip its grace periods."""

    def kill_now(self) -> None:
        """Last resort, synchronous: end whatever process the connection started, at once."""

    @property
    def closed_reason(self) -> str | None:
        """Why the connection ended by itself, or None while it lives (or we closed it)."""

    def describe(self) -> str:
        """A short human description of the target, such as ``stdio: ./server.sh``."""

    def diagnostics(self) -> list[str]:
        """Recent lines that help explain a failure (a stdio server's stderr tail)."""
