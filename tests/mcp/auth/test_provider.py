"""`McpAuth` as the MCP client's ``httpx2.Auth``: sign-in on a 401, the bearer only to the
server's origin, refresh before expiry (once for concurrent requests), step-up on a 403,
`NeedsLogin` without a person, client credentials without a browser."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qsl

import httpx2
import pytest
from auth_world import ISSUER, MCP, FakeAuthorizer, World, basic_credentials

from cat_code.mcp.auth import NeedsLogin, OAuthSettings, Tokens
from cat_code.mcp.auth.provider import MAX_AUTHORIZATIONS, McpAuth
from cat_code.mcp.auth.store import FileTokenStore, MemoryTokenStore
from cat_code.mcp.auth.types import canonical_server_url

KEY = canonical_server_url(MCP)


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
async def http(world: World) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(transport=world.transport()) as client:
        yield client


def _auth(
    world: World,
    http: httpx2.AsyncClient,
    store: MemoryTokenStore | None = None,
    authorizer: FakeAuthorizer | None = None,
    settings: OAuthSettings | None = None,
) -> McpAuth:
    return McpAuth(
        MCP,
        settings=settings or OAuthSettings(),
        store=store or MemoryTokenStore(),
        authorizer=authorizer,
        http_client=http,
    )


async def test_a_401_signs_in_and_the_request_is_sent_again_with_the_token(
    world: World, http: httpx2.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    store = MemoryTokenStore()
    world.prm_scopes = ["mcp:read"]
    person = FakeAuthorizer(world, iss=ISSUER)
    auth = _auth(world, http, store, person)
    response = await http.post(MCP, json={}, auth=auth)
    assert response.status_code == 200
    params = person.params()
    assert params["resource"] == MCP
    assert params["scope"] == "mcp:read"
    assert params["code_challenge_method"] == "S256"
    [form] = world.forms("/token")
    assert form["resource"] == MCP and form["code_verifier"] and form["redirect_uri"]
    tokens = store.tokens(KEY)
    assert tokens is not None and tokens.issuer == ISSUER and tokens.resource == MCP
    secrets = [tokens.access_token, tokens.refresh_token, form["code"], form["code_verifier"]]
    assert not [s for s in secrets if s and s in caplog.text]


async def test_the_bearer_goes_only_to_the_servers_origin(
    world: World, http: httpx2.AsyncClient
) -> None:
    store = MemoryTokenStore()
    store.save_tokens(KEY, Tokens("stored-token"))
    world.valid["stored-token"] = set()
    auth = _auth(world, http, store)
    await http.post(MCP, json={}, auth=auth)
    await http.get("https://auth.example.com/elsewhere", auth=auth)
    await http.get("https://mcp.example.com:8443/mcp", auth=auth)
    sent = [(r.url.host, r.url.port, r.headers.get("authorization")) for r in world.seen]
    assert sent == [
        ("mcp.example.com", None, "Bearer stored-token"),
        ("auth.example.com", None, None),
        ("mcp.example.com", 8443, None),
    ]


async def test_without_a_person_a_sign_in_raises_needs_login(
    world: World, http: httpx2.AsyncClient
) -> None:
    with pytest.raises(NeedsLogin, match="needs a sign-in"):
        await http.post(MCP, json={}, auth=_auth(world, http))
    assert world.paths() == ["/mcp"]


async def test_an_expiring_token_is_refreshed_once_for_concurrent_requests(
    world: World, http: httpx2.AsyncClient
) -> None:
    store = MemoryTokenStore()
    world.refresh_tokens["rt-0"] = {"mcp"}
    store.save_tokens(
        KEY,
        Tokens(
            "old",
            expires_at=time.time() + 5,
            refresh_token="rt-0",
            issuer=ISSUER,
            token_endpoint=f"{ISSUER}/token",
            client_id="c",
            resource=MCP,
        ),
    )
    auth = _auth(world, http, store)
    async with asyncio.timeout(5):
        answers = await asyncio.gather(*(http.post(MCP, json={}, auth=auth) for _ in range(5)))
    assert [a.status_code for a in answers] == [200] * 5
    [form] = world.forms("/token")
    assert form == {
        "grant_type": "refresh_token",
        "refresh_token": "rt-0",
        "resource": MCP,
        "client_id": "c",
    }
    assert {r.headers["authorization"] for r in world.seen if r.url.path == "/mcp"} == {
        f"Bearer {store.tokens(KEY).access_token}"  # type: ignore[union-attr]
    }


async def test_a_refused_refresh_forgets_the_tokens_and_asks_for_a_sign_in(
    world: World, http: httpx2.AsyncClient
) -> None:
    store = MemoryTokenStore()
    world.refuse_refresh = True
    store.save_tokens(
        KEY,
        Tokens(
            "old",
            expires_at=time.time() - 1,
            refresh_token="rt",
            issuer=ISSUER,
            token_endpoint=f"{ISSUER}/token",
            client_id="c",
        ),
    )
    with pytest.raises(NeedsLogin):
        await http.post(MCP, json={}, auth=_auth(world, http, store))
    assert store.tokens(KEY) is None


async def test_a_403_insufficient_scope_steps_up_with_the_union_of_scopes(
    world: World, http: httpx2.AsyncClient
) -> None:
    world.challenge_scope = "mcp:basic"
    world.scopes_required = {"mcp:write"}
    person = FakeAuthorizer(world)
    response = await http.post(MCP, json={}, auth=_auth(world, http, authorizer=person))
    assert response.status_code == 200
    assert [person.params(i)["scope"] for i in range(len(person.urls))] == [
        "mcp:basic",
        "mcp:basic mcp:write",
    ]


async def test_step_up_stops_after_three_authorizations(
    world: World, http: httpx2.AsyncClient
) -> None:
    world.scopes_required = {"mcp:admin"}
    person = FakeAuthorizer(world)
    # The server never grants what it asks for.
    world.codes = _Forgetful()
    response = await http.post(MCP, json={}, auth=_auth(world, http, authorizer=person))
    assert response.status_code == 403
    assert len(person.urls) == MAX_AUTHORIZATIONS


class _Forgetful(dict[str, str]):
    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key, value.replace("mcp:admin", ""))


async def test_a_wrong_iss_never_reaches_the_token_endpoint(
    world: World, http: httpx2.AsyncClient
) -> None:
    world.metadata_extra = {"authorization_response_iss_parameter_supported": True}
    person = FakeAuthorizer(world, iss="https://evil.example.com")
    with pytest.raises(Exception, match="another server"):
        await http.post(MCP, json={}, auth=_auth(world, http, authorizer=person))
    assert "/token" not in world.paths()


async def test_client_credentials_sign_in_without_a_browser(
    world: World, http: httpx2.AsyncClient
) -> None:
    world.token_methods = ["client_secret_basic"]
    world.prm_scopes = ["mcp"]
    settings = OAuthSettings(client_id="svc", client_secret="pw", grant_type="client_credentials")
    response = await http.post(MCP, json={}, auth=_auth(world, http, settings=settings))
    assert response.status_code == 200
    [token_request] = [r for r in world.seen if r.url.path == "/token"]
    assert basic_credentials(token_request) == ("svc", "pw")
    assert world.forms("/token")[0] == {
        "grant_type": "client_credentials",
        "client_id": "svc",
        "resource": MCP,
        "scope": "mcp",
    }
    assert "/register" not in world.paths()


async def test_sign_in_ignores_stored_tokens_when_fresh(
    world: World, http: httpx2.AsyncClient
) -> None:
    store = MemoryTokenStore()
    store.save_tokens(KEY, Tokens("stale"))
    person = FakeAuthorizer(world)
    auth = McpAuth(
        MCP,
        settings=OAuthSettings(),
        store=store,
        authorizer=person,
        fresh=True,
        http_client=http,
    )
    tokens = await auth.sign_in()
    assert tokens.access_token != "stale"
    assert store.tokens(KEY) == tokens


async def test_enterprise_sign_in_trades_the_id_token_for_an_id_jag_then_a_token(
    world: World,
) -> None:
    world.token_methods = ["client_secret_basic"]
    idp_forms: list[dict[str, str]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.url.host == "idp.example.com":
            idp_forms.append(dict(parse_qsl(request.content.decode())))
            return httpx2.Response(200, json={"access_token": "the-jag", "token_type": "N_A"})
        if request.url.path == "/token":
            # The world's token endpoint knows no jwt-bearer grant: stand in for it.
            world.seen.append(request)
            world.valid["from-jag"] = set()
            return httpx2.Response(200, json={"access_token": "from-jag", "token_type": "Bearer"})
        return world.handle(request)

    settings = OAuthSettings(
        client_id="app",
        client_secret="pw",
        grant_type="id_jag",
        idp_token_endpoint="https://idp.example.com/token",
        idp_client_id="idp-app",
        idp_id_token="the-id-token",
    )
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as http:
        response = await http.post(MCP, json={}, auth=_auth(world, http, settings=settings))
    assert response.status_code == 200
    assert idp_forms == [
        {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token": "the-id-token",
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "audience": ISSUER,
            "resource": MCP,
            "client_id": "idp-app",
        }
    ]
    [grant] = [r for r in world.seen if r.url.path == "/token"]
    assert basic_credentials(grant) == ("app", "pw")
    assert dict(parse_qsl(grant.content.decode())) == {
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
        "assertion": "the-jag",
        "client_id": "app",
        "resource": MCP,
    }


# -- hardening (from the security review) ----------------------------------------------


async def test_a_token_http_cannot_carry_is_refused_and_never_quoted(
    world: World, http: httpx2.AsyncClient
) -> None:
    original = world.token

    def bad_token(request: httpx2.Request) -> httpx2.Response:
        original(request)  # the code is redeemed as usual; the answer is what is wrong
        return httpx2.Response(200, json={"access_token": "LEAK-ME\n", "token_type": "bearer"})

    world.token = bad_token  # type: ignore[method-assign]
    with pytest.raises(Exception) as caught:
        await http.post(MCP, json={}, auth=_auth(world, http, authorizer=FakeAuthorizer(world)))
    assert "LEAK-ME" not in str(caught.value)
    assert "not plain visible ASCII" in str(caught.value)


def test_a_short_lived_token_is_not_stale_the_moment_it_is_issued() -> None:
    now = time.time()
    tokens = Tokens("t", expires_at=now + 30, issued_at=now)
    assert not tokens.expired(now)
    assert not tokens.expired(now + 14)
    assert tokens.expired(now + 16)  # refreshed in its second half, not on every request


def test_stored_tokens_of_the_wrong_shape_are_refused_as_a_value_error() -> None:
    for data in (
        {"access_token": "ok", "expires_at": "soon"},
        {"access_token": "has space"},
        {"access_token": "ok", "scope": 3},
    ):
        with pytest.raises(ValueError):
            Tokens.from_json(data)


async def test_tokens_refresh_as_their_own_client_after_the_server_registered_another(
    world: World, http: httpx2.AsyncClient
) -> None:
    world.token_methods = ["client_secret_post"]
    store = MemoryTokenStore()
    world.refresh_tokens["rt-a"] = {"mcp"}
    store.save_tokens(
        KEY,
        Tokens(
            "old", expires_at=time.time() - 5, refresh_token="rt-a", issuer=ISSUER,
            token_endpoint=f"{ISSUER}/token", client_id="client-a",
            token_endpoint_auth_method="client_secret_post", client_secret="secret-a",
        ),
    )  # fmt: skip
    # Another server of the same authorization server signed in since: a new client.
    from cat_code.mcp.auth.types import ClientRegistration

    store.save_registration(
        ClientRegistration(ISSUER, "client-b", "secret-b", "client_secret_post")
    )
    response = await http.post(MCP, json={}, auth=_auth(world, http, store))
    assert response.status_code == 200
    [form] = world.forms("/token")
    assert (form["client_id"], form["client_secret"]) == ("client-a", "secret-a")


async def test_a_refused_refresh_never_forgets_tokens_saved_meanwhile(
    world: World, http: httpx2.AsyncClient
) -> None:
    world.refuse_refresh = True
    store = MemoryTokenStore()
    stale = Tokens("old", expires_at=time.time() - 5, refresh_token="rt", issuer=ISSUER,
                   token_endpoint=f"{ISSUER}/token", client_id="c")  # fmt: skip
    store.save_tokens(KEY, stale)
    original = world.token

    def newer_saved_meanwhile(request: httpx2.Request) -> httpx2.Response:
        store.save_tokens(KEY, Tokens("newer", refresh_token="rt-new"))  # another task's save
        return original(request)

    world.token = newer_saved_meanwhile  # type: ignore[method-assign]
    world.valid["newer"] = set()
    auth = _auth(world, http, store)
    await http.post(MCP, json={}, auth=auth)
    kept = store.tokens(KEY)
    assert kept is not None and kept.access_token == "newer"


async def test_a_401_asking_for_another_scheme_starts_no_sign_in(
    world: World, http: httpx2.AsyncClient
) -> None:
    def basic_only(request: httpx2.Request) -> httpx2.Response:
        world.seen.append(request)
        return httpx2.Response(401, headers={"www-authenticate": 'Basic realm="x"'})

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(basic_only)) as plain:
        response = await plain.post(MCP, json={}, auth=_auth(world, plain))
    assert response.status_code == 401  # the server's own answer, no NeedsLogin
    assert world.paths() == ["/mcp"]


async def test_a_configured_client_secret_is_read_from_the_config_never_stored(
    world: World, http: httpx2.AsyncClient, tmp_path: Path
) -> None:
    world.token_methods = ["client_secret_basic"]
    store = FileTokenStore(tmp_path / "credentials.json")
    settings = OAuthSettings(
        client_id="svc", client_secret="pw-configured", grant_type="client_credentials"
    )
    response = await http.post(MCP, json={}, auth=_auth(world, http, store, settings=settings))
    assert response.status_code == 200
    written = store.path.read_text()
    assert "svc" in written and "pw-configured" not in written
    tokens = store.tokens(KEY)
    assert tokens is not None and tokens.client_secret is None
