"""The floor: the least a client can do to exchange the same JSON-RPC messages.

No protocol logic at all: no timeouts, no cancellation, no validation, no id
correlation beyond reading answers in order (the bench server answers in order), no
error handling. It writes the same lines (stdio) or POSTs the same bodies with the same
``httpx2`` client (HTTP) as the real clients and parses every answer with ``json.loads``,
so whatever a real client spends above this is the price of its design. Keep it minimal:
a faster floor would be dishonest and a slower one would flatter the clients.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

#: Large enough that one 10 MB answer line fits; the floor must not fail where clients don't.
READER_LIMIT = 64 * 1024 * 1024
_DUMPS = json.JSONEncoder(separators=(",", ":")).encode

INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "floor", "version": "0"},
}
#: MCP 2026-07-28: no handshake; every request carries this in ``params._meta`` (built
#: once: a real client builds it per request, which is part of its price).
MODERN_VERSION = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "floor", "version": "0"},
}


def _params(params: dict[str, Any] | None, modern: bool) -> dict[str, Any] | None:
    if not modern:
        return params
    return {**(params or {}), "_meta": MODERN_META}


def _line(message: dict[str, Any]) -> bytes:
    return _DUMPS(message).encode() + b"\n"


class FloorStdio:
    """A child process and its pipes; each call writes one line and reads one line."""

    def __init__(self, process: asyncio.subprocess.Process, modern: bool = False) -> None:
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.modern = modern
        self._next_id = 0

    @classmethod
    async def connect(
        cls, command: str, args: list[str], *, modern: bool = False
    ) -> tuple[FloorStdio, Any]:
        """Spawn, initialize (``modern``: discover), and list the tools; returns the client
        and the tool list."""
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=READER_LIMIT,
            # Measured: 20 spawns at once take ~40% less wall time in their own sessions
            # (so cat-code's choice); a floor slower than it must be would flatter clients.
            start_new_session=True,
        )
        client = cls(process, modern)
        if modern:
            await client.request("server/discover", None)
        else:
            await client.request("initialize", INITIALIZE)
            client.notify("notifications/initialized")
        tools = await client.request("tools/list", None)
        return client, tools

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def notify(self, method: str) -> None:
        assert self.stdin is not None
        self.stdin.write(_line({"jsonrpc": "2.0", "method": method}))

    async def request(self, method: str, params: dict[str, Any] | None) -> Any:
        assert self.stdin is not None and self.stdout is not None
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id(), "method": method}
        params = _params(params, self.modern)
        if params is not None:
            message["params"] = params
        self.stdin.write(_line(message))
        return json.loads(await self.stdout.readline())["result"]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self.request("tools/call", {"name": name, "arguments": arguments})

    async def call_many(self, name: str, arguments: list[dict[str, Any]]) -> list[Any]:
        """Every call written at once, then every answer read: all of them in flight."""
        assert self.stdin is not None and self.stdout is not None
        for args in arguments:
            message = {
                "jsonrpc": "2.0",
                "id": self._id(),
                "method": "tools/call",
                "params": _params({"name": name, "arguments": args}, self.modern),
            }
            self.stdin.write(_line(message))
        readline = self.stdout.readline
        return [json.loads(await readline())["result"] for _ in arguments]

    async def close(self) -> None:
        assert self.stdin is not None
        self.stdin.close()
        await self.process.wait()


class FloorHttp:
    """One ``httpx2.AsyncClient``; each call POSTs one body and parses the one answer."""

    def __init__(self, url: str, client: Any, modern: bool = False) -> None:
        self.url = url
        self.client = client
        self.modern = modern
        self.headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        self._next_id = 0

    @classmethod
    async def connect(cls, url: str, client: Any, *, modern: bool = False) -> tuple[FloorHttp, Any]:
        floor = cls(url, client, modern)
        if modern:
            # No session: the version header on every POST, the method (and name) too.
            floor.headers["mcp-protocol-version"] = MODERN_VERSION
            await floor.request("server/discover", None)
            return floor, await floor.request("tools/list", None)
        response = await client.post(
            url,
            content=_DUMPS(
                {"jsonrpc": "2.0", "id": floor._id(), "method": "initialize", "params": INITIALIZE}
            ),
            headers=floor.headers,
        )
        result = _parse(response)
        session = response.headers.get("mcp-session-id")
        if session:
            floor.headers["mcp-session-id"] = session
        floor.headers["mcp-protocol-version"] = result["protocolVersion"]
        await client.post(
            url,
            content=_DUMPS({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            headers=floor.headers,
        )
        tools = await floor.request("tools/list", None)
        return floor, tools

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def request(self, method: str, params: dict[str, Any] | None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id(), "method": method}
        headers = self.headers
        if self.modern:
            headers = {**headers, "mcp-method": method}
            if params is not None and "name" in params:
                headers["mcp-name"] = params["name"]
            params = _params(params, True)
        if params is not None:
            message["params"] = params
        response = await self.client.post(self.url, content=_DUMPS(message), headers=headers)
        return _parse(response)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self.request("tools/call", {"name": name, "arguments": arguments})

    async def close(self) -> None:
        if "mcp-session-id" in self.headers:
            await self.client.delete(self.url, headers=self.headers)


def _parse(response: Any) -> Any:
    """The result of a JSON answer or of the first ``data:`` event of an SSE answer."""
    body = response.content
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        start = body.index(b"data:") + 5
        body = body[start : body.index(b"\n", start)]
    return json.loads(body)["result"]
