"""DPoP (RFC 9449): the proofs' contents, nonces, and DPoP-bound tokens end to end.

The end-to-end tests run `McpClient` with `McpAuth` against `DpopPeer`, a real MCP server
and its authorization server on one 127.0.0.1 origin that issue and check DPoP-bound
tokens the way the RFC says a server does (signature by the ``jwk``, ``htm``, ``htu``,
``iat``, a fresh ``jti``, ``ath``, the key's thumbprint against the token's binding, and
the nonces they hand out). Every proof it saw is kept; what it refused is in ``problems``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import os
import stat
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2
import jwt
import pytest
from auth_world import MCP, FakeAuthorizer, World
from cryptography.hazmat.primitives import serialization
from jwt.algorithms import ECAlgorithm
from scripted.http_peers import McpPeer, Reply, Seen

from cat_code.mcp.auth import OAuthSettings
from cat_code.mcp.auth.dpop import DpopProver, new_private_key_pem
from cat_code.mcp.auth.provider import McpAuth
from cat_code.mcp.auth.store import FileTokenStore, MemoryTokenStore
from cat_code.mcp.auth.tokens import TokenEndpointError, parse_tokens, token_request
from cat_code.mcp.auth.types import (
    AuthorizationFailed,
    ClientRegistration,
    canonical_server_url,
)
from cat_code.mcp.client import McpClient
from cat_code.mcp.transports.http import StreamableHttpTransport

AS_NONCE = "as-nonce-1"
RS_NONCE = "rs-nonce-1"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638, written out here apart from the code under test."""
    members = f'{{"crv":"{jwk["crv"]}","kty":"{jwk["kty"]}","x":"{jwk["x"]}","y":"{jwk["y"]}"}}'
    return b64url(hashlib.sha256(members.encode()).digest())


def verified(proof: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A proof's header and claims, its signature checked with the key it carries."""
    header = jwt.get_unverified_header(proof)
    key = jwt.PyJWK(header["jwk"], algorithm="ES256").key
    claims = jwt.decode(proof, key, algorithms=["ES256"])
    return header, claims


# -- the proofs ---------------------------------------------------------------------------


def test_a_proof_carries_every_claim_rfc_9449_asks_for() -> None:
    pem = new_private_key_pem()
    prover = DpopProver(pem)
    before = int(time.time())
    proof = prover.proof("post", "https://mcp.example.com/mcp?session=1#frag", access_token="at-1")
    after = int(time.time())
    header, claims = verified(proof)

    key = serialization.load_pem_private_key(pem.encode(), password=None)
    public_jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))  # type: ignore[arg-type]
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256"
    assert header["jwk"] == {k: public_jwk[k] for k in ("kty", "crv", "x", "y")}
    assert "d" not in header["jwk"]
    assert prover.thumbprint == thumbprint(public_jwk)
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://mcp.example.com/mcp"
    assert before <= claims["iat"] <= after
    assert isinstance(claims["jti"], str) and len(claims["jti"]) >= 16
    assert claims["ath"] == b64url(hashlib.sha256(b"at-1").digest())
    assert set(claims) == {"htm", "htu", "iat", "jti", "ath"}


def test_a_token_request_proof_has_no_ath_and_every_proof_a_new_jti() -> None:
    prover = DpopProver(new_private_key_pem())
    proofs = [verified(prover.proof("POST", "https://auth.example.com/token"))[1] for _ in "ab"]
    assert all("ath" not in claims and "nonce" not in claims for claims in proofs)
    assert proofs[0]["jti"] != proofs[1]["jti"]


