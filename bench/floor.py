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


def _line(message: dict[str, Any]) -> bytes:
    return _DUMPS(message).encode() + b"\n"


class FloorStdio:
    """A child process and its pipes; each call writes one line and reads one line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self._next_id = 0

    @classmethod
    async def connect(cls, command: str, args: list[str]) -> tuple[FloorStdio, Any]:
        """Spawn, initialize, and list the tools; returns the client and the tool list."""
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
        client = cls(process)
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
                "params": {"name": name, "arguments": args},
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

    def __init__(self, url: str, client: Any) -> None:
        self.url = url
        self.client = client
        self.headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        self._next_id = 0

    @classmethod
    async def connect(cls, url: str, client: Any) -> tuple[FloorHttp, Any]:
        floor = cls(url, client)
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
        if params is not None:
            message["params"] = params
        response = await self.client.post(self.url, content=_DUMPS(message), headers=self.headers)
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
