"""A scripted OAuth world on `httpx2.MockTransport`: an MCP server that wants a bearer
token, its Protected Resource Metadata, and one authorization server (metadata,
registration, authorize, token). Every request is recorded in ``seen``; a test changes
a field (``scopes_required``, ``metadata``, ...) to script what real servers will not do
on demand. A `FakeAuthorizer` plays the person: it reads the authorization URL and
answers as the server would redirect (code, state, iss)."""

from __future__ import annotations

import base64
import itertools
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx2

MCP = "https://mcp.example.com/mcp"
ISSUER = "https://auth.example.com"
PRM_URL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@dataclass
class World:
    resource: str = MCP
    issuer: str = ISSUER
    prm_scopes: list[str] | None = None
    challenge_scope: str | None = None
    #: Scopes a tools/call needs; missing ones get a 403 insufficient_scope.
    scopes_required: set[str] = field(default_factory=set)
    token_methods: list[str] = field(default_factory=lambda: ["none"])
    expires_in: Any = 3600
    issue_refresh: bool = True
    refuse_refresh: bool = False
    #: The OAuth error a JWT bearer grant (workload identity) gets (None: it is granted).
    refuse_jwt_bearer: str | None = None
    metadata_extra: dict[str, Any] = field(default_factory=dict)
    seen: list[httpx2.Request] = field(default_factory=list)
    #: access token -> scopes it carries
    valid: dict[str, set[str]] = field(default_factory=dict)
    refresh_tokens: dict[str, set[str]] = field(default_factory=dict)
    codes: dict[str, str] = field(default_factory=dict)
    _n: itertools.count[int] = field(default_factory=itertools.count)

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)

    def paths(self, host: str | None = None) -> list[str]:
        return [r.url.path for r in self.seen if host is None or r.url.host == host]

    def forms(self, path: str) -> list[dict[str, str]]:
        return [
            dict(parse_qsl(r.content.decode()))
            for r in self.seen
            if r.url.path == path and r.method == "POST"
        ]

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{ISSUER}/authorize",
            "token_endpoint": f"{ISSUER}/token",
            "registration_endpoint": f"{ISSUER}/register",
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": self.token_methods,
            **self.metadata_extra,
        }

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(request)
        url = request.url
        if url.host == "mcp.example.com":
            if url.path == "/.well-known/oauth-protected-resource/mcp":
                prm: dict[str, Any] = {
                    "resource": self.resource,
                    "authorization_servers": [self.issuer],
                }
                if self.prm_scopes:
                    prm["scopes_supported"] = self.prm_scopes
                return httpx2.Response(200, json=prm)
            if url.path == "/mcp":
                return self.mcp(request)
            return httpx2.Response(404)
        if url.host == "auth.example.com":
            if url.path == "/.well-known/oauth-authorization-server":
                return httpx2.Response(200, json=self.metadata())
            if url.path == "/register":
                body = json.loads(request.content)
                return httpx2.Response(
                    201,
                    json={
                        "client_id": f"client-{next(self._n)}",
                        "client_secret": "s3cret",
                        "redirect_uris": body["redirect_uris"],
                        "token_endpoint_auth_method": body["token_endpoint_auth_method"],
                    },
                )
            if url.path == "/token":
                return self.token(request)
        return httpx2.Response(404)

    def mcp(self, request: httpx2.Request) -> httpx2.Response:
        header = request.headers.get("authorization", "")
        scopes = self.valid.get(header.removeprefix("Bearer "))
        if scopes is None:
            challenge = f'Bearer error="invalid_token", resource_metadata="{PRM_URL}"'
            if self.challenge_scope:
                challenge += f', scope="{self.challenge_scope}"'
            return httpx2.Response(401, headers={"www-authenticate": challenge})
        missing = self.scopes_required - scopes
        if missing:
            want = " ".join(sorted(self.scopes_required))
            return httpx2.Response(
                403,
                headers={"www-authenticate": f'Bearer error="insufficient_scope", scope="{want}"'},
            )
        return httpx2.Response(200, json={"ok": True})

    def token(self, request: httpx2.Request) -> httpx2.Response:
        form = dict(parse_qsl(request.content.decode()))
        grant = form.get("grant_type")
        if grant == "authorization_code":
            scope = self.codes.pop(form.get("code", ""), None)
            if scope is None:
                return httpx2.Response(400, json={"error": "invalid_grant"})
        elif grant == "refresh_token":
            if self.refuse_refresh or form.get("refresh_token") not in self.refresh_tokens:
                return httpx2.Response(400, json={"error": "invalid_grant"})
            scope = " ".join(sorted(self.refresh_tokens.pop(form["refresh_token"])))
        elif grant == "client_credentials":
            scope = form.get("scope", "")
        elif grant == JWT_BEARER:
            if self.refuse_jwt_bearer or not form.get("assertion"):
                return httpx2.Response(400, json={"error": self.refuse_jwt_bearer})
            scope = form.get("scope", "")
        else:
            return httpx2.Response(400, json={"error": "unsupported_grant_type"})
        n = next(self._n)
        access = f"access-{n}"
        self.valid[access] = set(scope.split())
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "bearer",
            "expires_in": self.expires_in,
        }
        if self.issue_refresh and grant in ("authorization_code", "refresh_token"):
            self.refresh_tokens[f"refresh-{n}"] = set(scope.split())
            answer["refresh_token"] = f"refresh-{n}"
        return httpx2.Response(200, json=answer)


def basic_credentials(request: httpx2.Request) -> tuple[str, str] | None:
    header = request.headers.get("authorization", "")
    if not header.startswith("Basic "):
        return None
    user, _, password = base64.b64decode(header[6:]).decode().partition(":")
    return user, password


class FakeAuthorizer:
    """The person: approves at once, as the server would redirect."""

    def __init__(self, world: World, *, iss: str | None = None, state: str | None = None) -> None:
        self.world = world
        self.iss = iss
        self.state = state
        self.urls: list[str] = []

    async def redirect_uri(self, preferred: str | None = None) -> str:
        return "http://127.0.0.1:8765/callback"

    async def authorize(self, url: str) -> dict[str, str]:
        self.urls.append(url)
        params = dict(parse_qsl(urlsplit(url).query))
        code = f"code-{len(self.urls)}"
        self.world.codes[code] = params.get("scope", "")
        answer = {"code": code, "state": self.state or params["state"]}
        if self.iss is not None:
            answer["iss"] = self.iss
        return answer

    async def aclose(self) -> None:
        pass

    def params(self, index: int = -1) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(self.urls[index]).query))
