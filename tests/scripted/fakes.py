"""An in-memory `Transport` scripted by the test: it serves the client, adapter and pool layers.

The test gives a handler per method. A handler gets the request's params and returns the
``result``, raises `RpcError` for a JSON-RPC ``error``, returns `Raw` for any response
dict at all, or returns an awaitable (``fake.hang()`` never answers until the transport
closes). Anything else it raises reaches the caller unchanged. Every message the client
writes is recorded (``requests``, ``sent``, with the context each went with in
``contexts``); ``push`` plays a server-originated message, ``lose`` a connection that
ends by itself. With ``sessions=True`` it models Streamable HTTP sessions the way the
real transport meets them: initialize's answer headers carry a new ``mcp-session-id``,
and a request carrying an id the server does not know (``expire()``) fails with HTTP 404.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cat_code.mcp.errors import HttpStatusError, TransportClosed
from cat_code.mcp.transports.base import (
    NO_CONTEXT,
    CloseHandler,
    JsonObject,
    MessageHandler,
    RequestContext,
    TransportKind,
)

Handler = Callable[[JsonObject], Any]


class RpcError(Exception):
    """Raised by a handler: the fake answers with this JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass
class Raw:
    """Returned by a handler: the whole response message, sent as it is (id filled in)."""

    response: JsonObject


def tool(name: str, **fields: Any) -> JsonObject:
    """A wire tool definition."""
    return {"name": name, "inputSchema": {"type": "object"}, **fields}


class FakeTransport:
    """A `Transport` whose server side is the test."""

    def __init__(
        self,
        handlers: dict[str, Handler] | None = None,
        *,
        version: Any = "2025-11-25",
        tools: list[JsonObject] | None = None,
        start_error: BaseException | None = None,
        name: str = "fake",
        sessions: bool = False,
    ) -> None:
        self.kind: TransportKind = "http" if sessions else "stdio"
        self.can_listen = False
        self.closed_reason: str | None = None
        self.sessions = sessions
        #: The session the server knows (with ``sessions``); None once expired.
        self.session: str | None = None
        self._session_count = 0
        self.version = version
        self.tools = list(tools or [])
        self.start_error = start_error
        self.name = name
        self.handlers: dict[str, Handler] = {
            "initialize": self._initialize,
            "tools/list": lambda params: {"tools": self.tools},
            "ping": lambda params: {},
        }
        self.handlers.update(handlers or {})
        self.requests: list[JsonObject] = []
        self.contexts: list[RequestContext] = []
        self.sent: list[JsonObject] = []
        self.hurried = 0
        self.stderr: list[str] = []
        self.started = False
        self.close_count = 0
        self.released: RequestContext | None = None
        self._on_message: MessageHandler | None = None
        self._on_close: CloseHandler | None = None
        self._activity = asyncio.Event()
        self._closed = asyncio.Event()

    # -- Transport -------------------------------------------------------------------

    async def start(self, on_message: MessageHandler, on_close: CloseHandler) -> None:
        if self.start_error is not None:
            raise self.start_error
        self._on_message = on_message
        self._on_close = on_close
        self.started = True

    async def request(
        self, message: JsonObject, context: RequestContext = NO_CONTEXT
    ) -> JsonObject:
        if self._closed.is_set():
            raise TransportClosed("connection closed")
        self.requests.append(message)
        self.contexts.append(context)
        self._activity.set()
        if self.sessions:
            self._check_session(message, context)
        handler = self.handlers.get(message["method"])
        reply: JsonObject = {"jsonrpc": "2.0", "id": message["id"]}
        if handler is None:
            return {**reply, "error": {"code": -32601, "message": "Method not found"}}
        try:
            outcome = handler(message.get("params") or {})
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except RpcError as exc:
            error = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            return {**reply, "error": error}
        if isinstance(outcome, Raw):
            return {"id": message["id"], **outcome.response}
        if self.sessions and message["method"] == "initialize" and context.on_headers:
            self._session_count += 1
            self.session = f"session-{self._session_count}"
            context.on_headers({"mcp-session-id": self.session})
        return {**reply, "result": outcome}

    def _check_session(self, message: JsonObject, context: RequestContext) -> None:
        if message["method"] == "initialize":
            return
        sent = context.headers.get("mcp-session-id")
        if sent is None:
            raise HttpStatusError("HTTP 400 to a request without a session", 400, "")
        if sent != self.session:
            raise HttpStatusError("HTTP 404 Not Found: Session not found", 404, "")

    async def send(self, message: JsonObject, context: RequestContext = NO_CONTEXT) -> None:
        if self._closed.is_set():
            raise TransportClosed("connection closed")
        self.sent.append(message)
        self._activity.set()

    async def listen(self, context: RequestContext) -> None:
        return None

    async def release(self, context: RequestContext) -> None:
        self.released = context

    async def close(self) -> None:
        self.close_count += 1
        self._closed.set()

    def hurry(self) -> None:
        self.hurried += 1

    def kill_now(self) -> None:
        self._closed.set()

    def describe(self) -> str:
        return f"fake: {self.name}"

    def diagnostics(self) -> list[str]:
        return list(self.stderr)

    # -- the test's side -------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def expire(self) -> None:
        """The server forgets its session: requests carrying it get HTTP 404."""
        self.session = None

    def lose(self, reason: str) -> None:
        """The connection ends by itself (a child exiting, a stream ending)."""
        assert self._on_close is not None, "start() first"
        self.closed_reason = reason
        self._on_close(reason)

    def push(self, message: JsonObject) -> None:
        """Deliver a server-originated request or notification to the client."""
        assert self._on_message is not None, "start() first"
        self._on_message({"jsonrpc": "2.0", **message})

    async def hang(self) -> Any:
        """Never answer; fail like a real transport once closed."""
        await self._closed.wait()
        raise TransportClosed("connection closed")

    async def wait_sent(self, predicate: Callable[[JsonObject], bool], timeout: float = 5) -> Any:
        """The first message the client sent (not a request) matching ``predicate``."""
        return await self._wait(self.sent, predicate, timeout)

    async def wait_request(self, method: str, timeout: float = 5) -> Any:
        """The first request for ``method`` the client sent."""
        return await self._wait(self.requests, lambda m: m["method"] == method, timeout)

    async def _wait(
        self, messages: list[JsonObject], predicate: Callable[[JsonObject], bool], timeout: float
    ) -> JsonObject:
        async with asyncio.timeout(timeout):
            while True:
                for message in messages:
                    if predicate(message):
                        return message
                self._activity.clear()
                await self._activity.wait()

    def methods(self) -> list[str]:
        """The methods of every request sent so far, in order."""
        return [m["method"] for m in self.requests]

    def _initialize(self, params: JsonObject) -> JsonObject:
        return {
            "protocolVersion": self.version,
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": self.name, "version": "1.0"},
        }
