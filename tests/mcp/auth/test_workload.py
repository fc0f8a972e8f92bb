"""Workload identity (SEP-1933): the platform's token for the workload is the RFC 7523 JWT
bearer grant's assertion, read from its file at every sign-in; no person, no secret, no
retry of a refused grant."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
from auth_world import JWT_BEARER, MCP, World

from cat_code.mcp.auth import AuthorizationFailed, OAuthSettings
from cat_code.mcp.auth.provider import McpAuth
from cat_code.mcp.auth.store import MemoryTokenStore
from cat_code.mcp.auth.workload import workload_assertion

TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ3b3JrbG9hZCJ9.c2ln"


@pytest.fixture
def world() -> World:
    return World(token_methods=["none"], metadata_extra={"grant_types_supported": [JWT_BEARER]})


@pytest.fixture
async def http(world: World) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(transport=world.transport()) as client:
        yield client


def _auth(http: httpx2.AsyncClient, settings: OAuthSettings) -> McpAuth:
    return McpAuth(MCP, settings=settings, store=MemoryTokenStore(), http_client=http)


async def test_the_workload_grant_sends_its_token_as_the_assertion_and_no_secret(
    world: World, http: httpx2.AsyncClient, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    settings = OAuthSettings(
        grant_type="jwt_bearer", client_id="ci-runner", assertion_file=str(token_file)
    )
    response = await http.post(MCP, json={}, auth=_auth(http, settings))
    assert response.status_code == 200
    [form] = world.forms("/token")
    assert form == {
        "grant_type": JWT_BEARER,
        "assertion": TOKEN,
        "client_id": "ci-runner",
        "resource": MCP,
    }
    [token_request] = [r for r in world.seen if r.url.path == "/token"]
    assert "authorization" not in token_request.headers


async def test_without_a_client_id_the_grant_names_no_client(
    world: World, http: httpx2.AsyncClient
) -> None:
    settings = OAuthSettings(grant_type="jwt_bearer", assertion=TOKEN)
    assert (await http.post(MCP, json={}, auth=_auth(http, settings))).status_code == 200
    [form] = world.forms("/token")
    assert form == {"grant_type": JWT_BEARER, "assertion": TOKEN, "resource": MCP}


async def test_the_token_file_is_read_again_at_every_sign_in(
    world: World, http: httpx2.AsyncClient, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    auth = _auth(http, OAuthSettings(grant_type="jwt_bearer", assertion_file=str(token_file)))
    await auth.sign_in()
    rotated = TOKEN.replace("c2ln", "bmV3")
    token_file.write_text(rotated)  # the platform rotated it
    await auth.sign_in()
    assert [f["assertion"] for f in world.forms("/token")] == [TOKEN, rotated]


async def test_a_refused_workload_grant_is_reported_and_never_retried(
    world: World, http: httpx2.AsyncClient
) -> None:
    world.refuse_jwt_bearer = "invalid_grant"
    settings = OAuthSettings(grant_type="jwt_bearer", assertion=TOKEN)
    with pytest.raises(AuthorizationFailed) as failed:
        await http.post(MCP, json={}, auth=_auth(http, settings))
    assert "invalid_grant" in str(failed.value) and TOKEN not in str(failed.value)
    # One token request, with no other grant tried after it.
    assert [f["grant_type"] for f in world.forms("/token")] == [JWT_BEARER]
    assert "/authorize" not in world.paths("auth.example.com")


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "cannot read the workload token"), ("not a jwt", "does not hold one JWT")],
)
def test_an_unusable_token_file_is_named_and_its_content_never_quoted(
    tmp_path: Path, content: str | None, message: str
) -> None:
    token_file = tmp_path / "token"
    if content is not None:
        token_file.write_text(content)
    with pytest.raises(AuthorizationFailed) as failed:
        workload_assertion(OAuthSettings(grant_type="jwt_bearer", assertion_file=str(token_file)))
    assert message in str(failed.value) and str(token_file) in str(failed.value)
    assert "not a jwt" not in str(failed.value)


def test_the_assertion_never_shows_in_the_settings_repr() -> None:
    assert TOKEN not in repr(OAuthSettings(grant_type="jwt_bearer", assertion=TOKEN))
