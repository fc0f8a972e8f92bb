"""Enterprise-managed authorization (SEP-990, "cross-app access"): no browser, no consent
screen. The user's ID token from the enterprise identity provider is exchanged there for
an Identity Assertion JWT Authorization Grant (ID-JAG, RFC 8693 token exchange) naming the
MCP server's authorization server and resource; that server then takes the ID-JAG as a
JWT bearer grant (RFC 7523 §2.1) from the configured client.

Invariants: the ID-JAG's ``audience`` is the authorization server's issuer and its
``resource`` the PRM's value, byte for byte, on both requests; neither the ID token nor the
ID-JAG reaches a log line or an error.

A library feature, not an ``mcp.json`` one: a program that holds the user's ID token (its
own SSO sign-in) passes ``OAuthSettings(grant_type="id_jag", idp_...)`` to `McpAuth`.
cat-code itself has no identity-provider sign-in to get that token from, and an ID token
lives about an hour, so an entry's ``oauth`` block does not offer this grant.
"""

from __future__ import annotations

import httpx2

from cat_code.mcp.auth._http import json_object, send, where
from cat_code.mcp.auth.dpop import DpopProver
from cat_code.mcp.auth.tokens import client_auth, token_request
from cat_code.mcp.auth.types import AuthorizationFailed, ClientRegistration, OAuthSettings, Tokens

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


async def request_id_jag(
    http: httpx2.AsyncClient,
    settings: OAuthSettings,
    *,
    audience: str,
    resource: str | None,
    scope: str | None,
) -> str:
    """Exchange the user's ID token at the identity provider for an ID-JAG."""
    endpoint, id_token = settings.idp_token_endpoint, settings.idp_id_token
    if not endpoint or not id_token or not settings.idp_client_id:
        raise AuthorizationFailed(
            "enterprise-managed sign-in needs the identity provider's token endpoint, "
            "client id and an ID token"
        )
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": id_token,
        "subject_token_type": ID_TOKEN_TYPE,
        "requested_token_type": ID_JAG_TYPE,
        "audience": audience,
    }
    if resource is not None:
        form["resource"] = resource
    if scope:
        form["scope"] = scope
    idp_client = ClientRegistration(
        issuer=endpoint,
        client_id=settings.idp_client_id,
        client_secret=settings.idp_client_secret,
        token_endpoint_auth_method="client_secret_basic" if settings.idp_client_secret else "none",
    )
    headers = {"accept": "application/json", **client_auth(idp_client, form, audience=endpoint)}
    response = await send(http, "POST", endpoint, headers=headers, data=form, what="token exchange")
    data = json_object(response)
    if response.status_code != 200 or data is None:
        error = data.get("error") if data else None
        raise AuthorizationFailed(
            f"the identity provider {where(endpoint)} refused the token exchange: "
            f"HTTP {response.status_code}" + (f" {error}" if isinstance(error, str) else "")
        )
    jag = data.get("access_token")
    if not isinstance(jag, str) or data.get("issued_token_type", ID_JAG_TYPE) != ID_JAG_TYPE:
        raise AuthorizationFailed(f"the identity provider {where(endpoint)} gave no ID-JAG")
    return jag


async def jwt_bearer_grant(
    http: httpx2.AsyncClient,
    endpoint: str,
    registration: ClientRegistration,
    *,
    issuer: str,
    assertion: str,
    resource: str | None,
    scope: str | None,
    settings: OAuthSettings,
    dpop: DpopProver | None = None,
) -> Tokens:
    """Redeem an assertion (an ID-JAG, or a workload's own token) at the authorization
    server: the RFC 7523 authorization grant."""
    form = {"grant_type": JWT_BEARER, "assertion": assertion}
    if scope:
        form["scope"] = scope
    return await token_request(
        http,
        endpoint,
        form,
        registration,
        issuer=issuer,
        resource=resource,
        requested_scope=scope,
        private_key_pem=settings.private_key_pem,
        signing_algorithm=settings.signing_algorithm,
        dpop=dpop,
    )
