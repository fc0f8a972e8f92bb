"""OAuth 2.1 sign-in for remote MCP servers, as the MCP authorization spec describes it.

The package plugs into the one HTTP pipeline (`cat_code.mcp.transports.http_pipeline`) as an
``httpx2.Auth`` (`McpAuth`), so no transport knows OAuth. Layout, one concept a module:

- ``types``: the shared vocabulary: `OAuthSettings` (an entry's ``oauth`` block), `Tokens`,
  `ClientRegistration`, `AuthorizationResponse`, the `Authorizer` and `TokenStore`
  protocols, `NeedsLogin`, `AuthorizationFailed`, and `canonical_server_url`.
- ``challenge``: ``WWW-Authenticate`` parsing (RFC 7235 / 6750 / 9728).
- ``discovery``: Protected Resource Metadata (RFC 9728) and authorization-server metadata
  (RFC 8414 + OIDC discovery, the 2025-03-26 fallback), with the ``resource`` and ``issuer``
  checks.
- ``registration``: client identity: configured, Client ID Metadata Document, or Dynamic
  Client Registration (RFC 7591) kept per authorization server.
- ``tokens``: the token endpoint: code exchange, refresh, client credentials, and client
  authentication (``none``, ``client_secret_basic``, ``client_secret_post``,
  ``private_key_jwt``).
- ``enterprise``: enterprise-managed authorization (SEP-990): an IdP's ID token exchanged
  for an ID-JAG (RFC 8693), redeemed as a JWT bearer grant (RFC 7523); no browser.
- ``workload``: workload identity (SEP-1933): the platform's token for the workload is
  the JWT bearer grant's assertion; no browser, no secret.
- ``dpop``: DPoP (RFC 9449): proofs by a per-server key, nonces, ``DPoP``-bound tokens.
- ``flow``: the authorization-code flow (PKCE S256, ``state``, RFC 8707 ``resource``,
  scope choice, the RFC 9207 ``iss`` check) driven through an `Authorizer`.
- ``provider``: `McpAuth`, the ``httpx2.Auth``: bearer on requests to the MCP server's
  origin only, refresh before expiry (single-flight), discovery and sign-in on a 401,
  step-up on a 403 ``insufficient_scope``; without an `Authorizer`, `NeedsLogin`.
- ``store``: `FileTokenStore`, ``$CAT_CODE_HOME/credentials.json`` (0600 in a 0700 folder,
  atomic writes under a file lock; tokens, registrations, DPoP keys); `MemoryTokenStore`
  for tests and conformance.
- ``callback``: the loopback listener on 127.0.0.1, the pasted-URL fallback, the browser.

Invariants: tokens, codes, verifiers, client secrets, assertions and keys never reach a
log line, an error, status or ``--json``; the token goes only to the MCP server's origin;
requests to metadata, registration and token endpoints never follow redirects.
"""

from cat_code.mcp.auth.types import (
    AuthorizationFailed,
    AuthorizationResponse,
    Authorizer,
    ClientRegistration,
    NeedsLogin,
    OAuthSettings,
    Tokens,
    TokenStore,
    canonical_server_url,
)

__all__ = [
    "AuthorizationFailed",
    "AuthorizationResponse",
    "Authorizer",
    "ClientRegistration",
    "NeedsLogin",
    "OAuthSettings",
    "TokenStore",
    "Tokens",
    "canonical_server_url",
]
