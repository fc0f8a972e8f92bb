"""The token endpoint: client authentication methods, lenient answers, no redirects."""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qsl

import httpx2
import pytest

from cat_code.mcp.auth.tokens import (
    JWT_BEARER_ASSERTION,
    TokenEndpointError,
    client_credentials,
    parse_tokens,
    token_request,
)
from cat_code.mcp.auth.types import ClientRegistration

ISSUER = "https://auth.example.com"
TOKEN = f"{ISSUER}/token"


class Recorder:
    def __init__(self, answer: httpx2.Response | None = None) -> None:
        self.requests: list[httpx2.Request] = []
        self.answer = answer or httpx2.Response(
            200, json={"access_token": "at", "token_type": "Bearer", "expires_in": 60}
        )

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.answer

    @property
    def form(self) -> dict[str, str]:
        return dict(parse_qsl(self.requests[-1].content.decode()))


async def _request(recorder: Recorder, registration: ClientRegistration, **kw: object) -> None:
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(recorder)) as http:
        await token_request(
            http,
            TOKEN,
            {"grant_type": "refresh_token", "refresh_token": "rt"},
            registration,
            issuer=ISSUER,
            **kw,  # type: ignore[arg-type]
        )


async def test_client_secret_basic_sends_the_form_encoded_pair_in_a_basic_header() -> None:
    recorder = Recorder()
    registration = ClientRegistration(ISSUER, "my client", "p@ss:word", "client_secret_basic")
    await _request(recorder, registration)
    header = recorder.requests[-1].headers["authorization"]
    assert base64.b64decode(header.removeprefix("Basic ")).decode() == "my%20client:p%40ss%3Aword"
    assert "client_secret" not in recorder.form  # the secret only in the header
    assert recorder.form["client_id"] == "my client"  # servers (the mcp SDK's) want it too


async def test_client_secret_post_sends_both_in_the_body() -> None:
    recorder = Recorder()
    await _request(recorder, ClientRegistration(ISSUER, "c", "s", "client_secret_post"))
    assert recorder.form["client_id"] == "c"
    assert recorder.form["client_secret"] == "s"
    assert "authorization" not in recorder.requests[-1].headers


async def test_a_public_client_sends_only_its_id() -> None:
    recorder = Recorder()
    await _request(recorder, ClientRegistration(ISSUER, "c", None, "none"))
    assert recorder.form["client_id"] == "c"
    assert "client_secret" not in recorder.form


@pytest.mark.parametrize("kind", ["ec", "rsa"])
async def test_private_key_jwt_signs_an_assertion_for_the_issuer(kind: str) -> None:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey = (
        ec.generate_private_key(ec.SECP256R1())
        if kind == "ec"
        else rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    recorder = Recorder()
    registration = ClientRegistration(ISSUER, "m2m", None, "private_key_jwt")
    await _request(recorder, registration, private_key_pem=pem)
    form = recorder.form
    assert form["client_assertion_type"] == JWT_BEARER_ASSERTION
    head, body, sig = form["client_assertion"].split(".")

    def decode(part: str) -> bytes:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))

    header, claims = json.loads(decode(head)), json.loads(decode(body))
    assert header["alg"] == ("ES256" if kind == "ec" else "RS256")
    assert claims["iss"] == claims["sub"] == "m2m"
    assert claims["aud"] == ISSUER
    assert claims["jti"] and claims["exp"] > claims["iat"]
    signed = f"{head}.{body}".encode()
    if isinstance(key, ec.EllipticCurvePrivateKey):
        raw = decode(sig)
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        key.public_key().verify(der, signed, ec.ECDSA(hashes.SHA256()))
    else:
        key.public_key().verify(decode(sig), signed, padding.PKCS1v15(), hashes.SHA256())


async def test_client_credentials_sends_the_resource_and_scope_as_given() -> None:
    recorder = Recorder()
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(recorder)) as http:
        tokens = await client_credentials(
            http,
            TOKEN,
            ClientRegistration(ISSUER, "c", "s", "client_secret_basic"),
            issuer=ISSUER,
            resource="https://MCP.example.com",
            scope="a b",
        )
    assert recorder.form == {
        "grant_type": "client_credentials",
        "client_id": "c",
        "resource": "https://MCP.example.com",
        "scope": "a b",
    }
    assert tokens.resource == "https://MCP.example.com"
    assert tokens.scope == "a b"


def test_answers_are_read_leniently() -> None:
    registration = ClientRegistration(ISSUER, "c")
    tokens = parse_tokens(
        {"access_token": "at", "token_type": "BEARER", "expires_in": "120"},
        endpoint=TOKEN,
        issuer=ISSUER,
        registration=registration,
        requested_scope="mcp:basic",
        resource="https://m/mcp",
    )
    assert tokens.expires_at is not None
    assert tokens.scope == "mcp:basic"
    assert not tokens.expired(margin=0)


async def test_a_refusal_names_the_oauth_error_but_no_secret() -> None:
    recorder = Recorder(httpx2.Response(400, json={"error": "invalid_grant"}))
    with pytest.raises(TokenEndpointError) as caught:
        await _request(recorder, ClientRegistration(ISSUER, "c", "sekrit", "client_secret_post"))
    assert caught.value.error == "invalid_grant"
    assert "sekrit" not in str(caught.value) and "rt" not in str(caught.value).split()


async def test_a_redirect_from_the_token_endpoint_is_not_followed() -> None:
    recorder = Recorder(httpx2.Response(307, headers={"location": "https://evil.example.com/t"}))
    with pytest.raises(TokenEndpointError, match="redirect"):
        await _request(recorder, ClientRegistration(ISSUER, "c", "s", "client_secret_post"))
    assert [r.url.host for r in recorder.requests] == ["auth.example.com"]