def test_a_nonce_is_kept_per_endpoint_and_put_in_every_later_proof_there() -> None:
    prover = DpopProver(new_private_key_pem())
    assert prover.learn_nonce("https://auth.example.com/token", {"dpop-nonce": "n-1"})
    assert not prover.learn_nonce("https://auth.example.com/token?x=1", {"dpop-nonce": "n-1"})
    assert not prover.learn_nonce("https://auth.example.com/token", {"dpop-nonce": 'bad"one'})
    assert not prover.learn_nonce("https://auth.example.com/token", {})
    assert verified(prover.proof("POST", "https://AUTH.example.com/token"))[1]["nonce"] == "n-1"
    for elsewhere in ("https://auth.example.com/mcp", "https://mcp.example.com/token"):
        assert "nonce" not in verified(prover.proof("POST", elsewhere))[1]


def test_a_key_that_is_not_p256_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot be read"):
        DpopProver("not a key")
    from cryptography.hazmat.primitives.asymmetric import ec

    p384 = ec.generate_private_key(ec.SECP384R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    with pytest.raises(ValueError, match="P-256"):
        DpopProver(p384.decode())


def test_a_dpop_token_is_taken_only_when_a_proof_was_sent() -> None:
    args: dict[str, Any] = {
        "endpoint": "https://auth.example.com/token",
        "issuer": "https://auth.example.com",
        "registration": ClientRegistration("https://auth.example.com", "c"),
        "requested_scope": None,
        "resource": None,
    }
    answer = {"access_token": "at", "token_type": "DPoP"}
    with pytest.raises(AuthorizationFailed, match="not a Bearer one"):
        parse_tokens(answer, **args)
    assert parse_tokens(answer, **args, dpop=True).token_type == "DPoP"
    assert parse_tokens({"access_token": "at"}, **args, dpop=True).token_type == "Bearer"


async def test_a_token_endpoint_asking_for_nonces_forever_gets_one_retry() -> None:
    sent: list[httpx2.Request] = []
    nonces = itertools.count(1)

    def handle(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(
            400, json={"error": "use_dpop_nonce"}, headers={"DPoP-Nonce": f"n-{next(nonces)}"}
        )

    prover = DpopProver(new_private_key_pem())
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handle)) as http:
        with pytest.raises(TokenEndpointError) as refused:
            await token_request(
                http,
                "https://auth.example.com/token",
                {"grant_type": "client_credentials"},
                ClientRegistration("https://auth.example.com", "c"),
                issuer="https://auth.example.com",
                dpop=prover,
            )
    assert refused.value.error == "use_dpop_nonce"
    assert [verified(r.headers["dpop"])[1].get("nonce") for r in sent] == [None, "n-1"]


# -- a real server that wants DPoP ----------------------------------------------------------


