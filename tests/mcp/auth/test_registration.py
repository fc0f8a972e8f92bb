"""Client identity: configured, then CIMD, then DCR kept per authorization server."""

from __future__ import annotations

import json

import httpx2
from auth_world import ISSUER, World

from cat_code.mcp.auth.discovery import AuthServerMetadata
from cat_code.mcp.auth.registration import client_identity
from cat_code.mcp.auth.store import MemoryTokenStore
from cat_code.mcp.auth.types import OAuthSettings

REDIRECT = "http://127.0.0.1:8765/callback"


def _metadata(issuer: str = ISSUER, **kw: object) -> AuthServerMetadata:
    return AuthServerMetadata(  # type: ignore[arg-type]
        issuer=issuer,
        authorization_endpoint=f"{ISSUER}/authorize",
        token_endpoint=f"{ISSUER}/token",
        registration_endpoint=f"{ISSUER}/register",
        **kw,
    )


async def test_a_configured_client_comes_first_with_the_secret_method_the_server_lists() -> None:
    world = World()
    settings = OAuthSettings(
        client_id="mine", client_secret="s", client_metadata_url="https://c.example/cimd.json"
    )
    async with httpx2.AsyncClient(transport=world.transport()) as http:
        reg = await client_identity(
            http,
            _metadata(
                token_endpoint_auth_methods_supported=("client_secret_post",),
                client_id_metadata_document_supported=True,
            ),
            settings,
            MemoryTokenStore(),
            REDIRECT,
        )
    assert (reg.client_id, reg.token_endpoint_auth_method, reg.source) == (
        "mine",
        "client_secret_post",
        "config",
    )
    assert world.seen == []


async def test_a_metadata_document_url_is_used_only_where_the_server_supports_it() -> None:
    world = World()
    settings = OAuthSettings(client_metadata_url="https://c.example/cimd.json")
    store = MemoryTokenStore()
    async with httpx2.AsyncClient(transport=world.transport()) as http:
        cimd = await client_identity(
            http, _metadata(client_id_metadata_document_supported=True), settings, store, REDIRECT
        )
        dcr = await client_identity(http, _metadata(), settings, store, REDIRECT)
    assert cimd.client_id == "https://c.example/cimd.json"
    assert dcr.source == "dcr" and dcr.client_id.startswith("client-")


async def test_dcr_registers_a_native_client_once_per_issuer_and_reuses_it() -> None:
    world = World()
    store = MemoryTokenStore()
    async with httpx2.AsyncClient(transport=world.transport()) as http:
        first = await client_identity(http, _metadata(), OAuthSettings(), store, REDIRECT, "a")
        again = await client_identity(http, _metadata(), OAuthSettings(), store, REDIRECT)
        other = await client_identity(
            http, _metadata("https://auth.example.com/other"), OAuthSettings(), store, REDIRECT
        )
    assert again.client_id == first.client_id
    assert other.client_id != first.client_id
    assert other.issuer == "https://auth.example.com/other"
    bodies = [json.loads(r.content) for r in world.seen if r.url.path == "/register"]
    assert len(bodies) == 2
    assert bodies[0]["application_type"] == "native"
    assert bodies[0]["grant_types"] == ["authorization_code", "refresh_token"]
    assert bodies[0]["redirect_uris"] == [REDIRECT]
    assert bodies[0]["scope"] == "a"
    assert store.registration(ISSUER) == first
