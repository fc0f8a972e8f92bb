"""The token endpoint: the authorization-code exchange, refresh, and the
``client_credentials`` grant, each with the client authentication its registration names
(``none``, ``client_secret_basic``, ``client_secret_post``, ``private_key_jwt`` per
RFC 7523 with ``aud`` = the authorization server's issuer).

With a `DpopProver` every token request carries a DPoP proof (RFC 9449 §5), sent once
more when the server answers ``use_dpop_nonce`` with a new nonce (§8), and the token may
come back as ``DPoP`` (bound to the prover's key) instead of ``Bearer``.

Invariants: ``resource`` is sent on every request exactly as given (the PRM's value);
redirects are never followed; errors name the endpoint, the status and the OAuth error
code, never a token, code, verifier, secret or assertion. Answers are read leniently
(``token_type`` in any case, ``expires_in`` as a string, no ``scope`` = as requested).
"""

from __future__ import annotations

import base64
import logging
import time
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx2

from cat_code.mcp.auth._http import json_object, send, where
from cat_code.mcp.auth.dpop import USE_DPOP_NONCE, DpopProver
from cat_code.mcp.auth.types import (
    AuthorizationFailed,
    ClientRegistration,
    Tokens,
    sendable_token,
)

logger = logging.getLogger(__name__)

JWT_BEARER_ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: A client assertion is good for this long (RFC 7523 wants a short life).
ASSERTION_LIFETIME_S = 300


class TokenEndpointError(AuthorizationFailed):
    """The token endpoint refused (``error`` is its OAuth error code, e.g. ``invalid_grant``)."""

    def __init__(self, message: str, error: str | None, status_code: int) -> None:
        super().__init__(message)
        self.error = error
        self.http_status = status_code


