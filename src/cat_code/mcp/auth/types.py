"""The OAuth package's shared vocabulary: settings, tokens, registrations, and the two
seams a host supplies — an `Authorizer` (the person in the browser) and a `TokenStore`.

Secrets (tokens, client secrets) live in these objects only; their ``repr`` never shows
them, so a stray log line or traceback cannot leak one. Times are wall-clock seconds
(``time.time()``): tokens outlive the process that got them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit, urlunsplit

from cat_code.mcp.errors import AuthenticationRequired

#: ``id_jag``: enterprise-managed authorization (SEP-990): an identity provider's ID token is
#: exchanged for an ID-JAG (RFC 8693), which the server's authorization server takes as a
#: JWT bearer grant (RFC 7523); no browser. ``jwt_bearer``: workload identity federation
#: (SEP-1933): a token the platform gave the workload (Kubernetes, a cloud, a CI system) is
#: the RFC 7523 assertion itself; no browser, no client secret.
GrantType = Literal["authorization_code", "client_credentials", "id_jag", "jwt_bearer"]
#: Refresh this long before the access token expires (clocks drift; requests take time).
REFRESH_MARGIN_S = 60.0


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    """An entry's ``oauth`` block (all optional): how cat-code identifies itself."""

    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    #: A Client ID Metadata Document URL, used as client_id where the server supports CIMD.
    client_metadata_url: str | None = None
    #: The loopback port of the redirect URI (else a free one).
    callback_port: int | None = None
    grant_type: GrantType = "authorization_code"
    #: PEM of the private key for ``private_key_jwt`` (read from ``privateKeyFile``).
    private_key_pem: str | None = field(default=None, repr=False)
    #: JWS algorithm for ``private_key_jwt`` (ES256, RS256, ...); else from the key type.
    signing_algorithm: str | None = None
    #: ``id_jag`` only: the identity provider's token endpoint, cat-code's client there,
    #: and the ID token it issued to the user.
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = field(default=None, repr=False)
    idp_id_token: str | None = field(default=None, repr=False)
    #: ``jwt_bearer`` only: the workload's assertion (a JWT), or the file that holds it,
    #: read at every sign-in (platforms rotate these tokens).
    assertion: str | None = field(default=None, repr=False)
    assertion_file: str | None = None


@dataclass(slots=True)
class Tokens:
    """What the token endpoint gave for one MCP server, and what is needed to renew it."""

    access_token: str = field(repr=False)
    token_type: str = "Bearer"
    #: Wall-clock expiry (None: the server did not say).
    expires_at: float | None = None
    refresh_token: str | None = field(default=None, repr=False)
    scope: str | None = None
    #: The authorization server that issued them, its token endpoint, and the client.
    issuer: str | None = None
    token_endpoint: str | None = None
    client_id: str | None = None
    #: The ``resource`` they were requested for (the PRM's value, byte for byte).
    resource: str | None = None
    #: How the client authenticated at the token endpoint (reused to refresh).
    token_endpoint_auth_method: str | None = None
    #: The secret of the client that got them, if it had one: a later sign-in to another
    #: server of the same authorization server may register a new client, and these
    #: tokens must still refresh as the client they belong to.
    client_secret: str | None = field(default=None, repr=False)
    #: Wall-clock time they were issued (to refresh short-lived tokens sensibly).
    issued_at: float | None = None

    def expired(self, now: float | None = None, margin: float = REFRESH_MARGIN_S) -> bool:
        """Whether the access token is (about to be) past its expiry: ``margin`` early,
        but never earlier than half its lifetime (a 30 s token is not stale at birth)."""
        if self.expires_at is None:
            return False
        if self.issued_at is not None:
            margin = min(margin, max(0.0, (self.expires_at - self.issued_at) / 2))
        return (time.time() if now is None else now) >= self.expires_at - margin

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Tokens:
        """Stored tokens; a `ValueError` for anything of the wrong shape (never a
        TypeError from deep inside, and never a token HTTP cannot carry)."""
        known = {k: data[k] for k in cls.__slots__ if k in data}
        if not sendable_token(known.get("access_token")):
            raise ValueError("no usable access_token")
        for key in ("expires_at", "issued_at"):
            value = known.get(key)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float)
            ):
                raise ValueError(f"{key} is not a number")
        for key in set(known) - {"access_token", "expires_at", "issued_at"}:
            if known[key] is not None and not isinstance(known[key], str):
                raise ValueError(f"{key} is not a string")
        return cls(**known)