class DpopPeer(McpPeer):
    """An MCP server and its authorization server on one 127.0.0.1 origin, issuing DPoP-bound
    tokens; with ``require_nonce`` both refuse a proof without their nonce (RFC 9449 §8, §9)."""

    def __init__(self, *, require_nonce: bool) -> None:
        super().__init__(sse=False)
        self.require_nonce = require_nonce
        #: access token -> the thumbprint of the key it is bound to
        self.bound: dict[str, str] = {}
        self.codes: set[str] = set()
        self.jtis: set[str] = set()
        #: (path, claims) of every proof that verified, in order
        self.proofs: list[tuple[str, dict[str, Any]]] = []
        self.problems: list[str] = []
        self._n = itertools.count(1)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def check(self, seen: Seen, htu: str, token: str | None = None) -> dict[str, Any] | None:
        """The proof's claims when it holds up, else None (and why, in ``problems``)."""
        proof = seen.headers.get("dpop")
        if not proof:
            self.problems.append(f"{seen.method} {seen.path}: no proof")
            return None
        header, claims = verified(proof)
        jkt = thumbprint(header["jwk"])
        wrong = [
            what
            for what, ok in (
                ("typ", header.get("typ") == "dpop+jwt"),
                ("private jwk", "d" not in header["jwk"]),
                ("htm", claims.get("htm") == seen.method),
                ("htu", claims.get("htu") == htu),
                ("iat", abs(time.time() - claims.get("iat", 0)) < 60),
                ("jti", claims.get("jti") not in self.jtis),
                (
                    "ath",
                    token is None
                    or claims.get("ath") == b64url(hashlib.sha256(token.encode()).digest()),
                ),
                ("cnf.jkt", token is None or self.bound.get(token) == jkt),
            )
            if not ok
        ]
        if wrong:
            self.problems.append(f"{seen.method} {seen.path}: bad {', '.join(wrong)}")
            return None
        self.jtis.add(claims["jti"])
        self.proofs.append((urlsplit(seen.path).path, {**claims, "jkt": jkt}))
        return {**claims, "jkt": jkt}

    async def handle(self, seen: Seen, reply: Reply) -> None:
        path = urlsplit(seen.path).path
        if path == "/.well-known/oauth-protected-resource/mcp":
            await reply.json({"resource": self.url, "authorization_servers": [self.origin]})
        elif path == "/.well-known/oauth-authorization-server":
            await reply.json(
                {
                    "issuer": self.origin,
                    "authorization_endpoint": f"{self.origin}/authorize",
                    "token_endpoint": f"{self.origin}/token",
                    "registration_endpoint": f"{self.origin}/register",
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                    "dpop_signing_alg_values_supported": ["ES256"],
                }
            )
        elif path == "/register":
            body = seen.json
            registered = {"client_id": "client-1", "token_endpoint_auth_method": "none"}
            await reply.json({**registered, "redirect_uris": body["redirect_uris"]}, status=201)
        elif path == "/token":
            await self.token(seen, reply)
        elif path == "/mcp":
            await self.resource(seen, reply)
        else:
            await reply.send(404)

    async def token(self, seen: Seen, reply: Reply) -> None:
        claims = self.check(seen, f"{self.origin}/token")
        if claims is None:
            await reply.json({"error": "invalid_dpop_proof"}, status=400)
            return
        if self.require_nonce and claims.get("nonce") != AS_NONCE:
            await reply.json({"error": "use_dpop_nonce"}, 400, {"DPoP-Nonce": AS_NONCE})
            return
        form = dict(parse_qsl(seen.body.decode()))
        if form.get("grant_type") != "authorization_code" or form.get("code") not in self.codes:
            await reply.json({"error": "invalid_grant"}, status=400)
            return
        self.codes.discard(form["code"])
        token = f"dpop-token-{next(self._n)}"
        self.bound[token] = claims["jkt"]
        await reply.json({"access_token": token, "token_type": "DPoP", "expires_in": 3600})

    async def resource(self, seen: Seen, reply: Reply) -> None:
        prm = f"{self.origin}/.well-known/oauth-protected-resource/mcp"
        scheme, _, token = seen.headers.get("authorization", "").partition(" ")
        if scheme != "DPoP" or token not in self.bound:
            if scheme:
                self.problems.append(f"{seen.method} /mcp: {scheme or 'no'} token refused")
            challenge = f'DPoP algs="ES256", resource_metadata="{prm}"'
            await reply.send(401, headers={"www-authenticate": challenge})
            return
        claims = self.check(seen, self.url, token)
        if claims is None:
            await reply.send(401, headers={"www-authenticate": 'DPoP error="invalid_dpop_proof"'})
            return
        if self.require_nonce and claims.get("nonce") != RS_NONCE:
            challenge = f'DPoP error="use_dpop_nonce", resource_metadata="{prm}"'
            headers = {"www-authenticate": challenge, "DPoP-Nonce": RS_NONCE}
            await reply.send(401, headers=headers)
            return
        await super().handle(seen, reply)

    def mcp_proofs(self) -> list[dict[str, Any]]:
        return [claims for path, claims in self.proofs if path == "/mcp"]

    def token_proofs(self) -> list[dict[str, Any]]:
        return [claims for path, claims in self.proofs if path == "/token"]


