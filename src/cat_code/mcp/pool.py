"""`McpPool`: every configured server, connected in parallel, none able to hurt another.

Each server gets one owner task that opens its transport, runs the handshake, lists the
tools, then waits for ``close_all`` and closes what it opened — open, use and close
happen in that one task. ``connect_all`` waits until every server is CONNECTED or
FAILED, each bounded by its startup timeout, so the wall time is that of the slowest
server. No exception of one server escapes its task. When a server reports that its
tool list changed, the pool re-lists it and updates the registry it registered into.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from cat_code.mcp.adapter import McpTool, assign_names
from cat_code.mcp.client import ClientState, ElicitationHandler, McpClient
from cat_code.mcp.config import BrokenServer, McpConfig, ServerConfig
from cat_code.mcp.errors import McpClientError
from cat_code.mcp.transport import Transport
from cat_code.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

#: Extra time over a server's startup timeout before its owner task is cancelled outright.
_STARTUP_SLACK_S = 1.0

TransportFactory = Callable[[ServerConfig], Transport]
#: Like the client's `ElicitationHandler`, told first which server is asking.
ServerElicitationHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(slots=True)
class ServerStatus:
    """What ``cat-code mcp list`` and ``/mcp`` show for one server."""

    name: str
    state: str
    tools: int
    transport: str
    target: str
    error: str | None = None
    protocol_version: str | None = None
    stderr_tail: list[str] = field(default_factory=list)
    server_info: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": self.state,
            "tools": self.tools,
            "transport": self.transport,
            "target": self.target,
            "error": self.error,
            "protocolVersion": self.protocol_version,
            "stderrTail": self.stderr_tail,
            "serverInfo": self.server_info,
        }


def default_transport(config: ServerConfig) -> Transport:
    """The transport an entry asks for."""
    if config.type == "stdio":
        from cat_code.mcp.stdio import StdioTransport

        assert config.command is not None
        return StdioTransport(
            config.command, config.args, env=config.env, cwd=config.cwd, name=config.name
        )
    if config.type == "http":
        from cat_code.mcp.http import StreamableHttpTransport

        assert config.url is not None
        if config.type_inferred:
            from cat_code.mcp.sse import FallbackHttpTransport

            return FallbackHttpTransport(config.url, headers=config.headers, name=config.name)
        return StreamableHttpTransport(config.url, headers=config.headers, name=config.name)
    if config.type == "sse":
        from cat_code.mcp.sse import LegacySseTransport

        assert config.url is not None
        return LegacySseTransport(config.url, headers=config.headers, name=config.name)
    raise McpClientError(f"unknown transport type {config.type!r}")


class McpServer:
    """One configured server: its connection, its tools, and the task that owns them."""

    def __init__(self, config: ServerConfig, pool: McpPool) -> None:
        self.config = config
        self.name = config.name
        self._pool = pool
        self.client: McpClient | None = None
        self.tools: list[McpTool] = []
        self.ready = asyncio.Event()
        self.error: str | None = None
        self.task: asyncio.Task[None] | None = None
        self._refresh: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def state(self) -> str:
        if self.config.disabled:
            return "DISABLED"
        self._notice_exit()
        if self.error is not None:
            return ClientState.FAILED.value
        if self.task is not None and not self.ready.is_set():
            # Shown by /mcp while servers start in the background: NEW would read as "idle".
            return "CONNECTING"
        if self.client is None:
            return ClientState.NEW.value
        return self.client.state.value

    def _transport_kind(self) -> str:
        """The configured transport, or ``sse`` once a type-less URL fell back to it."""
        if self.client is not None and getattr(self.client.transport, "fell_back", False):
            return "sse"
        return self.config.type

    def _notice_exit(self) -> None:
        """A server whose lasting link died while idle (a stdio child exited, a legacy SSE
        stream ended) is FAILED with the reason, not CONNECTED until the next call."""
        client = self.client
        if client is None or client.state is not ClientState.CONNECTED or self._stopping:
            return
        # Transports with a lasting link say why it ended; per-request HTTP has none.
        exit_reason = getattr(client.transport, "exit_reason", None)
        if callable(exit_reason) and (reason := exit_reason()):
            client.state = ClientState.FAILED
            client.last_error = str(reason)

    async def run(self, stop: asyncio.Event) -> None:
        """Owner task: connect, list tools, wait for stop, close. Never raises."""
        client: McpClient | None = None
        # The outer try closes what was opened on every path, a cancelled startup included.
        try:
            try:
                transport = self._pool.transport_factory(self.config)
                client = McpClient(
                    transport,
                    name=self.name,
                    request_timeout=self.config.request_timeout_s,
                    elicitation_handler=self._pool.elicitation_handler_for(self.name),
                    on_tools_changed=self._tools_changed,
                )
                self.client = client
                startup = self.config.startup_timeout_s
                try:
                    async with asyncio.timeout(startup):
                        await client.connect()
                        wire_tools = await client.list_tools()
                except TimeoutError:
                    raise McpClientError(f"did not finish starting within {startup:g} s") from None
                self.tools = self._pool.build_tools(self, wire_tools)
                logger.debug("%s: %d tool(s)", self.name, len(self.tools))
            except asyncio.CancelledError:
                self.error = self.error or "startup was cancelled"
                raise
            except Exception as exc:  # one server's failure must never reach another
                self.error = _describe(exc)
                if client is not None:
                    client.state = ClientState.FAILED
                    client.last_error = self.error
                logger.debug("%s: failed: %s", self.name, self.error)
            finally:
                self.ready.set()
            if self.error is None:
                await stop.wait()
            self._stopping = True
        finally:
            if self._refresh is not None:
                self._refresh.cancel()
            if client is not None:
                await _close_quietly(client)

    def _tools_changed(self) -> None:
        if not self.ready.is_set() or self.error is not None or self._stopping:
            # Still starting: the initial listing will see the new list. Stopping: a
            # refresh would only race the close (and warn that it failed).
            return
        if self._refresh is not None and not self._refresh.done():
            self._refresh.cancel()
        self._refresh = asyncio.ensure_future(self._pool.refresh_tools(self))

    def status(self) -> ServerStatus:
        self._notice_exit()
        client = self.client
        error = self.error
        if error is None and client is not None and client.state is ClientState.FAILED:
            error = client.last_error
        tail: list[str] = []
        if client is not None and self.state == "FAILED":
            tail = client.transport.diagnostics()
        return ServerStatus(
            name=self.name,
            state=self.state,
            tools=len(self.tools),
            transport=self._transport_kind(),
            target=self.config.target,
            error=error,
            protocol_version=client.protocol_version if client is not None else None,
            stderr_tail=tail,
            server_info=client.server_info if client is not None else {},
        )


class McpPool:
    """All configured MCP servers: parallel connect, tool registration, status, close."""

    def __init__(
        self,
        config: McpConfig,
        *,
        elicitation_handler: ServerElicitationHandler | None = None,
        transport_factory: TransportFactory = default_transport,
    ) -> None:
        self.config = config
        self.elicitation_handler = elicitation_handler
        self.transport_factory = transport_factory
        self.servers: list[McpServer] = [McpServer(c, self) for c in config.servers]
        self.broken: list[BrokenServer] = list(config.broken)
        self._stop = asyncio.Event()
        self._registry: ToolRegistry | None = None
        self._connected = False

    def elicitation_handler_for(self, server: str) -> ElicitationHandler | None:
        """The client-level handler for one server: the pool's handler, told the server's name."""
        handler = self.elicitation_handler
        if handler is None:
            return None

        async def elicit(params: dict[str, Any]) -> dict[str, Any]:
            return await handler(server, params)

        return elicit

    async def connect_all(self) -> None:
        """Start every enabled server and wait until each is CONNECTED or FAILED."""
        self._connected = True
        waiting = []
        for server in self.servers:
            if server.config.disabled:
                server.ready.set()
                continue
            server.task = asyncio.create_task(server.run(self._stop), name=f"mcp:{server.name}")
            waiting.append(self._await_ready(server))
        await asyncio.gather(*waiting)
        if self._registry is None:
            self._rename_in_config_order()

    def _rename_in_config_order(self) -> None:
        """Name every server's tools again in config order, so a collision between two
        servers goes the same way whichever of them finished connecting first."""
        wire_tools = {server.name: [t.wire for t in server.tools] for server in self.servers}
        for server in self.servers:
            server.tools = []
        for server in self.servers:
            if wire_tools[server.name]:
                server.tools = self.build_tools(server, wire_tools[server.name])

    async def _await_ready(self, server: McpServer) -> None:
        limit = server.config.startup_timeout_s + _STARTUP_SLACK_S
        try:
            async with asyncio.timeout(limit):
                await server.ready.wait()
        except TimeoutError:
            # The owner ignored its own timeout (a blocking transport?): cancel it outright.
            server.error = f"did not finish starting within {server.config.startup_timeout_s:g} s"
            if server.task is not None:
                server.task.cancel()

    def build_tools(self, server: McpServer, wire_tools: list[dict[str, Any]]) -> list[McpTool]:
        """Adapters for a server's tools, named uniquely against everything registered."""
        assert server.client is not None
        taken: set[str] = set()
        for other in self.servers:
            if other is not server:
                taken.update(t.name for t in other.tools)
        if self._registry is not None:
            own = {t.name for t in server.tools}
            taken.update(n for n in self._registry.names() if n not in own)
        by_name = {t["name"]: t for t in wire_tools}
        names = assign_names(server.name, by_name, taken)
        return [McpTool(server.client, server.name, by_name[o], names[o]) for o in sorted(names)]

    def register_into(self, registry: ToolRegistry) -> None:
        """Register every connected server's tools; later list changes update it too."""
        self._registry = registry
        for server in self.servers:
            for tool in server.tools:
                registry.register(tool)

    async def refresh_tools(self, server: McpServer) -> None:
        """Re-list a server's tools and swap them in the registry."""
        if server.client is None:
            return
        try:
            wire_tools = await server.client.list_tools(refresh=True)
        except McpClientError as exc:
            logger.warning("%s: could not re-list tools after a change: %s", server.name, exc)
            return
        old = server.tools
        new = self.build_tools(server, wire_tools)
        server.tools = new
        if self._registry is not None:
            for tool in old:
                self._registry.unregister(tool.name)
            for tool in new:
                self._registry.register(tool)
        logger.info("%s: tool list changed: %d tool(s) now", server.name, len(new))

    def tools(self, server: str | None = None) -> list[McpTool]:
        return [t for s in self.servers if server in (None, s.name) for t in s.tools]

    def find_tool(self, name: str) -> McpTool | None:
        return next((t for t in self.tools() if t.name == name), None)

    def status(self) -> list[ServerStatus]:
        """One entry per configured server, broken entries included, in config order."""
        statuses = [server.status() for server in self.servers]
        statuses.extend(
            ServerStatus(
                name=b.name,
                state="FAILED",
                tools=0,
                transport=b.type,
                target=b.target,
                error=b.error,
            )
            for b in self.broken
        )
        # Config order, broken entries in their place (the files' order is the user's).
        rank = {name: i for i, name in enumerate(self.config.order)}
        statuses.sort(key=lambda s: rank.get(s.name, len(rank)))
        return statuses

    @property
    def all_connected(self) -> bool:
        """Every enabled server connected (and no entry was broken)."""
        return not self.broken and all(s.state in ("CONNECTED", "DISABLED") for s in self.servers)

    async def close_all(self) -> None:
        """Close every server; returns when every owner task has finished its cleanup.

        A cancelled caller still waits for that (`hurry` makes it quick), then the
        cancellation goes on: no server is left half closed.
        """
        self._stop.set()
        tasks = [s.task for s in self.servers if s.task is not None]
        for task in tasks:
            if not any(s.task is task and s.ready.is_set() for s in self.servers):
                task.cancel()
        cancelled: asyncio.CancelledError | None = None
        pending = set(tasks)
        while pending:
            try:
                _, pending = await asyncio.wait(pending)
            except asyncio.CancelledError as exc:
                cancelled = exc
        for task in tasks:  # owner tasks never raise, but leave no error unretrieved
            if not task.cancelled():
                task.exception()
        if cancelled is not None:
            raise cancelled

    def hurry(self) -> None:
        """Make every close in progress (or to come) skip its grace periods."""
        for server in self.servers:
            if server.client is not None:
                server.client.transport.hurry()

    def kill_now(self) -> None:
        """Last resort, synchronous: kill every server process at once (HTTP has none)."""
        for server in self.servers:
            if server.client is not None:
                kill_now = getattr(server.client.transport, "kill_now", None)
                if kill_now is not None:
                    kill_now()

    async def __aenter__(self) -> McpPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close_all()


async def _close_quietly(client: McpClient) -> None:
    with contextlib.suppress(Exception):
        await asyncio.shield(client.close())


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, McpClientError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
