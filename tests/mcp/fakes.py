"""An in-memory `Transport` scripted by the test: it serves the client, adapter and pool layers.

The test gives a handler per method. A handler gets the request's params and returns the
``result``, raises `RpcError` for a JSON-RPC ``error``, returns `Raw` for any response
dict at all, or returns an awaitable (``fake.hang()`` never answers until the transport
closes). Anything else it raises reaches the caller unchanged. Every message the client
writes is recorded (``requests``, ``sent``); ``push`` plays a server-originated message.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cat_code.mcp.errors import TransportClosed
from cat_code.mcp.transport import JsonObject, MessageHandler

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
    ) -> None:
        self.protocol_version: str | None = None
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
        self.sent: list[JsonObject] = []
        self.stderr: list[str] = []
        self.started = False
        self.close_count = 0
        self._on_message: MessageHandler | None = None
        self._activity = asyncio.Event()
        self._closed = asyncio.Event()

    # -- Transport -------------------------------------------------------------------

    async def start(self, on_message: MessageHandler) -> None:
        if self.start_error is not None:
            raise self.start_error
        self._on_message = on_message
        self.started = True

    async def request(self, message: JsonObject) -> JsonObject:
        if self._closed.is_set():
            raise TransportClosed("connection closed")
        self.requests.append(message)
        self._activity.set()
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
        return {**reply, "result": outcome}

    async def send(self, message: JsonObject) -> None:
        if self._closed.is_set():
            raise TransportClosed("connection closed")
        self.sent.append(message)
        self._activity.set()

    async def close(self) -> None:
        self.close_count += 1
        self._closed.set()

    def describe(self) -> str:
        return f"fake: {self.name}"

    def diagnostics(self) -> list[str]:
        return list(self.stderr)

    # -- the test's side -------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

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