def client_auth(
    registration: ClientRegistration,
    form: dict[str, str],
    *,
    audience: str,
    private_key_pem: str | None = None,
    signing_algorithm: str | None = None,
) -> dict[str, str]:
    """Add the client's authentication to ``form``; return the headers it needs."""
    method = registration.token_endpoint_auth_method
    secret = registration.client_secret
    # client_id goes in the body with every method: RFC 6749 §4.1.3 asks for it on a
    # code exchange, and servers (the `mcp` SDK's) refuse a Basic request without it.
    # (A JWT bearer grant may come from no client at all: then there is none to send.)
    if registration.client_id:
        form["client_id"] = registration.client_id
    if method == "client_secret_basic" and secret is not None:
        # RFC 6749 §2.3.1: both parts form-urlencoded before Base64.
        pair = f"{quote(registration.client_id, safe='')}:{quote(secret, safe='')}"
        return {"authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
    if method == "client_secret_post" and secret is not None:
        form["client_secret"] = secret
    elif method == "private_key_jwt":
        if not private_key_pem:
            raise AuthorizationFailed("private_key_jwt needs a private key (oauth.privateKeyFile)")
        form["client_assertion_type"] = JWT_BEARER_ASSERTION
        form["client_assertion"] = client_assertion(
            registration.client_id, audience, private_key_pem, signing_algorithm
        )
    return {}


def client_assertion(
    client_id: str, audience: str, private_key_pem: str, algorithm: str | None = None
) -> str:
    """An RFC 7523 client assertion: ``iss`` = ``sub`` = the client, ``aud`` = the issuer,
    signed by PyJWT with the algorithm the key calls for (or the one configured, if it fits)."""
    # Imported here: only private_key_jwt needs them, and they are heavy imports.
    import jwt
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    try:
        key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise AuthorizationFailed("the private key for private_key_jwt cannot be read") from exc
    if isinstance(key, ec.EllipticCurvePrivateKey):
        curve_alg = {256: "ES256", 384: "ES384", 521: "ES512"}.get(key.curve.key_size)
        alg = algorithm or curve_alg
        if alg != curve_alg:
            raise AuthorizationFailed(f"{alg} does not go with an EC {key.curve.name} key")
    elif isinstance(key, rsa.RSAPrivateKey):
        alg = algorithm or "RS256"
        if alg not in ("RS256", "RS384", "RS512"):
            raise AuthorizationFailed(f"{alg} does not go with an RSA key")
    else:
        raise AuthorizationFailed("private_key_jwt takes an EC or RSA private key")
    now = int(time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "jti": uuid.uuid4().hex,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME_S,
    }
    return jwt.encode(claims, key, algorithm=alg, headers={"typ": "JWT"})


async def token_request(
    http: httpx2.AsyncClient,
    endpoint: str,
    form: dict[str, str],
    registration: ClientRegistration,
    *,
    issuer: str,
    resource: str | None = None,
    requested_scope: str | None = None,
    private_key_pem: str | None = None,
    signing_algorithm: str | None = None,
    previous: Tokens | None = None,
    dpop: DpopProver | None = None,
) -> Tokens:
    """POST ``form`` (``resource``, client authentication and a DPoP proof added) and read
    the tokens it gives. Every grant goes through here, so ``resource`` is on every token
    request."""
    if resource is not None:
        form["resource"] = resource
    grant = form.get("grant_type", "")

    async def post() -> tuple[httpx2.Response, bool]:
        """One try; with it, whether the server refused it for want of a new nonce."""
        # Built afresh for each try: a client assertion and a proof are each used once.
        headers = {"accept": "application/json"}
        headers.update(
            client_auth(
                registration,
                form,
                audience=issuer,
                private_key_pem=private_key_pem,
                signing_algorithm=signing_algorithm,
            )
        )
        if dpop is not None:
            headers["dpop"] = dpop.proof("POST", endpoint)
        answer = await send(
            http, "POST", endpoint, headers=headers, data=form, what=f"token request ({grant})"
        )
        fresh_nonce = dpop is not None and dpop.learn_nonce(endpoint, answer.headers)
        return answer, fresh_nonce and _wants_nonce(answer)

    response, again = await post()
    if again:
        logger.debug("%s wants a DPoP nonce; sending the token request once more", where(endpoint))
        response, _ = await post()
    data = json_object(response)
    if response.status_code != 200 or data is None:
        error = data.get("error") if data else None
        description = data.get("error_description") if data else None
        text = f"the token endpoint {where(endpoint)} refused the {grant} grant: "
        text += f"HTTP {response.status_code}"
        if 300 <= response.status_code < 400:
            text += " (a redirect, not followed)"
        if isinstance(error, str):
            text += f" {error}"
            if isinstance(description, str) and description:
                text += f": {description[:200]}"
        raise TokenEndpointError(
            text, error if isinstance(error, str) else None, response.status_code
        )
    return parse_tokens(
        data,
        endpoint=endpoint,
        issuer=issuer,
        registration=registration,
        requested_scope=requested_scope,
        resource=form.get("resource"),
        previous=previous,
        dpop=dpop is not None,
    )


def _wants_nonce(response: httpx2.Response) -> bool:
    """Whether ``response`` is RFC 9449 §8's refusal: "use the nonce I sent"."""
    data = json_object(response) if response.status_code == 400 else None
    return data is not None and data.get("error") == USE_DPOP_NONCE


def parse_tokens(
    data: Mapping[str, Any],
    *,
    endpoint: str,
    issuer: str,
    registration: ClientRegistration,
    requested_scope: str | None,
    resource: str | None,
    previous: Tokens | None = None,
    dpop: bool = False,
) -> Tokens:
    """A token response as `Tokens` (lenient where RFC 6749 servers differ); a ``DPoP``
    token only when the request carried a proof (``dpop``)."""
    access = data.get("access_token")
    if not isinstance(access, str) or not access:
        raise AuthorizationFailed(f"the token endpoint {where(endpoint)} gave no access_token")
    if not sendable_token(access):
        # Never quoted: it is a secret, whatever else is wrong with it.
        raise AuthorizationFailed(
            f"the token endpoint {where(endpoint)} gave an access token that is not plain "
            "visible ASCII; it cannot be sent in an HTTP header"
        )
    token_type = data.get("token_type", "Bearer")
    kinds = ("bearer", "dpop") if dpop else ("bearer",)
    if not isinstance(token_type, str) or token_type.lower() not in kinds:
        raise AuthorizationFailed(
            f"the token endpoint {where(endpoint)} gave a {token_type!r} token, not a "
            + ("Bearer or DPoP one" if dpop else "Bearer one")
        )
    expires_at = None
    expires_in = data.get("expires_in")
    try:
        if expires_in is not None and not isinstance(expires_in, bool):
            expires_at = time.time() + float(expires_in)
    except (TypeError, ValueError):
        logger.debug("ignoring an unreadable expires_in from %s", where(endpoint))
    refresh = data.get("refresh_token")
    if not sendable_token(refresh):
        refresh = previous.refresh_token if previous else None
    scope = data.get("scope")
    if not isinstance(scope, str):
        scope = requested_scope if requested_scope else (previous.scope if previous else None)
    return Tokens(
        access_token=access,
        token_type="DPoP" if token_type.lower() == "dpop" else "Bearer",
        expires_at=expires_at,
        refresh_token=refresh,
        scope=scope or None,
        issuer=issuer,
        token_endpoint=endpoint,
        client_id=registration.client_id,
        resource=resource,
        token_endpoint_auth_method=registration.token_endpoint_auth_method,
        # Only a registered client's secret is kept with the tokens (a later registration
        # may replace it); a configured one is read from the config, never stored.
        client_secret=registration.client_secret if registration.source == "dcr" else None,
        issued_at=time.time(),
    )


async def exchange_code(
    http: httpx2.AsyncClient,
    endpoint: str,
    registration: ClientRegistration,
    *,
    issuer: str,
    code: str,
    code_verifier: str,
    redirect_uri: str,
    resource: str | None,
    scope: str | None,
    private_key_pem: str | None = None,
    signing_algorithm: str | None = None,
    dpop: DpopProver | None = None,
) -> Tokens:
    """Redeem an authorization code (with its PKCE verifier)."""
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": code_verifier,
    }
    return await token_request(
        http,
        endpoint,
        form,
        registration,
        issuer=issuer,
        resource=resource,
        requested_scope=scope,
        private_key_pem=private_key_pem,
        signing_algorithm=signing_algorithm,
        dpop=dpop,
    )