def sendable_token(value: Any) -> bool:
    """Whether ``value`` can go in an ``Authorization: Bearer`` header: visible ASCII only
    (RFC 6750's b64token is narrower). Anything else would make HTTP refuse the header,
    and its error would quote the token."""
    return isinstance(value, str) and bool(value) and all("!" <= c <= "~" for c in value)


@dataclass(slots=True)
class ClientRegistration:
    """How cat-code is known to one authorization server (keyed by its issuer)."""

    issuer: str
    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    #: ``none``, ``client_secret_basic``, ``client_secret_post`` or ``private_key_jwt``.
    token_endpoint_auth_method: str = "none"
    redirect_uris: tuple[str, ...] = ()
    #: Where it came from: ``config``, ``cimd`` or ``dcr`` (only ``dcr`` is stored).
    source: str = "dcr"

    def to_json(self) -> dict[str, Any]:
        data = {k: getattr(self, k) for k in self.__slots__ if getattr(self, k) is not None}
        data["redirect_uris"] = list(self.redirect_uris)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ClientRegistration:
        known = {k: data[k] for k in cls.__slots__ if k in data}
        if not isinstance(known.get("issuer"), str) or not isinstance(known.get("client_id"), str):
            raise ValueError("no issuer or client_id")
        known["redirect_uris"] = tuple(known.get("redirect_uris") or ())
        return cls(**known)


#: The query parameters of the redirect back from the authorization server
#: (``code``, ``state``, ``iss``, or ``error`` and ``error_description``).
AuthorizationResponse = Mapping[str, str]


class Authorizer(Protocol):
    """The person's side of the authorization-code flow (a browser and a loopback
    listener, a pasted URL, or a headless test double)."""

    async def redirect_uri(self, preferred: str | None = None) -> str:
        """Get ready (start listening) and return the redirect URI to register and send.

        ``preferred`` is the redirect URI registered at this authorization server before:
        using it again (its port free) lets that registration be reused."""

    async def authorize(self, url: str) -> AuthorizationResponse:
        """Send the person to ``url`` and return the redirect's query parameters (bounded)."""

    async def aclose(self) -> None:
        """Stop listening. Idempotent."""


class TokenStore(Protocol):
    """Where tokens (per MCP server) and registrations (per authorization server) live."""

    def tokens(self, server: str) -> Tokens | None: ...

    def save_tokens(self, server: str, tokens: Tokens) -> None: ...

    def forget(self, server: str) -> None:
        """Drop the server's tokens (its authorization server's registration stays)."""

    def registration(self, issuer: str) -> ClientRegistration | None: ...

    def save_registration(self, registration: ClientRegistration) -> None: ...

    def dpop_key(self, server: str) -> str | None:
        """The PEM of the DPoP key ``server``'s tokens are bound to (None: none yet)."""

    def save_dpop_key(self, server: str, pem: str, *, replace: bool = False) -> str:
        """Keep ``pem`` as ``server``'s DPoP key and return the key now kept: one saved
        meanwhile (by another process) wins unless ``replace``."""

    def locked(self, server: str) -> AbstractAsyncContextManager[None]:
        """Held while refreshing ``server``'s tokens: one refresh at a time, across
        processes too; re-read `tokens` inside it (another may have refreshed)."""


class NeedsLogin(AuthenticationRequired):
    """The server wants a sign-in that needs a person, and none can be asked here."""

    def __init__(self, message: str, www_authenticate: str | None = None) -> None:
        super().__init__(message, www_authenticate)


class AuthorizationFailed(AuthenticationRequired):
    """OAuth could not get a token: discovery refused (a ``resource`` or ``issuer`` that
    does not match, an ``http`` endpoint), no way to identify the client, the person
    declined, a response that failed the ``state``/``iss`` checks, or the token endpoint
    said no. The message names URLs and OAuth error codes only, never a secret."""

    def __init__(self, message: str) -> None:
        super().__init__(message, None)


def canonical_server_url(url: str) -> str:
    """The key tokens are stored under: scheme and host lowercased, no fragment, no
    trailing slash (``https://MCP.example.com/mcp/#x`` → ``https://mcp.example.com/mcp``)."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))
