"""The legacy HTTP+SSE transport (2024-11-05) and the automatic fallback to it.

Real legacy servers: the `mcp` SDK server's ``sse`` mode and ``server-everything sse``.
A scripted peer (`LegacyPeer`) breaks its stream or names a foreign endpoint on demand.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.http_peers import (
    ECHO_TOOL,
    HttpPeer,
    McpPeer,
    Reply,
    Seen,
    everything_command,
    free_port,
    node_available,
    sdk_command,
    start_processes,
    stop,
    wait_for_port,
)

from cat_code.host.config.load import HttpServerConfig, McpConfig, parse_entry
from cat_code.host.servers.connect import default_transport, legacy_fallback
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.server import ServerState
from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import ConnectError, HttpStatusError, ProtocolError, TransportClosed
from cat_code.mcp.transports.http import StreamableHttpTransport
from cat_code.mcp.transports.sse import LegacySseTransport

SOURCE = Path("mcp.json")
Connect = Callable[..., Awaitable[McpClient]]


@pytest.fixture
async def connect() -> AsyncIterator[Connect]:
    clients: list[McpClient] = []

    async def make(transport: Any, **kwargs: Any) -> McpClient:
        client = McpClient(transport, name="test", request_timeout=10, **kwargs)
        clients.append(client)
        await client.connect(timeout=15)
        return client

    yield make
    for client in clients:
        await client.close()


@pytest.fixture(scope="module")
def legacy_urls() -> Iterator[dict[str, str]]:
    """Legacy servers: the SDK's ``sse`` mode, and server-everything's when node is there."""
    specs: dict[str, tuple[list[str], dict[str, str]]] = {}
    ports = {"sdk": free_port()}
    specs["sdk"] = (sdk_command(ports["sdk"], "legacy"), {})
    if node_available():
        ports["everything"] = free_port()
        specs["everything"] = (everything_command("sse"), {"PORT": str(ports["everything"])})
    processes = start_processes(specs)
    try:
        for key, port in ports.items():
            wait_for_port(port, processes[key])
        yield {key: f"http://127.0.0.1:{port}/sse" for key, port in ports.items()}
    finally:
        for process in processes.values():
            stop(process)


def typeless(url: str) -> dict[str, Any]:
    """What the pool gives a client for a ``url`` entry without a type: Streamable HTTP,
    and the legacy transport to fall back to."""
    return {
        "transport": StreamableHttpTransport(url),
        "fallback": lambda: LegacySseTransport(url),
    }


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def legacy(urls: dict[str, str], key: str) -> str:
    if key not in urls:
        pytest.skip("node or @modelcontextprotocol/server-everything missing (run npm ci)")
    return urls[key]


# -- real legacy servers -----------------------------------------------------------------


@pytest.mark.parametrize("key", ["sdk", "everything"])
async def test_an_explicit_sse_entry_talks_to_a_legacy_server(
    connect: Connect, legacy_urls: dict[str, str], key: str
) -> None:
    url = legacy(legacy_urls, key)
    client = await connect(LegacySseTransport(url, headers={"X-Api-Key": "k"}))
    names = {t["name"] for t in await client.list_tools()}
    assert "echo" in names
    args = {"text": "hi"} if key == "sdk" else {"message": "hi"}
    assert text_of(await client.call_tool("echo", args)).lower() == "echo: hi"
    assert client.transport.describe() == f"sse: {url}"


async def test_elicitation_arrives_on_the_legacy_stream_and_is_answered_by_post(
    connect: Connect, legacy_urls: dict[str, str]
) -> None:
    async def accept(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Lin", "age": 9}}

    client = await connect(LegacySseTransport(legacy_urls["sdk"]), elicitation_handler=accept)
    assert text_of(await client.call_tool("ask", {})) == "hello Lin, 9"


@pytest.mark.parametrize("key", ["sdk", "everything"])
async def test_a_url_entry_without_a_type_falls_back_to_the_legacy_transport(
    legacy_urls: dict[str, str], key: str
) -> None:
    url = legacy(legacy_urls, key)
    entry = parse_entry("old", {"url": url}, source=SOURCE)
    assert isinstance(entry, HttpServerConfig)
    assert entry.type == "http" and entry.legacy_fallback
    async with McpPool(McpConfig(servers=[entry])) as pool:
        await pool.connect_all()
        (status,) = pool.status()
        assert status.state == "CONNECTED", status.error
        assert status.tools > 0
        assert status.transport == "sse"
        server = pool.servers[0]
        assert server.client is not None
        transport = server.client.transport
        assert isinstance(transport, LegacySseTransport)
        assert server.client.session.fell_back
        assert transport.describe() == f"sse: {url}"
        tool = pool.find_tool("mcp__old__echo")
        assert tool is not None


async def test_an_explicit_http_entry_does_not_fall_back(legacy_urls: dict[str, str]) -> None:
    entry = parse_entry("old", {"type": "http", "url": legacy_urls["sdk"]}, source=SOURCE)
    assert isinstance(entry, HttpServerConfig) and not entry.legacy_fallback
    async with McpPool(McpConfig(servers=[entry])) as pool:
        await pool.connect_all()
        (status,) = pool.status()
    assert status.state == "FAILED"
    assert "HTTP 405" in (status.error or "")


def test_only_type_less_url_entries_may_fall_back() -> None:
    url = "http://127.0.0.1:1/mcp"
    entries = [
        parse_entry("a", {"url": url}, source=SOURCE),
        parse_entry("b", {"type": "http", "url": url}, source=SOURCE),
        parse_entry("c", {"type": "sse", "url": url}, source=SOURCE),
    ]
    kinds = [default_transport(e).kind for e in entries]
    assert kinds == ["http", "http", "sse"]
    fallbacks = [legacy_fallback(e) for e in entries]
    assert fallbacks[1:] == [None, None]
    fallback = fallbacks[0]
    assert fallback is not None and fallback().kind == "sse"


# -- fallback edge cases (scripted peers) --------------------------------------------------


class StatusOnlyPeer(HttpPeer):
    """Answers every request with one status."""

    def __init__(self, status: int) -> None:
        super().__init__()
        self.status = status

    async def handle(self, seen: Seen, reply: Reply) -> None:
        await reply.send(self.status, b"no MCP here", content_type="text/plain")


async def test_when_the_fallback_fails_too_the_error_names_both_attempts(
    connect: Connect,
) -> None:
    async with StatusOnlyPeer(404) as peer:
        with pytest.raises(ConnectError) as caught:
            await connect(**typeless(peer.url))
    text = str(caught.value)
    assert "HTTP 404 Not Found to initialize" in text
    assert "the legacy HTTP+SSE transport failed too: HTTP 404" in text
    # The era probe, initialize, then the legacy transport's GET.
    assert [s.method for s in peer.seen] == ["POST", "POST", "GET"]


async def test_a_500_to_initialize_does_not_trigger_the_fallback(connect: Connect) -> None:
    async with StatusOnlyPeer(500) as peer:
        with pytest.raises(HttpStatusError, match="HTTP 500"):
            await connect(**typeless(peer.url))
    assert [s.method for s in peer.seen] == ["POST", "POST"]  # the era probe, initialize


async def test_a_streamable_http_server_is_used_as_is_by_the_fallback_transport(
    connect: Connect,
) -> None:
    async with McpPeer() as peer:
        client = await connect(**typeless(peer.url))
        assert text_of(await client.call_tool("echo", {"text": "new"})) == "echo: new"
        assert not client.session.fell_back
        assert client.transport.describe() == f"http: {peer.url}"


class LegacyPeer(HttpPeer):
    """A scripted 2024-11-05 server: GET /sse names /messages; answers go on the stream."""

    def __init__(
        self, *, endpoint: str = "/messages?session=abc", break_on: str = "", bom: bool = False
    ) -> None:
        super().__init__()
        self.endpoint = endpoint
        self.bom = bom
        self.break_on = break_on
        self.stream: Reply | None = None
        self.stream_lost = asyncio.Event()

    async def handle(self, seen: Seen, reply: Reply) -> None:
        if seen.method == "GET":
            await reply.open_sse()
            if self.bom:
                await reply.chunk("\ufeff".encode())
            await reply.event(self.endpoint, event="endpoint")
            self.stream = reply
            try:
                await self.stream_lost.wait()
            finally:
                await reply.abort()
            return
        message = seen.json
        await reply.send(202, b"Accepted")
        if message.get("method") == self.break_on:
            self.stream_lost.set()
            return
        if "id" in message and "method" in message:
            assert self.stream is not None
            result: Any = {}
            if message["method"] == "initialize":
                result = {
                    "protocolVersion": "2024-11-05",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "legacy-peer", "version": "1"},
                }
            elif message["method"] == "tools/list":
                result = {"tools": [ECHO_TOOL]}
            response = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            await self.stream.event(json.dumps(response), event="message")


async def test_an_endpoint_event_behind_a_byte_order_mark_is_found(connect: Connect) -> None:
    async with LegacyPeer(bom=True) as peer:
        client = await connect(LegacySseTransport(peer.url.replace("/mcp", "/sse")))
        assert [t["name"] for t in await client.list_tools()] == ["echo"]


async def test_a_legacy_stream_that_dies_fails_pending_and_later_calls_at_once(
    connect: Connect,
) -> None:
    async with LegacyPeer(break_on="tools/call") as peer:
        client = await connect(LegacySseTransport(peer.url.replace("/mcp", "/sse")))
        assert client.protocol_version == "2024-11-05"
        assert [t["name"] for t in await client.list_tools()] == ["echo"]
        with pytest.raises(TransportClosed, match="event stream"):
            await client.call_tool("echo", {})
        with pytest.raises(TransportClosed):
            await client.list_tools(refresh=True)
    posts = [s for s in peer.seen if s.method == "POST"]
    assert all(s.path == "/messages?session=abc" for s in posts)


async def test_a_legacy_stream_that_dies_while_idle_shows_the_server_failed(
    legacy_urls: dict[str, str],
) -> None:
    async with LegacyPeer() as peer:
        entry = parse_entry("old", {"type": "sse", "url": peer.url.replace("/mcp", "/sse")},
                            source=SOURCE)  # fmt: skip
        async with McpPool(McpConfig(servers=[entry])) as pool:
            await pool.connect_all()
            assert pool.status()[0].state == "CONNECTED"
            peer.stream_lost.set()
            server = pool.servers[0]
            async with asyncio.timeout(5):  # told by the transport; no status read needed
                while server.state is not ServerState.FAILED:
                    await asyncio.sleep(0.01)
            (status,) = pool.status()
            assert status.state == "FAILED"
            assert "event stream" in (status.error or "")


async def test_an_endpoint_on_another_origin_is_refused(connect: Connect) -> None:
    async with LegacyPeer(endpoint="http://localhost:1/steal") as peer:
        with pytest.raises(ProtocolError, match="not on the origin"):
            await connect(LegacySseTransport(peer.url, headers={"Authorization": "Bearer x"}))
    assert [s.method for s in peer.seen] == ["GET"]


async def test_a_get_that_is_not_an_event_stream_fails_clearly(connect: Connect) -> None:
    async with StatusOnlyPeer(200) as peer:
        with pytest.raises(HttpStatusError, match=r"HTTP 200 to the event-stream GET .*text/plain"):
            await connect(LegacySseTransport(peer.url))


@pytest.mark.parametrize("kind", [LegacySseTransport, StreamableHttpTransport])
def test_a_url_httpx_cannot_use_fails_naming_the_url(kind: Any) -> None:
    with pytest.raises(ConnectError, match="invalid URL"):
        kind("http://\x00/mcp")