async def refresh(
    http: httpx2.AsyncClient,
    tokens: Tokens,
    registration: ClientRegistration,
    *,
    private_key_pem: str | None = None,
    signing_algorithm: str | None = None,
    dpop: DpopProver | None = None,
) -> Tokens:
    """Trade ``tokens``' refresh token for new tokens at the endpoint that issued them."""
    if not tokens.refresh_token or not tokens.token_endpoint or not tokens.issuer:
        raise AuthorizationFailed("these tokens cannot be refreshed")
    form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
    return await token_request(
        http,
        tokens.token_endpoint,
        form,
        registration,
        issuer=tokens.issuer,
        resource=tokens.resource,
        requested_scope=tokens.scope,
        private_key_pem=private_key_pem,
        signing_algorithm=signing_algorithm,
        previous=tokens,
        dpop=dpop,
    )


async def client_credentials(
    http: httpx2.AsyncClient,
    endpoint: str,
    registration: ClientRegistration,
    *,
    issuer: str,
    resource: str | None,
    scope: str | None,
    private_key_pem: str | None = None,
    signing_algorithm: str | None = None,
    dpop: DpopProver | None = None,
) -> Tokens:
    """The machine-to-machine grant: no person, the client's own credentials."""
    form = {"grant_type": "client_credentials"}
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
        private_key_pem=private_key_pem,
        signing_algorithm=signing_algorithm,
        dpop=dpop,
    )
