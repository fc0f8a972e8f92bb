"""The three clients under test behind one small interface.

``open_stdio`` / ``open_http`` return a connected `Session` (initialized, tools listed)
with ``call``, ``call_many`` (every call in flight at once) and ``close``. A session is
opened and closed by the same task: the official SDK requires it (anyio cancel scopes),
and cat-code's design does too. ``text_of`` pulls the first text content out of a
result so the workloads can check every client got the right answer, outside the timing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol

import floor

IMPLS = ("cat_code", "sdk", "floor")


class Session(Protocol):
    async def call(self, name: str, arguments: dict[str, Any]) -> Any: ...

    async def call_many(self, name: str, arguments: Sequence[dict[str, Any]]) -> list[Any]: ...

    async def close(self) -> None: ...


# -- cat-code ---------------------------------------------------------------------------


class CatCodeSession:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self.client.call_tool(name, arguments)

    async def call_many(self, name: str, arguments: Sequence[dict[str, Any]]) -> list[Any]:
        call = self.client.call_tool
        return list(await asyncio.gather(*(call(name, a) for a in arguments)))

    async def close(self) -> None:
        await self.client.close()


async def _cat_code_open(transport: Any, expect: str | None) -> CatCodeSession:
    from cat_code.mcp.client import McpClient

    client = McpClient(transport, name="bench")
    try:
        await client.connect(30)
        await client.list_tools()
        # The era is cat-code's own choice: a wrong one would make the row meaningless.
        if expect is not None and client.session.era != expect:
            raise AssertionError(f"cat-code chose the {client.session.era} era, not {expect}")
    except BaseException:
        await client.close()
        raise
    return CatCodeSession(client)


async def cat_code_stdio(
    command: str, args: Sequence[str], *, expect: str | None = None
) -> CatCodeSession:
    from cat_code.mcp.transports.stdio import StdioTransport

    return await _cat_code_open(StdioTransport(command, args, name="bench"), expect)


async def cat_code_http(url: str, *, expect: str | None = None) -> CatCodeSession:
    from cat_code.mcp.transports.http import StreamableHttpTransport

    return await _cat_code_open(StreamableHttpTransport(url, name="bench"), expect)


# -- the official SDK -------------------------------------------------------------------


class SdkSession:
    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self.client.call_tool(name, arguments)

    async def call_many(self, name: str, arguments: Sequence[dict[str, Any]]) -> list[Any]:
        call = self.client.call_tool
        return list(await asyncio.gather(*(call(name, a) for a in arguments)))

    async def close(self) -> None:
        await self.client.__aexit__(None, None, None)


async def _sdk_open(server: Any, *, modern: bool = False) -> SdkSession:
    from mcp import Client

    # mode="legacy": the initialize handshake, as cat-code and the floor do with a
    # handshake server (the default "auto" first probes server/discover, one extra round
    # trip that would be unfair). With a modern server: the default, which speaks it.
    client = Client(server, mode="auto" if modern else "legacy")
    await client.__aenter__()
    try:
        await client.list_tools()
    except BaseException:
        await client.__aexit__(None, None, None)
        raise
    return SdkSession(client)


async def sdk_stdio(command: str, args: Sequence[str], *, modern: bool = False) -> SdkSession:
    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(command=command, args=list(args))
    return await _sdk_open(server, modern=modern)


async def sdk_http(url: str, *, large_events: bool = False, modern: bool = False) -> SdkSession:
    if not large_events:
        return await _sdk_open(url, modern=modern)
    # Its default refuses SSE events over 1 MiB; lift that for the 10 MB result.
    from mcp.client.streamable_http import streamable_http_client

    return await _sdk_open(streamable_http_client(url, max_sse_event_size=None))


# -- the floor --------------------------------------------------------------------------


class FloorStdioSession:
    def __init__(self, client: floor.FloorStdio) -> None:
        self.client = client

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self.client.call_tool(name, arguments)

    async def call_many(self, name: str, arguments: Sequence[dict[str, Any]]) -> list[Any]:
        return await self.client.call_many(name, list(arguments))

    async def close(self) -> None:
        await self.client.close()


class FloorHttpSession:
    def __init__(self, client: floor.FloorHttp, http: Any) -> None:
        self.client = client
        self.http = http

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self.client.call_tool(name, arguments)

    async def call_many(self, name: str, arguments: Sequence[dict[str, Any]]) -> list[Any]:
        call = self.client.call_tool
        return list(await asyncio.gather(*(call(name, a) for a in arguments)))

    async def close(self) -> None:
        try:
            await self.client.close()
        finally:
            await self.http.aclose()


async def floor_stdio(
    command: str, args: Sequence[str], *, modern: bool = False
) -> FloorStdioSession:
    client, _tools = await floor.FloorStdio.connect(command, list(args), modern=modern)
    return FloorStdioSession(client)


async def floor_http(url: str, *, modern: bool = False) -> FloorHttpSession:
    http = floor_http_client()
    try:
        client, _tools = await floor.FloorHttp.connect(url, http, modern=modern)
    except BaseException:
        await http.aclose()
        raise
    return FloorHttpSession(client, http)


def floor_http_client() -> Any:
    """The httpx2 client cat-code's HTTP transport makes for itself, settings and all."""
    import httpx2

    return httpx2.AsyncClient(timeout=httpx2.Timeout(30.0), follow_redirects=False)


# -- dispatch ---------------------------------------------------------------------------


def import_all() -> None:
    """Import every client's modules now, not on the first timed call."""
    import httpx2  # noqa: F401
    import mcp.client.stdio
    import mcp.client.streamable_http  # noqa: F401
    from mcp import Client  # noqa: F401

    import cat_code.host.servers.pool
    import cat_code.mcp.client
    import cat_code.mcp.transports.http
    import cat_code.mcp.transports.stdio  # noqa: F401


async def open_stdio(
    impl: str, command: str, args: Sequence[str], *, modern: bool = False
) -> Session:
    """A connected session; ``modern``: the server speaks 2026-07-28 and so does each
    client (cat-code by its own era detection, which must pick modern here)."""
    if impl == "cat_code":
        return await cat_code_stdio(command, args, expect="modern" if modern else "handshake")
    if impl == "sdk":
        return await sdk_stdio(command, args, modern=modern)
    return await floor_stdio(command, args, modern=modern)


async def open_http(
    impl: str, url: str, *, large_events: bool = False, modern: bool = False
) -> Session:
    if impl == "cat_code":
        return await cat_code_http(url, expect="modern" if modern else "handshake")
    if impl == "sdk":
        return await sdk_http(url, large_events=large_events, modern=modern)
    return await floor_http(url, modern=modern)


def text_of(impl: str, result: Any) -> str:
    """The first text content of a ``tools/call`` result, whoever parsed it."""
    if impl == "sdk":
        return str(result.content[0].text)
    return str(result["content"][0]["text"])
