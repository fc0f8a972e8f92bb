"""`McpAuth`: OAuth for one MCP server as an ``httpx2.Auth`` flow (being built; see the
package docstring for the design)."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import httpx2

from cat_code.mcp.auth.types import Authorizer, OAuthSettings, TokenStore


class McpAuth(httpx2.Auth):
    """Signs every request to one MCP server in, as the MCP authorization spec says.

    ``server_url`` is the entry's URL; ``store`` keeps tokens and registrations;
    ``authorizer`` is the person (None: a sign-in that needs one raises `NeedsLogin`);
    ``fresh`` ignores stored tokens (``cat-code mcp login``); ``http_client`` is used for
    discovery, registration and token requests (else one of its own, closed by `aclose`).
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
    ) -> None:
        self.server_url = server_url
        self.settings = settings
        self.store = store
        self.authorizer = authorizer
        self.fresh = fresh
        self._http = http_client

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        raise NotImplementedError
        yield request  # pragma: no cover

    async def aclose(self) -> None:
        """Close what this object opened (its own HTTP client)."""