class Approver:
    """The person: approves at once, as the peer's authorization endpoint would redirect."""

    def __init__(self, peer: DpopPeer) -> None:
        self.peer = peer

    async def redirect_uri(self, preferred: str | None = None) -> str:
        return "http://127.0.0.1:9/callback"

    async def authorize(self, url: str) -> dict[str, str]:
        params = dict(parse_qsl(urlsplit(url).query))
        code = f"code-{len(self.peer.codes)}"
        self.peer.codes.add(code)
        return {"code": code, "state": params["state"], "iss": self.peer.origin}

    async def aclose(self) -> None:
        pass


async def list_tools(peer: DpopPeer, auth: McpAuth) -> list[str]:
    client = McpClient(StreamableHttpTransport(peer.url, name="dpop", auth=auth), name="dpop")
    try:
        async with asyncio.timeout(10):
            await client.connect()
            return [tool["name"] for tool in await client.list_tools()]
    finally:
        await client.close()
        await auth.aclose()


async def test_with_nonces_demanded_both_requests_are_sent_once_more_and_the_token_is_bound(
    tmp_path: Path,
) -> None:
    store = FileTokenStore(tmp_path / "credentials.json")
    async with DpopPeer(require_nonce=True) as peer:
        auth = McpAuth(peer.url, settings=OAuthSettings(), store=store, authorizer=Approver(peer))
        assert await list_tools(peer, auth) == ["echo"]
    assert peer.problems == []
    # The token request: refused once for want of the nonce, then sent with it.
    assert [p.get("nonce") for p in peer.token_proofs()] == [None, AS_NONCE]
    # The first request with the token lacked the server's nonce; every later one has it.
    nonces = [p.get("nonce") for p in peer.mcp_proofs()]
    assert nonces[0] is None and len(nonces) >= 3 and set(nonces[1:]) == {RS_NONCE}
    assert len({claims["jkt"] for _, claims in peer.proofs}) == 1
    stored = store.tokens(canonical_server_url(peer.url))
    assert stored is not None and stored.token_type == "DPoP"
    schemes = {
        s.headers["authorization"].split()[0] for s in peer.seen if "authorization" in s.headers
    }
    assert schemes == {"DPoP"}


async def test_the_key_is_kept_0600_in_the_store_so_tokens_stay_bound_in_a_later_run(
    tmp_path: Path,
) -> None:
    path = tmp_path / "credentials.json"
    async with DpopPeer(require_nonce=False) as peer:
        first = McpAuth(
            peer.url,
            settings=OAuthSettings(),
            store=FileTokenStore(path),
            authorizer=Approver(peer),
        )
        await list_tools(peer, first)
        signed_in = len(peer.token_proofs())
        # A later run: a new store object on the same file, and no person to sign in.
        later = McpAuth(peer.url, settings=OAuthSettings(), store=FileTokenStore(path))
        assert await list_tools(peer, later) == ["echo"]
    assert peer.problems == []
    assert len(peer.token_proofs()) == signed_in == 1
    assert len({claims["jkt"] for _, claims in peer.proofs}) == 1
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    saved = json.loads(path.read_text())["dpop_keys"][canonical_server_url(peer.url)]
    assert DpopProver(saved).thumbprint == peer.proofs[0][1]["jkt"]


async def test_a_server_that_offers_no_dpop_gets_bearer_tokens_and_no_key_is_made() -> None:
    world = World()
    store = MemoryTokenStore()
    async with httpx2.AsyncClient(transport=world.transport()) as http:
        auth = McpAuth(
            MCP,
            settings=OAuthSettings(),
            store=store,
            authorizer=FakeAuthorizer(world),
            http_client=http,
        )
        assert (await http.post(MCP, json={}, auth=auth)).status_code == 200
    assert store.dpop_key(canonical_server_url(MCP)) is None
    assert not [r for r in world.seen if "dpop" in r.headers]
    assert world.seen[-1].headers["authorization"].startswith("Bearer ")
