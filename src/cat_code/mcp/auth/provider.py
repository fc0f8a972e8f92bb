"""`McpAuth`: OAuth for one MCP server as an ``httpx2.Auth`` flow.

The flow yields the caller's request (with ``Authorization: Bearer`` when it goes to the
MCP server's origin and a token is held), then reacts to the answer: a 401 tries one
refresh, else discovers the authorization server afresh (it may have moved) and signs in;
a 403 ``insufficient_scope`` re-authorizes for the wider scope; each time the request is
sent once more. A DPoP-bound token (RFC 9449, when the authorization server offers ES256)
goes with the ``DPoP`` scheme and a fresh proof by the server's key; a 401
``use_dpop_nonce`` with a new nonce sends the request once more with it.

Invariants: at most `MAX_AUTHORIZATIONS` sign-ins per request, and a 401 right after a
sign-in ends the request (the pipeline raises `AuthenticationRequired`);
one refresh at a time per server, under ``store.locked`` with the store re-read inside;
one sign-in at a time per `McpAuth`; discovery, registration and token requests use the
auth layer's own client (no redirects, never this auth); secrets never reach a log line.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator

import httpx2

from cat_code.mcp.auth._http import new_client
from cat_code.mcp.auth.challenge import (
    OAUTH_SCHEMES,
    BearerChallenge,
    bearer_challenge,
    parse_challenges,
)
from cat_code.mcp.auth.discovery import (
    AuthServerMetadata,
    fallback_auth_server_metadata,
    fetch_auth_server_metadata,
    fetch_resource_metadata,
)
from cat_code.mcp.auth.dpop import DPOP_ALGORITHM, USE_DPOP_NONCE, DpopProver, new_private_key_pem
from cat_code.mcp.auth.enterprise import jwt_bearer_grant, request_id_jag
from cat_code.mcp.auth.flow import authorize, choose_scope
from cat_code.mcp.auth.registration import configured_registration
from cat_code.mcp.auth.tokens import TokenEndpointError, client_credentials, refresh
from cat_code.mcp.auth.types import (
    AuthorizationFailed,
    Authorizer,
    ClientRegistration,
    NeedsLogin,
    OAuthSettings,
    Tokens,
    TokenStore,
    canonical_server_url,
)
from cat_code.mcp.auth.workload import workload_assertion
from cat_code.mcp.transports.http_pipeline import public_url, same_origin

logger = logging.getLogger(__name__)

#: Sign-ins one request may cause (the first 401 and step-ups together); the spec says
#: "no more than a few", the conformance suite fails a client past three.
MAX_AUTHORIZATIONS = 3
#: The grants that need no person.
MACHINE_GRANTS = ("client_credentials", "id_jag", "jwt_bearer")


class McpAuth(httpx2.Auth):
    """Signs every request to one MCP server in, as the MCP authorization spec says.

    ``server_url`` is the entry's URL; ``store`` keeps tokens and registrations;
    ``authorizer`` is the person (None: a sign-in that needs one raises `NeedsLogin`);
    ``fresh`` ignores stored tokens (``cat-code mcp login``); ``http_client`` is used for
    discovery, registration and token requests (else one of its own, closed by `aclose`).

    Raised out of a request (through the pipeline): `NeedsLogin` when a person must sign
    in and there is no authorizer; `AuthorizationFailed` (or its `TokenEndpointError`)
    when signing in failed. Both are `AuthenticationRequired`.
    """

    def __init__(
        self,
        server_url: str,
        *,
        settings: OAuthSettings,
        store: TokenStore,
        authorizer: Authorizer | None = None,
        fresh: bool = False,
        http_client: httpx2.AsyncClient | None = None,
        shown_url: str = "",
    ) -> None:
        self.server_url = server_url
        self.settings = settings
        self.store = store
        self.authorizer = authorizer
        self.fresh = fresh
        #: The key of this server's tokens in the store.
        self.key = canonical_server_url(server_url)
        self._url = httpx2.URL(server_url)
        #: How messages name the server: the entry as written, masked, when the host says.
        self._shown = shown_url or public_url(self._url)
        self._http = http_client
        self._owns_http = http_client is None
        self._signed_in = False
        self._sign_in_lock = asyncio.Lock()
        #: The server's DPoP key, loaded (or made) when first needed, and its nonces.
        self._dpop: DpopProver | None = None

    # -- the httpx2 flow -----------------------------------------------------------------

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if not same_origin(request.url, self._url):
            yield request
            return
        tokens = await self._usable_tokens()
        self._present(request, tokens)
        response = yield request
        new_nonce = self._learn_nonce(request, response)
        authorizations = 0
        refreshed = False
        nonce_retried = False
        while True:
            status = response.status_code
            header = response.headers.get("www-authenticate")
            challenge = bearer_challenge(header)
            if status == 401 and header and not _offers_oauth(header):
                # Basic, Negotiate, ...: not OAuth. The server's own answer says what it wants.
                return
            if (
                status == 401
                and new_nonce
                and not nonce_retried
                and _bound(tokens)
                and _wants_dpop_nonce(header)
            ):
                # RFC 9449 §9: the token is fine, the proof lacked the nonce just given.
                nonce_retried = True
                self._present(request, tokens)
                response = yield request
                new_nonce = self._learn_nonce(request, response)
                continue
            if status == 401:
                if authorizations:
                    logger.warning("%s refused a token it just issued", self._shown)
                    return
                if tokens is not None and tokens.refresh_token and not refreshed:
                    refreshed = True
                    renewed = await self._refresh_rejected(tokens)
                    if renewed is not None:
                        tokens = renewed
                        self._present(request, tokens)
                        response = yield request
                        new_nonce = self._learn_nonce(request, response)
                        continue
                tokens = await self._sign_in(challenge, sent=tokens)
            elif status == 403 and challenge.error == "insufficient_scope":
                if authorizations >= MAX_AUTHORIZATIONS:
                    logger.warning(
                        "%s still wants more scope after %d sign-ins; giving up",
                        self._shown,
                        authorizations,
                    )
                    return
                tokens = await self._sign_in(challenge, sent=tokens, step_up=True)
            else:
                return
            authorizations += 1
            self._present(request, tokens)
            response = yield request
            new_nonce = self._learn_nonce(request, response)

    # -- public --------------------------------------------------------------------------

    @property
    def signed_in(self) -> bool:
        """Whether this object has completed a sign-in (not merely found stored tokens)."""
        return self._signed_in

    async def sign_in(self) -> Tokens:
        """Discover and sign in now, whatever is stored (``cat-code mcp login``)."""
        return await self._sign_in(BearerChallenge(), sent=None, force=True)

    async def aclose(self) -> None:
        """Close what this object opened (its own HTTP client)."""
        http, self._http = self._http, None
        if http is not None and self._owns_http:
            await http.aclose()

    # -- presenting tokens ---------------------------------------------------------------

    def _present(self, request: httpx2.Request, tokens: Tokens | None) -> None:
        """Put ``tokens`` on ``request``: ``Bearer``, or ``DPoP`` with a fresh proof."""
        if tokens is None:
            return
        if _bound(tokens):
            request.headers["Authorization"] = f"DPoP {tokens.access_token}"
            request.headers["DPoP"] = self._prover().proof(
                request.method, str(request.url), access_token=tokens.access_token
            )
        else:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
            request.headers.pop("DPoP", None)

    def _learn_nonce(self, request: httpx2.Request, response: httpx2.Response) -> bool:
        """Keep a DPoP nonce the server sent; whether it is a new one."""
        return self._dpop is not None and self._dpop.learn_nonce(str(request.url), response.headers)

    def _prover(self) -> DpopProver:
        """The server's DPoP key from the store, made (and stored) the first time."""
        if self._dpop is None:
            pem = self.store.dpop_key(self.key)
            if pem is None:
                pem = self.store.save_dpop_key(self.key, new_private_key_pem())
            try:
                self._dpop = DpopProver(pem)
            except ValueError as exc:
                # Tokens bound to it are lost either way: a new key lets a sign-in work.
                logger.warning("%s: %s; making a new one", self._shown, exc)
                pem = self.store.save_dpop_key(self.key, new_private_key_pem(), replace=True)
                self._dpop = DpopProver(pem)
        return self._dpop

    # -- tokens --------------------------------------------------------------------------

    def _client(self) -> httpx2.AsyncClient:
        if self._http is None:
            self._http = new_client()
            self._owns_http = True
        return self._http

    def _stored(self) -> Tokens | None:
        if self.fresh and not self._signed_in:
            return None
        return self.store.tokens(self.key)

    async def _usable_tokens(self) -> Tokens | None:
        """The stored tokens, refreshed first when they are about to expire."""
        tokens = self._stored()
        if tokens is None or not tokens.expired() or not tokens.refresh_token:
            return tokens
        async with self.store.locked(self.key):
            current = self._stored()  # another request or process may have refreshed
            if current is None or current.access_token != tokens.access_token:
                return current
            if not current.expired() or not current.refresh_token:
                return current
            return await self._refresh_locked(current) or self._stored()

    async def _refresh_rejected(self, sent: Tokens) -> Tokens | None:
        """After a 401: newer tokens from the store, else one refresh (None: sign in)."""
        async with self.store.locked(self.key):
            current = self._stored()
            if current is not None and current.access_token != sent.access_token:
                return current
            if current is None or not current.refresh_token:
                return None
            return await self._refresh_locked(current)

    async def _refresh_locked(self, tokens: Tokens) -> Tokens | None:
        """Refresh (the store's lock held); a refused refresh token is forgotten."""
        try:
            renewed = await refresh(
                self._client(),
                tokens,
                self._registration_of(tokens),
                private_key_pem=self.settings.private_key_pem,
                signing_algorithm=self.settings.signing_algorithm,
                dpop=self._prover() if _bound(tokens) else None,
            )
        except TokenEndpointError as exc:
            logger.info("refresh at %s refused (%s)", tokens.issuer, exc.error or exc.http_status)
            if exc.error in ("invalid_grant", "invalid_client", "unauthorized_client"):
                # Only the refused tokens go: never newer ones another task saved meanwhile.
                current = self.store.tokens(self.key)
                if current is not None and current.refresh_token == tokens.refresh_token:
                    self.store.forget(self.key)
            return None
        except AuthorizationFailed as exc:
            logger.info("refresh failed: %s", exc)
            return None
        self.store.save_tokens(self.key, renewed)
        logger.info("refreshed the token for %s", self._shown)
        return renewed

    def _registration_of(self, tokens: Tokens) -> ClientRegistration:
        """The client that got ``tokens`` (to authenticate their refresh)."""
        issuer, client_id = tokens.issuer or "", tokens.client_id or ""
        method = tokens.token_endpoint_auth_method
        settings = self.settings
        if settings.client_id and settings.client_id == client_id:
            if method is None:
                method = (
                    "private_key_jwt"
                    if settings.private_key_pem
                    else "client_secret_basic"
                    if settings.client_secret
                    else "none"
                )
            return ClientRegistration(
                issuer, client_id, settings.client_secret, method, source="config"
            )
        stored = self.store.registration(issuer)
        if stored is not None and stored.client_id == client_id:
            return stored
        # The authorization server's stored registration is another client now (a later
        # sign-in registered anew): these tokens refresh as their own client.
        secret = tokens.client_secret
        source = "dcr" if secret is not None else "cimd"
        return ClientRegistration(issuer, client_id, secret, method or "none", source=source)

    # -- sign-in -------------------------------------------------------------------------

    async def _sign_in(
        self,
        challenge: BearerChallenge,
        *,
        sent: Tokens | None,
        step_up: bool = False,
        force: bool = False,
    ) -> Tokens:
        async with self._sign_in_lock:
            current = self._stored()
            fresher = current is not None and (
                sent is None or current.access_token != sent.access_token
            )
            if fresher and not step_up and not force:
                assert current is not None
                return current  # another request signed in while this one waited
            previous = sent.scope if step_up and sent is not None else None
            tokens = await self._obtain(challenge, previous)
            self.store.save_tokens(self.key, tokens)
            self._signed_in = True
            logger.info("signed in to %s at %s", self._shown, tokens.issuer)
            return tokens

    async def _obtain(self, challenge: BearerChallenge, previous_scope: str | None) -> Tokens:
        """Discovery, then the grant: a machine's own, or a person through the authorizer."""
        grant = self.settings.grant_type
        machine = grant in MACHINE_GRANTS
        if not machine and self.authorizer is None:
            raise NeedsLogin(f"{self._shown} needs a sign-in")
        http = self._client()
        prm = await fetch_resource_metadata(http, self.server_url, challenge.resource_metadata)
        if prm is not None:
            metadata = await fetch_auth_server_metadata(http, prm.authorization_servers[0])
            resource: str | None = prm.resource
            resource_scopes = prm.scopes_supported
        else:
            metadata = await fallback_auth_server_metadata(http, self.server_url)
            resource, resource_scopes = self.key, None
        dpop = self._prover() if _offers_dpop(metadata) else None
        if not machine:
            assert self.authorizer is not None
            return await authorize(
                http,
                self.authorizer,
                metadata,
                settings=self.settings,
                store=self.store,
                resource=resource,
                scope=choose_scope(challenge.scope, resource_scopes, metadata, previous_scope),
                dpop=dpop,
            )
        scope = choose_scope(challenge.scope, resource_scopes, None, previous_scope)
        registration = configured_registration(self.settings, metadata)
        if grant == "jwt_bearer":
            # The workload's token is the credential; a client id, if any, only names it.
            registration = registration or ClientRegistration(metadata.issuer, "", source="config")
            assertion = workload_assertion(self.settings)
        elif registration is None:
            raise AuthorizationFailed(
                f"the {grant} grant needs oauth.clientId with a clientSecret or a private key"
            )
        elif grant == "id_jag":
            assertion = await request_id_jag(
                http, self.settings, audience=metadata.issuer, resource=resource, scope=scope
            )
        else:
            return await client_credentials(
                http,
                metadata.token_endpoint,
                registration,
                issuer=metadata.issuer,
                resource=resource,
                scope=scope,
                private_key_pem=self.settings.private_key_pem,
                signing_algorithm=self.settings.signing_algorithm,
                dpop=dpop,
            )
        return await jwt_bearer_grant(
            http,
            metadata.token_endpoint,
            registration,
            issuer=metadata.issuer,
            assertion=assertion,
            resource=resource,
            scope=scope,
            settings=self.settings,
            dpop=dpop,
        )


def _bound(tokens: Tokens | None) -> bool:
    """Whether ``tokens`` are DPoP-bound (presented with a proof of the server's key)."""
    return tokens is not None and tokens.token_type.lower() == "dpop"


def _offers_dpop(metadata: AuthServerMetadata) -> bool:
    """Whether the authorization server binds tokens to keys of cat-code's kind."""
    return DPOP_ALGORITHM in (metadata.dpop_signing_alg_values_supported or ())


def _offers_oauth(header: str) -> bool:
    """Whether a ``WWW-Authenticate`` value holds a Bearer or DPoP challenge (or none
    parses)."""
    challenges = parse_challenges(header)
    return not challenges or any(c.scheme in OAUTH_SCHEMES for c in challenges)


def _wants_dpop_nonce(header: str | None) -> bool:
    """Whether a ``WWW-Authenticate`` value says "use the DPoP nonce" (RFC 9449 §9)."""
    return any(
        c.scheme == "dpop" and c.params.get("error") == USE_DPOP_NONCE
        for c in parse_challenges(header or "")
    )
