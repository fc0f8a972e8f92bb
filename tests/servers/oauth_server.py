"""An MCP server behind OAuth 2.1, and its authorization server, on one 127.0.0.1 origin.

Usage: ``python oauth_server.py PORT [ACCESS_TTL_S]``. Built on the official SDK
(``mcp.server.auth``): Protected Resource Metadata, authorization-server metadata, Dynamic
Client Registration, ``/authorize`` (approves at once: no person needed), ``/token``
(PKCE-checked codes, rotating refresh tokens), ``/revoke``, and a bearer-protected
Streamable HTTP endpoint at ``/mcp`` with an ``echo`` tool. Access tokens live
``ACCESS_TTL_S`` (default 3600) seconds. Test-only routes: ``POST /test/expire-access``
(every access token stops working), ``POST /test/revoke`` (every token, refresh included),
``GET /test/stats`` (counts, and every token issued, so a test can look for leaks).
"""

from __future__ import annotations

import secrets
import sys
import time
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import JSONResponse, Response


class ApprovingProvider:
    """An in-memory authorization server that says yes to everyone at once."""

    def __init__(self, access_ttl: int) -> None:
        self.access_ttl = access_ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        #: Every secret handed out, for the leak check.
        self.issued: list[str] = []
        self.counts = {"authorize": 0, "code": 0, "refresh": 0, "register": 0}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.counts["register"] += 1
        self.clients[client_info.client_id] = client_info
        if client_info.client_secret:
            self.issued.append(client_info.client_secret)

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        self.counts["authorize"] += 1
        code = secrets.token_urlsafe(32)
        self.issued.append(code)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.counts["code"] += 1
        self.codes.pop(authorization_code.code, None)
        return self._issue(client, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        if self.refresh.pop(refresh_token.token, None) is None:
            raise TokenError("invalid_grant", "refresh token was revoked")
        self.counts["refresh"] += 1
        return self._issue(client, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(
        self, client: OAuthClientInformationFull, scopes: list[str], resource: str | None
    ) -> OAuthToken:
        assert client.client_id is not None
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        self.issued += [access, refresh]
        expires_at = int(time.time()) + self.access_ttl
        self.access[access] = AccessToken(
            token=access,
            client_id=client.client_id,
            scopes=scopes,
            expires_at=expires_at,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client.client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.access_ttl,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )


def build(port: int, access_ttl: int) -> MCPServer[Any]:
    origin = f"http://127.0.0.1:{port}"
    provider = ApprovingProvider(access_ttl)
    server: MCPServer[Any] = MCPServer(
        "oauth-test-server",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=origin,
            resource_server_url=f"{origin}/mcp",
            client_registration_options=ClientRegistrationOptions(enabled=True),
            revocation_options=RevocationOptions(enabled=True),
            validate_token_resource=False,
        ),
    )

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo: {text}"

    @server.custom_route("/test/expire-access", methods=["POST"])
    async def expire_access(request: Request) -> Response:
        for token in provider.access.values():
            token.expires_at = 0
        return JSONResponse({"ok": True})

    @server.custom_route("/test/revoke", methods=["POST"])
    async def revoke(request: Request) -> Response:
        provider.access.clear()
        provider.refresh.clear()
        return JSONResponse({"ok": True})

    @server.custom_route("/test/stats", methods=["GET"])
    async def stats(request: Request) -> Response:
        return JSONResponse({"counts": provider.counts, "issued": provider.issued})

    return server


def main() -> None:
    port = int(sys.argv[1])
    access_ttl = int(sys.argv[2]) if len(sys.argv) > 2 else 3600
    build(port, access_ttl).run("streamable-http", host="127.0.0.1", port=port)


if __name__ == "__main__":
    main()
