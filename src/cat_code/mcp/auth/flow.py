"""The authorization-code flow with a person: PKCE S256, ``state``, the RFC 8707
``resource``, the scopes to ask for, the authorization URL, and the checks on the way
back (``state``, then RFC 9207 ``iss``) before the code is redeemed.

Invariants: the issuer, verifier and ``state`` are recorded together before the person is
sent anywhere; a response whose ``state`` or ``iss`` does not match is dropped without
acting on or showing its ``error``/``error_description`` (it may come from an attacker);
``iss`` is compared as a plain string (no normalisation); PKCE is refused when the server
does not list S256, except for the 2025-03-26 default endpoints (no metadata to ask).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit, urlunsplit

import httpx2

from cat_code.mcp.auth._http import where
from cat_code.mcp.auth.discovery import AuthServerMetadata
from cat_code.mcp.auth.dpop import DpopProver
from cat_code.mcp.auth.registration import client_identity
from cat_code.mcp.auth.tokens import exchange_code
from cat_code.mcp.auth.types import (
    AuthorizationFailed,
    AuthorizationResponse,
    Authorizer,
    OAuthSettings,
    Tokens,
    TokenStore,
)

logger = logging.getLogger(__name__)

OFFLINE_ACCESS = "offline_access"


@dataclass(frozen=True, slots=True)
class PendingAuthorization:
    """What one authorization request must be checked against when the person returns."""

    issuer: str
    redirect_uri: str
    resource: str | None
    scope: str | None
    iss_supported: bool
    code_verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48), repr=False)
    state: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)

    @property
    def code_challenge(self) -> str:
        return pkce_challenge(self.code_verifier)


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of a verifier (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def require_pkce(metadata: AuthServerMetadata) -> None:
    """Refuse a server that does not say it supports PKCE S256 (2025-11-25 MUST)."""
    if metadata.defaults:
        return
    if "S256" not in (metadata.code_challenge_methods_supported or ()):
        raise AuthorizationFailed(
            f"the authorization server {metadata.issuer} does not list PKCE S256 in "
            "code_challenge_methods_supported; cat-code will not sign in without it"
        )


def union_scopes(*scopes: str | None) -> str | None:
    """Space-separated scopes, each once, in first-seen order (None when empty)."""
    seen: dict[str, None] = {}
    for scope in scopes:
        for item in (scope or "").split():
            seen.setdefault(item)
    return " ".join(seen) or None


def choose_scope(
    challenge_scope: str | None,
    resource_scopes: Iterable[str] | None,
    metadata: AuthServerMetadata | None = None,
    previous: str | None = None,
) -> str | None:
    """The challenge's scope, else all the PRM's ``scopes_supported``, else none; with
    ``previous`` (step-up) kept; ``offline_access`` only when the server lists it."""
    scope = challenge_scope or (" ".join(resource_scopes) if resource_scopes else None)
    scope = union_scopes(previous, scope)
    if metadata is not None and OFFLINE_ACCESS in (metadata.scopes_supported or ()):
        scope = union_scopes(scope, OFFLINE_ACCESS)
    elif scope:
        scope = " ".join(s for s in scope.split() if s != OFFLINE_ACCESS) or None
    return scope


def authorization_url(
    metadata: AuthServerMetadata, client_id: str, pending: PendingAuthorization
) -> str:
    """The URL the person opens (the endpoint's own query kept)."""
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": pending.redirect_uri,
        "state": pending.state,
        "code_challenge": pending.code_challenge,
        "code_challenge_method": "S256",
    }
    if pending.resource is not None:
        params["resource"] = pending.resource
    if pending.scope:
        params["scope"] = pending.scope
    parts = urlsplit(metadata.authorization_endpoint)
    query = "&".join(q for q in (parts.query, urlencode(params)) if q)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def check_response(response: AuthorizationResponse, pending: PendingAuthorization) -> str:
    """The authorization code, once ``state`` and ``iss`` check out (RFC 9207 table)."""
    state = response.get("state")
    if state is None or not hmac.compare_digest(state.encode(), pending.state.encode()):
        raise AuthorizationFailed(
            "the authorization response does not match the request (state); ignored"
        )
    iss = response.get("iss")
    if iss is not None and iss != pending.issuer:
        raise AuthorizationFailed(
            f"the authorization response comes from another server (iss is not "
            f"{pending.issuer}); ignored"
        )
    if iss is None and pending.iss_supported:
        raise AuthorizationFailed(
            f"the authorization response lacks the iss that {pending.issuer} promises; ignored"
        )
    error = response.get("error")
    if error is not None:
        description = response.get("error_description") or ""
        raise AuthorizationFailed(
            f"the authorization server said no: {error[:100]}"
            + (f": {description[:200]}" if description else "")
        )
    code = response.get("code")
    if not code:
        raise AuthorizationFailed("the authorization response has no code")
    return code


async def authorize(
    http: httpx2.AsyncClient,
    authorizer: Authorizer,
    metadata: AuthServerMetadata,
    *,
    settings: OAuthSettings,
    store: TokenStore,
    resource: str | None,
    scope: str | None,
    dpop: DpopProver | None = None,
) -> Tokens:
    """Sign the person in at ``metadata``'s server and redeem the code for tokens (with a
    DPoP proof when ``dpop`` is given)."""
    require_pkce(metadata)
    # The URI registered here before, if any: the same one lets that registration be reused.
    known = store.registration(metadata.issuer)
    redirect_uri = await authorizer.redirect_uri(
        known.redirect_uris[0] if known is not None and known.redirect_uris else None
    )
    registration = await client_identity(http, metadata, settings, store, redirect_uri, scope)
    pending = PendingAuthorization(
        issuer=metadata.issuer,
        redirect_uri=redirect_uri,
        resource=resource,
        scope=scope,
        iss_supported=metadata.authorization_response_iss_parameter_supported,
    )
    logger.info("asking for authorization at %s", where(metadata.authorization_endpoint))
    url = authorization_url(metadata, registration.client_id, pending)
    response = await authorizer.authorize(url)
    code = check_response(response, pending)
    return await exchange_code(
        http,
        metadata.token_endpoint,
        registration,
        issuer=metadata.issuer,
        code=code,
        code_verifier=pending.code_verifier,
        redirect_uri=redirect_uri,
        resource=resource,
        scope=scope,
        private_key_pem=settings.private_key_pem,
        signing_algorithm=settings.signing_algorithm,
        dpop=dpop,
    )
