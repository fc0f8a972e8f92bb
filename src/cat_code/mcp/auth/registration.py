"""Client identity at one authorization server, in the spec's order: the entry's
``oauth.clientId`` (+ secret or private key), a Client ID Metadata Document URL where the
server supports CIMD, else Dynamic Client Registration (RFC 7591).

Invariants: a registration belongs to the issuer that made it (the store keys it so) and
is never offered to another; a DCR registration is made once per issuer and redirect URI,
then reused; what the server answers (method, secret) wins over what was asked.
"""

from __future__ import annotations

import logging

import httpx2

from cat_code.mcp.auth._http import json_object, send, where
from cat_code.mcp.auth.discovery import AuthServerMetadata
from cat_code.mcp.auth.types import (
    AuthorizationFailed,
    ClientRegistration,
    OAuthSettings,
    TokenStore,
)

logger = logging.getLogger(__name__)

CLIENT_NAME = "cat-code"
#: The methods a client secret can be sent with, in the order cat-code prefers them.
SECRET_METHODS = ("client_secret_basic", "client_secret_post")


def configured_registration(
    settings: OAuthSettings, metadata: AuthServerMetadata
) -> ClientRegistration | None:
    """The entry's own client, for this issuer (None when the entry names none)."""
    if not settings.client_id:
        return None
    supported = metadata.token_endpoint_auth_methods_supported
    if settings.private_key_pem:
        method = "private_key_jwt"
    elif settings.client_secret:
        listed = [m for m in SECRET_METHODS if supported and m in supported]
        method = listed[0] if listed else SECRET_METHODS[0]
    else:
        method = "none"
    return ClientRegistration(
        issuer=metadata.issuer,
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        token_endpoint_auth_method=method,
        source="config",
    )


async def client_identity(
    http: httpx2.AsyncClient,
    metadata: AuthServerMetadata,
    settings: OAuthSettings,
    store: TokenStore,
    redirect_uri: str,
    scope: str | None = None,
) -> ClientRegistration:
    """How cat-code is known to ``metadata.issuer``: configured, CIMD, or DCR."""
    configured = configured_registration(settings, metadata)
    if configured is not None:
        return configured
    if settings.client_metadata_url and metadata.client_id_metadata_document_supported:
        return ClientRegistration(
            issuer=metadata.issuer,
            client_id=settings.client_metadata_url,
            token_endpoint_auth_method="none",
            redirect_uris=(redirect_uri,),
            source="cimd",
        )
    stored = store.registration(metadata.issuer)
    if stored and stored.issuer == metadata.issuer and redirect_uri in stored.redirect_uris:
        return stored
    return await register(http, metadata, store, redirect_uri, scope)


def _requested_method(metadata: AuthServerMetadata) -> str:
    supported = metadata.token_endpoint_auth_methods_supported
    if not supported or "none" in supported:
        return "none"
    return next((m for m in SECRET_METHODS if m in supported), "none")


async def register(
    http: httpx2.AsyncClient,
    metadata: AuthServerMetadata,
    store: TokenStore,
    redirect_uri: str,
    scope: str | None = None,
) -> ClientRegistration:
    """Register cat-code as a native client (RFC 7591) and store the registration."""
    endpoint = metadata.registration_endpoint
    if not endpoint:
        raise AuthorizationFailed(
            f"the authorization server {metadata.issuer} does not register clients "
            "(no registration_endpoint): set oauth.clientId (and clientSecret) in the entry"
        )
    method = _requested_method(metadata)
    body: dict[str, object] = {
        "client_name": CLIENT_NAME,
        "application_type": "native",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    }
    if scope:
        body["scope"] = scope
    response = await send(
        http,
        "POST",
        endpoint,
        json_body=body,
        headers={"accept": "application/json"},
        what="client registration",
    )
    data = json_object(response)
    if response.status_code not in (200, 201) or data is None:
        error = data.get("error") if data else None
        raise AuthorizationFailed(
            f"client registration at {where(endpoint)} failed: HTTP {response.status_code}"
            + (f" ({error})" if isinstance(error, str) else "")
        )
    client_id = data.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise AuthorizationFailed(f"client registration at {where(endpoint)} gave no client_id")
    secret = data.get("client_secret")
    answered = data.get("token_endpoint_auth_method")
    uris = data.get("redirect_uris")
    registration = ClientRegistration(
        issuer=metadata.issuer,
        client_id=client_id,
        client_secret=secret if isinstance(secret, str) and secret else None,
        token_endpoint_auth_method=answered if isinstance(answered, str) else method,
        redirect_uris=tuple(u for u in uris if isinstance(u, str))
        if isinstance(uris, list) and uris
        else (redirect_uri,),
        source="dcr",
    )
    if registration.token_endpoint_auth_method in SECRET_METHODS and not registration.client_secret:
        raise AuthorizationFailed(
            f"client registration at {where(endpoint)} asks for a client secret it did not give"
        )
    store.save_registration(registration)
    logger.info("registered with %s", metadata.issuer)
    return registration
