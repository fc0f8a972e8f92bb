"""Signing in to and out of one remote server, for ``mcp login`` and ``/mcp login`` alike.

A sign-in connects the one server once through an ``McpAuth`` with a person at hand (a
`LoopbackAuthorizer`), so the whole OAuth flow runs and its tokens are stored; no token
is ever printed. `sign_in_entry` names why a server cannot sign in (`SignInTarget`).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from cat_code.host.config.load import HttpServerConfig, McpConfig

if TYPE_CHECKING:
    from cat_code.mcp.auth.callback import LoopbackAuthorizer
    from cat_code.mcp.auth.types import TokenStore
    from cat_code.mcp.client import McpClient


class SignInTarget(Exception):
    """The named server cannot sign in (unknown, stdio, or its own Authorization header)."""


def sign_in_entry(config: McpConfig, name: str) -> HttpServerConfig:
    """The HTTP entry ``name`` names, or `SignInTarget` saying why there is none."""
    entry = next((s for s in config.servers if s.name == name), None)
    if entry is None:
        broken = next((b for b in config.broken if b.name == name), None)
        if broken is not None:
            from cat_code.host.status import unusable_line

            raise SignInTarget(unusable_line(name, broken.error))
        waiting = next((w for w in config.waiting if w.name == name), None)
        if waiting is not None:  # never contacted, so never signed in, before approval
            raise SignInTarget(f"MCP server '{name}' is a project server: {waiting.hint}")
        known = ", ".join(config.names) or "none"
        raise SignInTarget(f"no MCP server named {name!r} (configured: {known})")
    if not isinstance(entry, HttpServerConfig):
        raise SignInTarget(
            f"MCP server '{name}' is a stdio server; only http and sse servers sign in"
        )
    if entry.has_own_authorization:
        raise SignInTarget(
            f"MCP server '{name}' sends its own Authorization header (its 'headers'); "
            "cat-code does not sign it in"
        )
    return entry


class SignIn:
    """One server's connection during a sign-in: what `run_until_signal` closes."""

    def __init__(
        self, entry: HttpServerConfig, authorizer: LoopbackAuthorizer, store: TokenStore
    ) -> None:
        from cat_code.host.servers.connect import build_client, oauth_for

        self.authorizer = authorizer
        self.auth = oauth_for(entry, store, authorizer=authorizer, fresh=True)
        # A person is signing in: the entry's request timeout must not cut them short
        # (the authorizer bounds the wait for them).
        self.client: McpClient = build_client(
            entry,
            auth=self.auth,
            request_timeout=authorizer.timeout + entry.request_timeout_s,
        )

    async def run(self) -> None:
        # Connecting meets the server's 401 (whose challenge may name where its metadata
        # is) and signs in; a server that lets a first request in without a token is
        # signed in to explicitly, from its well-known metadata.
        await self.client.connect()
        if not self.auth.signed_in:
            await self.auth.sign_in()
        await self.client.list_tools()

    async def close_all(self) -> None:
        try:
            await asyncio.shield(self.client.close())
        finally:
            await asyncio.shield(self.auth.aclose())
            await asyncio.shield(self.authorizer.aclose())

    def hurry(self) -> None:
        self.client.transport.hurry()

    def kill_now(self) -> None:
        self.client.transport.kill_now()


async def sign_in(
    entry: HttpServerConfig, authorizer: LoopbackAuthorizer, store: TokenStore
) -> None:
    """Sign in to one server (the whole OAuth flow, tokens stored) and close again; raises
    on failure with a message fit to show (never a secret)."""
    attempt = SignIn(entry, authorizer, store)
    try:
        await attempt.run()
    finally:
        await attempt.close_all()


def sign_out(entry: HttpServerConfig, store: TokenStore) -> bool:
    """Forget one server's tokens; whether there were any."""
    from cat_code.mcp.auth.types import canonical_server_url

    key = canonical_server_url(entry.url)
    had = store.tokens(key) is not None
    store.forget(key)
    return had
