"""Reaching one configured server: the one place that builds transport, auth and client.

`default_transport` is the transport an entry asks for (stdio, Streamable HTTP, legacy
SSE), `legacy_fallback` the SSE transport a type-less ``url`` entry may fall back to,
`oauth_for` / `default_auth` its sign-in, and `build_client` the `McpClient` over them.
A `Connector` holds what every server of one pool shares (the token store, the protocol
eras remembered across runs, the roots, the elicitation handler, a test's transport
factory) and opens one server's `Connection`; `cat_code.host.servers.signin` builds its one
client with the same functions. Whoever opens a `Connection` closes it (`Connection.close`:
the client first, then its sign-in, each shielded so a cancelled caller still closes).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cat_code.host.config.load import HttpServerConfig, ServerConfig, StdioServerConfig
from cat_code.mcp.client import ElicitationHandler, McpClient
from cat_code.mcp.errors import describe_error
from cat_code.mcp.roots import Roots
from cat_code.mcp.transports.base import Transport

if TYPE_CHECKING:
    import httpx2

    from cat_code.host.servers.prestart import Prestarted
    from cat_code.mcp.auth.provider import McpAuth
    from cat_code.mcp.auth.types import Authorizer, TokenStore
    from cat_code.mcp.session.detect import EraMemory

logger = logging.getLogger(__name__)

TransportFactory = Callable[[ServerConfig], Transport]
#: How an HTTP entry gets its OAuth (None: it signs itself in, or not at all).
AuthFactory = Callable[[HttpServerConfig], "McpAuth | None"]
#: Like the client's `ElicitationHandler`, told first which server is asking.
ServerElicitationHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def default_transport(config: ServerConfig, *, auth: httpx2.Auth | None = None) -> Transport:
    """The transport an entry asks for; ``auth`` signs an HTTP or SSE entry's requests in."""
    if isinstance(config, StdioServerConfig):
        from cat_code.host.servers.prestart import stdio_transport

        return stdio_transport(config)
    if config.type == "sse":
        from cat_code.mcp.transports.sse import LegacySseTransport

        return LegacySseTransport(
            config.url,
            headers=config.headers,
            name=config.name,
            shown_url=config.display_target,
            auth=auth,
        )
    from cat_code.mcp.transports.http import StreamableHttpTransport

    return StreamableHttpTransport(
        config.url,
        headers=config.headers,
        name=config.name,
        shown_url=config.display_target,
        auth=auth,
    )


def legacy_fallback(
    config: ServerConfig, *, auth: httpx2.Auth | None = None
) -> Callable[[], Transport] | None:
    """For a type-less ``url`` entry: how to build the legacy SSE transport it may fall back to."""
    if not isinstance(config, HttpServerConfig) or not config.legacy_fallback:
        return None
    url, headers, name, shown = config.url, config.headers, config.name, config.display_target

    def build() -> Transport:
        from cat_code.mcp.transports.sse import LegacySseTransport

        return LegacySseTransport(url, headers=headers, name=name, shown_url=shown, auth=auth)

    return build


def oauth_for(
    config: HttpServerConfig,
    store: TokenStore,
    *,
    authorizer: Authorizer | None = None,
    fresh: bool = False,
) -> McpAuth:
    """The OAuth of an HTTP entry, with its ``oauth`` block (whatever its headers say)."""
    from cat_code.mcp.auth.provider import McpAuth
    from cat_code.mcp.auth.types import OAuthSettings

    return McpAuth(
        config.url,
        settings=config.oauth or OAuthSettings(),
        store=store,
        authorizer=authorizer,
        fresh=fresh,
        shown_url=config.display_target,
    )


def default_auth(
    config: HttpServerConfig,
    store: TokenStore,
    *,
    authorizer: Authorizer | None = None,
    fresh: bool = False,
) -> McpAuth | None:
    """OAuth for an HTTP entry, with its ``oauth`` block; None when the entry sends its own
    ``Authorization`` header (then cat-code never starts a sign-in)."""
    if config.has_own_authorization:
        return None
    return oauth_for(config, store, authorizer=authorizer, fresh=fresh)


def build_client(
    config: ServerConfig,
    *,
    auth: McpAuth | None = None,
    transport: Transport | None = None,
    request_timeout: float | None = None,
    elicitation_handler: ElicitationHandler | None = None,
    on_tools_changed: Callable[[], None] | None = None,
    on_lost: Callable[[str], None] | None = None,
    era_memory: EraMemory | None = None,
    roots: Roots | None = None,
) -> McpClient:
    """The client of one entry, over ``transport`` (else the one it asks for, signed in
    by ``auth``), with its legacy fallback, timeout and protocol version."""
    return McpClient(
        transport if transport is not None else default_transport(config, auth=auth),
        name=config.name,
        request_timeout=config.request_timeout_s if request_timeout is None else request_timeout,
        elicitation_handler=elicitation_handler,
        on_tools_changed=on_tools_changed,
        on_lost=on_lost,
        fallback=legacy_fallback(config, auth=auth),
        protocol_version=config.protocol_version,
        era_memory=era_memory,
        roots=roots,
        skills=True,
    )


