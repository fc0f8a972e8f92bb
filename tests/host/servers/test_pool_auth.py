"""`McpPool` and sign-in: NEEDS_LOGIN, who gets OAuth, the auth's lifetime, `reconnect`.

A real Streamable HTTP peer on 127.0.0.1; the OAuth itself is a stand-in ``httpx2.Auth``
(the pool's `auth_factory` seam), so these tests hold without the OAuth engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path

import httpx2
from scripted.http_peers import McpPeer, Reply, Seen

from cat_code.host.config.load import HttpServerConfig, McpConfig, parse_entry
from cat_code.host.servers.connect import default_auth
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.server import ServerState
from cat_code.host.status import format_status
from cat_code.mcp.auth.provider import McpAuth
from cat_code.mcp.auth.store import FileTokenStore, MemoryTokenStore
from cat_code.mcp.auth.types import NeedsLogin, OAuthSettings
from cat_code.tools.registry import ToolRegistry

SOURCE = Path("x.json")


class StandInAuth(httpx2.Auth):
    """Signed in or not, as the test says; counts closes."""

    def __init__(self, signed_in: bool) -> None:
        self.signed_in = signed_in
        self.closed = 0

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if not self.signed_in:
            raise NeedsLogin("linear needs a sign-in")
        request.headers["authorization"] = "Bearer stand-in"
        yield request

    async def aclose(self) -> None:
        self.closed += 1


class GuardedPeer(McpPeer):
    """Answers only requests carrying the stand-in bearer."""

    async def handle(self, seen: Seen, reply: Reply) -> None:
        if seen.headers.get("authorization") != "Bearer stand-in":
            await reply.send(401)
            return
        await super().handle(seen, reply)


def _entry(url: str, **fields: object) -> HttpServerConfig:
    entry = parse_entry("linear", {"type": "http", "url": url, **fields}, source=SOURCE)
    assert isinstance(entry, HttpServerConfig)
    return entry


async def test_a_server_whose_sign_in_needs_a_person_is_needs_login() -> None:
    auths: list[StandInAuth] = []

    def factory(config: HttpServerConfig) -> McpAuth:
        auths.append(StandInAuth(signed_in=False))
        return auths[-1]  # type: ignore[return-value]

    async with GuardedPeer() as peer:
        pool = McpPool(McpConfig(servers=[_entry(peer.url)]), auth_factory=factory)
        async with pool:
            async with asyncio.timeout(10):
                await pool.connect_all()
            (status,) = pool.status()
            assert status.state is ServerState.NEEDS_LOGIN
            assert status.error == "run: cat-code mcp login linear"
            assert status.to_json()["state"] == "NEEDS_LOGIN"
            assert not pool.all_connected
            assert format_status([status]) == (
                "MCP servers:\n"
                f"  linear  NEEDS_LOGIN  (http: {peer.url}) — run: cat-code mcp login linear"
            )
        assert pool.status()[0].state is ServerState.NEEDS_LOGIN  # closing keeps it
        assert [a.closed for a in auths] == [1]


async def test_reconnect_after_a_sign_in_brings_the_tools_in_without_a_restart() -> None:
    auths: list[StandInAuth] = []
    signed_in = False

    def factory(config: HttpServerConfig) -> McpAuth:
        auths.append(StandInAuth(signed_in))
        return auths[-1]  # type: ignore[return-value]

    async with GuardedPeer() as peer:
        registry = ToolRegistry()
        pool = McpPool(McpConfig(servers=[_entry(peer.url)]), auth_factory=factory)
        async with pool:
            async with asyncio.timeout(10):
                await pool.connect_all()
                pool.register_into(registry)
                assert registry.names() == []
                signed_in = True  # what `cat-code mcp login` did meanwhile
                server = await pool.reconnect("linear")
            assert server.state is ServerState.CONNECTED
            assert pool.status()[0].state is ServerState.CONNECTED
            assert registry.names() == ["mcp__linear__echo"]
            tool = registry.get("mcp__linear__echo")
            assert tool is not None
            result = await tool.execute({"text": "hi"})
            assert result.content == "echo: hi"
            # Again, while connected: the old connection closes, the name stays.
            async with asyncio.timeout(10):
                await pool.reconnect("linear")
            assert registry.names() == ["mcp__linear__echo"]
            assert auths[1].closed == 1
        assert [a.closed for a in auths] == [1, 1, 1]


async def test_an_entry_with_its_own_authorization_header_never_starts_oauth() -> None:
    own = _entry("https://x.example/mcp", headers={"authorization": "Bearer mine"})
    assert default_auth(own, MemoryTokenStore()) is None
    pool = McpPool(McpConfig(servers=[own]))
    assert pool.auth_for(own) is None


async def test_an_http_entry_signs_in_with_its_oauth_block_over_credentials_json(
    cat_code_home: Path,
) -> None:
    entry = _entry("https://x.example/mcp", oauth={"clientId": "cid", "callbackPort": 4242})
    pool = McpPool(McpConfig(servers=[entry]))
    auth = pool.auth_for(entry)
    assert isinstance(auth, McpAuth)
    try:
        assert auth.server_url == "https://x.example/mcp"
        assert auth.settings == OAuthSettings(client_id="cid", callback_port=4242)
        assert auth.authorizer is None and not auth.fresh
        assert isinstance(auth.store, FileTokenStore)
        assert auth.store.path == cat_code_home / "credentials.json"
        bare = pool.auth_for(_entry("https://y.example/mcp", type="sse"))
        assert isinstance(bare, McpAuth) and bare.settings == OAuthSettings()
    finally:
        await auth.aclose()
