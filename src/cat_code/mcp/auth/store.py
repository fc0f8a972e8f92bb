"""Token stores: `MemoryTokenStore` (tests, conformance) and, on disk, `FileTokenStore`.

Tokens are kept per MCP server (its `canonical_server_url`), registrations per
authorization server (its issuer): a registration is never reused at another server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from cat_code.mcp.auth.types import ClientRegistration, Tokens


class MemoryTokenStore:
    """A `TokenStore` that lives as long as the process."""

    def __init__(self) -> None:
        self._tokens: dict[str, Tokens] = {}
        self._registrations: dict[str, ClientRegistration] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def tokens(self, server: str) -> Tokens | None:
        return self._tokens.get(server)

    def save_tokens(self, server: str, tokens: Tokens) -> None:
        self._tokens[server] = tokens

    def forget(self, server: str) -> None:
        self._tokens.pop(server, None)

    def registration(self, issuer: str) -> ClientRegistration | None:
        return self._registrations.get(issuer)

    def save_registration(self, registration: ClientRegistration) -> None:
        self._registrations[registration.issuer] = registration

    @asynccontextmanager
    async def locked(self, server: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(server, asyncio.Lock())
        async with lock:
            yield