@dataclass(slots=True)
class Connection:
    """What one connect attempt opened: the client and the sign-in it owns (if any)."""

    client: McpClient
    auth: McpAuth | None = None

    async def close(self) -> None:
        """Close the client, then its sign-in; never raises but for cancellation."""
        try:
            await asyncio.shield(self.client.close())
        except Exception as exc:  # closing must go on for the others; -v says why
            logger.debug("%s: error while closing: %s", self.client.name, describe_error(exc))
        if self.auth is not None:
            await self.close_auth(self.auth, self.client.name)

    @staticmethod
    async def close_auth(auth: McpAuth, name: str) -> None:
        try:
            await asyncio.shield(auth.aclose())
        except Exception as exc:  # closing must go on; -v says why
            logger.debug("%s: error while closing its sign-in: %s", name, describe_error(exc))


class Connector:
    """What every server of one pool is reached with; opens one server's `Connection`.

    ``transport_factory``, when given (tests, benchmarks), builds the whole transport,
    auth included; otherwise each entry gets `default_transport`, signed in by
    ``auth_factory`` or, by default, `default_auth` over the token store, or, for its
    first connect, the transport ``prestarted`` spawned for it.
    """

    def __init__(
        self,
        roots: Roots,
        *,
        era_memory: EraMemory | None = None,
        elicitation_handler: ServerElicitationHandler | None = None,
        transport_factory: TransportFactory | None = None,
        auth_factory: AuthFactory | None = None,
        token_store: TokenStore | None = None,
        prestarted: Prestarted | None = None,
    ) -> None:
        #: The folders every server may work in (cwd and ``--add-dir``), shared by all.
        self.roots = roots
        #: Protocol eras remembered across runs (``$CAT_CODE_HOME/eras.json``).
        self.era_memory = era_memory
        self.elicitation_handler = elicitation_handler
        self.transport_factory = transport_factory
        self.auth_factory = auth_factory
        self._token_store = token_store
        #: Stdio children the front end spawned early (`cat_code.host.servers.prestart`).
        self.prestarted = prestarted

    @property
    def token_store(self) -> TokenStore:
        """Where sign-ins are kept: ``$CAT_CODE_HOME/credentials.json`` unless given."""
        if self._token_store is None:
            from cat_code.host.state.home import token_store

            self._token_store = token_store()
        return self._token_store

    def auth_for(self, config: ServerConfig) -> McpAuth | None:
        """The OAuth of one entry's connection (None for stdio and self-signed entries)."""
        if not isinstance(config, HttpServerConfig):
            return None
        if self.auth_factory is not None:
            return self.auth_factory(config)
        return default_auth(config, self.token_store)

    def elicitation_handler_for(self, server: str) -> ElicitationHandler | None:
        """The client-level handler for one server: the pool's handler, told the server's name."""
        handler = self.elicitation_handler
        if handler is None:
            return None

        async def elicit(params: dict[str, Any]) -> dict[str, Any]:
            return await handler(server, params)

        return elicit

    async def open(
        self,
        config: ServerConfig,
        *,
        on_tools_changed: Callable[[], None],
        on_lost: Callable[[str], None],
    ) -> Connection:
        """One server's client (not connected yet) and the sign-in it owns."""
        auth: McpAuth | None = None
        transport: Transport | None = None
        try:
            if self.transport_factory is not None:
                # A custom factory builds the whole transport, auth included.
                transport = self.transport_factory(config)
            else:
                auth = self.auth_for(config)
                if self.prestarted is not None:
                    transport = self.prestarted.take(config)
            client = build_client(
                config,
                auth=auth,
                transport=transport,
                elicitation_handler=self.elicitation_handler_for(config.name),
                on_tools_changed=on_tools_changed,
                on_lost=on_lost,
                era_memory=self.era_memory,
                roots=self.roots,
            )
        except BaseException:
            if auth is not None:  # nothing else owns it yet
                await Connection.close_auth(auth, config.name)
            raise
        return Connection(client, auth)


__all__ = [
    "AuthFactory",
    "Connection",
    "Connector",
    "ServerElicitationHandler",
    "TransportFactory",
    "build_client",
    "default_auth",
    "default_transport",
    "legacy_fallback",
    "oauth_for",
]
