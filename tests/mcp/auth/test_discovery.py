"""Discovery: where metadata is looked for, in what order, and what is refused."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest
from auth_world import ISSUER, MCP, PRM_URL, World

from cat_code.mcp.auth._http import MAX_BODY_BYTES
from cat_code.mcp.auth.discovery import (
    auth_server_metadata_urls,
    fallback_auth_server_metadata,
    fetch_auth_server_metadata,
    fetch_resource_metadata,
    resource_covers,
    resource_metadata_urls,
)
from cat_code.mcp.auth.types import AuthorizationFailed


def _client(handler: httpx2.MockTransport) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=handler, follow_redirects=False)


def test_resource_metadata_is_looked_for_at_the_header_url_then_path_based_then_root() -> None:
    assert resource_metadata_urls("https://ex.com/public/mcp", "https://ex.com/prm.json") == [
        "https://ex.com/prm.json",
        "https://ex.com/.well-known/oauth-protected-resource/public/mcp",
        "https://ex.com/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_urls("https://ex.com") == [
        "https://ex.com/.well-known/oauth-protected-resource"
    ]


def test_server_metadata_urls_insert_the_issuer_path_in_the_spec_order() -> None:
    assert auth_server_metadata_urls("https://auth.ex.com/tenant1/") == [
        "https://auth.ex.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.ex.com/.well-known/openid-configuration/tenant1",
        "https://auth.ex.com/tenant1/.well-known/openid-configuration",
    ]
    assert auth_server_metadata_urls("https://auth.ex.com") == [
        "https://auth.ex.com/.well-known/oauth-authorization-server",
        "https://auth.ex.com/.well-known/openid-configuration",
    ]


def test_a_resource_covers_the_server_only_on_its_origin_and_a_path_segment_prefix() -> None:
    assert resource_covers("https://ex.com/mcp", "https://ex.com/mcp")
    assert resource_covers("https://ex.com", "https://ex.com/mcp")
    assert resource_covers("https://EX.com:443/", "https://ex.com/mcp/")
    assert not resource_covers("https://ex.com/mc", "https://ex.com/mcp")
    assert not resource_covers("https://evil.example.com/mcp", "https://ex.com/mcp")
    assert not resource_covers("http://ex.com/mcp", "https://ex.com/mcp")
    assert not resource_covers("https://ex.com:8443/mcp", "https://ex.com/mcp")


async def test_a_resource_metadata_for_another_server_is_refused_naming_both() -> None:
    world = World(resource="https://evil.example.com/mcp")
    async with _client(world.transport()) as http:
        with pytest.raises(AuthorizationFailed) as caught:
            await fetch_resource_metadata(http, MCP, PRM_URL)
    assert "https://evil.example.com/mcp" in str(caught.value)
    assert MCP in str(caught.value)


async def test_the_resource_is_kept_byte_for_byte() -> None:
    world = World(resource="https://mcp.example.com")
    async with _client(world.transport()) as http:
        prm = await fetch_resource_metadata(http, MCP)
    assert prm is not None
    assert prm.resource == "https://mcp.example.com"
    assert prm.authorization_servers == (ISSUER,)


async def test_metadata_whose_issuer_differs_from_the_url_issuer_is_never_used() -> None:
    world = World(issuer="https://attacker.example.com")
    async with _client(world.transport()) as http:
        with pytest.raises(AuthorizationFailed, match="attacker"):
            await fetch_auth_server_metadata(http, ISSUER)


async def test_http_endpoints_are_refused_unless_on_a_loopback_host() -> None:
    world = World(metadata_extra={"token_endpoint": "http://auth.example.com/token"})
    async with _client(world.transport()) as http:
        with pytest.raises(AuthorizationFailed, match="not an https URL"):
            await fetch_auth_server_metadata(http, ISSUER)


async def test_a_server_without_any_metadata_falls_back_to_the_default_endpoints() -> None:
    async with _client(httpx2.MockTransport(lambda r: httpx2.Response(404))) as http:
        metadata = await fallback_auth_server_metadata(http, "http://127.0.0.1:9/mcp")
    assert metadata.defaults
    assert metadata.authorization_endpoint == "http://127.0.0.1:9/authorize"
    assert metadata.token_endpoint == "http://127.0.0.1:9/token"
    assert metadata.registration_endpoint == "http://127.0.0.1:9/register"


async def test_discovery_does_not_follow_redirects() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.host == "elsewhere.example.com":
            raise AssertionError("a redirect was followed")
        return httpx2.Response(302, headers={"location": "https://elsewhere.example.com/prm"})

    async with _client(httpx2.MockTransport(handler)) as http:
        assert await fetch_resource_metadata(http, MCP) is None


@pytest.mark.parametrize(
    "resource",
    [
        "https://victim-api.com\\@mcp.example.com/mcp",
        "https://user@mcp.example.com/mcp",
        "https://mcp.example.com/mcp x",
        "https://mcp.example.com/\nmcp",
    ],
)
def test_a_resource_parsers_might_read_differently_is_refused(resource: str) -> None:
    assert not resource_covers(resource, "https://mcp.example.com/mcp")


async def test_metadata_of_an_http_issuer_off_this_machine_is_never_fetched() -> None:
    seen: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        return httpx2.Response(404)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http:
        with pytest.raises(AuthorizationFailed, match="not an https URL"):
            await fetch_auth_server_metadata(http, "http://as.example.com")
    assert seen == []


async def test_an_endless_metadata_body_is_refused_after_the_cap_not_read_whole() -> None:
    sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        while True:
            sent += 1
            yield b" " * 65_536

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=endless())

    async with _client(httpx2.MockTransport(handler)) as http:
        with pytest.raises(AuthorizationFailed, match="more than 1 MB"):
            await fetch_resource_metadata(http, MCP)
    # The cap plus at most one chunk was read, then the body was abandoned.
    assert sent <= MAX_BODY_BYTES // 65_536 + 2
