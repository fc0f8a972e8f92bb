"""`McpPool`: every configured server, connected in parallel, none able to hurt another.

Each `McpServer` owns its state — one `ServerState`, changed only by the server itself,
read (never computed by side effect) by status — and its connection, through one owner
task that opens the transport, opens the session, lists the tools, waits for
``close_all`` and closes what it opened: open, use and close happen in that one task.
A connection that ends by itself (a stdio child exits) makes its server FAILED at that
moment, with the reason; the next call to one of its tools, or read or listing of its
resources, starts it again in place (the same `McpServer`, a new owner task and
connection), within a `RestartBudget` (3 restarts in 60 s), after which it stays FAILED
until `restart`. Tools call through their server,
not a connection, and the registered name of each (server, tool) is pinned for the life
of the pool, so a tool list change, a restart or a reload never renames a tool the model
has seen. Restarts, `reload`, `disable` and `enable` of one server are serialised by its
lifecycle lock. Creating a pool reaps the stdio groups a killed cat-code left behind
(`run_records`). ``connect_all``
waits until every server is CONNECTED or FAILED, each bounded by its startup timeout;
tools are then named in config order, so collisions go the same way every run.
``close_all`` finishes closing every server even when its caller is cancelled. HTTP and
SSE servers sign in through an ``McpAuth`` (OAuth) the server owns and closes with its
connection, unless their entry sends its own ``Authorization`` header; a server whose
sign-in needs a person is NEEDS_LOGIN (``cat-code mcp login NAME``), and `reconnect`
starts it again once signed in.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from cat_code.host.catalog import Gathered, UnknownServer, gather
from cat_code.host.config.load import (
    BrokenServer,
    HttpServerConfig,
    McpConfig,
    ServerConfig,
    StdioServerConfig,
    WaitingServer,
)
from cat_code.host.home import cat_code_home
from cat_code.host.reload import ReloadPlan, plan_reload
from cat_code.host.restarts import RestartBudget, RestartPolicy
from cat_code.host.tool_adapter import McpTool, assign_names
from cat_code.host.tool_filter import select_tools
from cat_code.mcp.client import ElicitationHandler, McpClient
from cat_code.mcp.errors import ConnectError, McpClientError, TransportClosed, describe_error
from cat_code.mcp.roots import Roots, default_roots
from cat_code.mcp.session.detect import ERAS_FILE, EraMemory
from cat_code.mcp.transports.base import Transport
from cat_code.mcp.wire import (
    CallToolResult,
    Completion,
    CompletionReference,
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ToolDefinition,
)
from cat_code.tools.base import ProgressCallback
from cat_code.tools.registry import ToolRegistry

if TYPE_CHECKING:
    import httpx2

    from cat_code.mcp.auth.provider import McpAuth
    from cat_code.mcp.auth.types import Authorizer, TokenStore

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
#: Extra time over a server's startup timeout before its owner task is cancelled outright.
_STARTUP_SLACK_S = 1.0

TransportFactory = Callable[[ServerConfig], Transport]
#: How an HTTP entry gets its OAuth (None: it signs itself in, or not at all).
AuthFactory = Callable[[HttpServerConfig], "McpAuth | None"]
#: Like the client's `ElicitationHandler`, told first which server is asking.
ServerElicitationHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class ServerState(enum.StrEnum):
    """Where one configured server is. Its string is what status and ``--json`` show."""

    NEW = "NEW"
    CONNECTING = "CONNECTING"
    CONNECTED = "CONNECTED"
    FAILED = "FAILED"
    DISABLED = "DISABLED"
    CLOSED = "CLOSED"
    #: The server wants a sign-in (OAuth) before it can connect.
    NEEDS_LOGIN = "NEEDS_LOGIN"
    #: A project (``./.mcp.json``) entry the user has not approved: never started.
    NEEDS_APPROVAL = "NEEDS_APPROVAL"
    #: A project entry the user rejected (``cat-code mcp reject``): never started.
    REJECTED = "REJECTED"


@dataclass(slots=True)
class ServerStatus:
    """What ``cat-code mcp list`` and ``/mcp`` show for one server."""

    name: str
    state: ServerState
    tools: int
    transport: str
    target: str
    error: str | None = None
    protocol_version: str | None = None
    #: ``modern`` (2026-07-28, stateless) or ``handshake``, once connected.
    era: str | None = None
    stderr_tail: list[str] = field(default_factory=list)
    server_info: dict[str, Any] = field(default_factory=dict)
    #: How many times cat-code started it again after it stopped by itself.
    restarts: int = 0
    #: FAILED for good: its restart budget ran out (only a restart by hand starts it).
    #: Kept out of ``error``, which reaches the model: the hint for it is the view's.
    gave_up: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "state": str(self.state),
            "tools": self.tools,
            "transport": self.transport,
            "target": self.target,
            "error": self.error,
            "protocolVersion": self.protocol_version,
            "era": self.era,
            "stderrTail": self.stderr_tail,
            "serverInfo": self.server_info,
            "restarts": self.restarts,
        }


def default_transport(config: ServerConfig, *, auth: httpx2.Auth | None = None) -> Transport:
    """The transport an entry asks for; ``auth`` signs an HTTP or SSE entry's requests in."""
    if isinstance(config, StdioServerConfig):
        from cat_code.host.run_records import GROUP_RECORDS
        from cat_code.mcp.transports.stdio import StdioTransport

        return StdioTransport(
            config.command,
            config.args,
            env=config.env,
            cwd=config.cwd,
            name=config.name,
            observer=GROUP_RECORDS,
        )
    if config.type == "sse":
        from cat_code.mcp.transports.sse import LegacySseTransport

        return LegacySseTransport(config.url, headers=config.headers, name=config.name, auth=auth)
    from cat_code.mcp.transports.http import StreamableHttpTransport

    return StreamableHttpTransport(config.url, headers=config.headers, name=config.name, auth=auth)


def legacy_fallback(
    config: ServerConfig, *, auth: httpx2.Auth | None = None
) -> Callable[[], Transport] | None:
    """For a type-less ``url`` entry: how to build the legacy SSE transport it may fall back to."""
    if not isinstance(config, HttpServerConfig) or not config.legacy_fallback:
        return None
    url, headers, name = config.url, config.headers, config.name

    def build() -> Transport:
        from cat_code.mcp.transports.sse import LegacySseTransport

        return LegacySseTransport(url, headers=headers, name=name, auth=auth)

    return build


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
    from cat_code.mcp.auth.provider import McpAuth
    from cat_code.mcp.auth.types import OAuthSettings

    return McpAuth(
        config.url,
        settings=config.oauth or OAuthSettings(),
        store=store,
        authorizer=authorizer,
        fresh=fresh,
    )


def login_hint(name: str) -> str:
    """What a NEEDS_LOGIN server's status says to do."""
    return f"run: cat-code mcp login {name}"


def needs_login(exc: BaseException) -> bool:
    """Whether a connect failed because a person must sign in (`NeedsLogin`, however wrapped)."""
    from cat_code.mcp.auth.types import NeedsLogin

    seen: BaseException | None = exc
    for _ in range(5):  # the cause chain; bounded against cycles
        if seen is None:
            return False
        if isinstance(seen, NeedsLogin):
            return True
        seen = seen.__cause__
    return False


class McpServer:
    """One configured server: its state, its connection, its tools, and their owner task."""

    def __init__(self, config: ServerConfig, pool: McpPool) -> None:
        self.config = config
        self.name = config.name
        self._pool = pool
        self._state = ServerState.DISABLED if config.disabled else ServerState.NEW
        #: Why the server is FAILED (None otherwise).
        self.error: str | None = None
        self._client: McpClient | None = None
        #: The server's tool definitions, as last listed.
        self.wire_tools: list[ToolDefinition] = []
        #: Its tools as registered (named by the pool).
        self.tools: list[McpTool] = []
        self.task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        #: Set to stop this server alone (`McpPool.reconnect`); the pool's event stops all.
        self._halt = asyncio.Event()
        self._refresh: asyncio.Task[None] | None = None
        self._stopping = False
        #: Automatic restarts so far (status shows them), and the window that limits them.
        self.restarts = 0
        self.budget = RestartBudget(pool.restart_policy)
        #: FAILED because its connection ended by itself: the next call restarts it.
        self._healable = False
        self._healing: asyncio.Task[None] | None = None
        #: Its restart budget ran out: FAILED until a restart by hand.
        self.gave_up = False
        #: Held while the server is stopped, restarted, disabled or enabled.
        self.lifecycle = asyncio.Lock()
        if config.disabled:
            self._ready.set()

    @property
    def state(self) -> ServerState:
        return self._state

    @property
    def client(self) -> McpClient | None:
        """The current connection (for diagnostics; tools call through the server)."""
        return self._client

    @property
    def instructions(self) -> str | None:
        client = self._client
        if self._state is ServerState.CONNECTED and client is not None:
            return client.instructions
        return None

    async def wait_ready(self) -> None:
        """Until the server is no longer starting (CONNECTED, FAILED or DISABLED)."""
        await self._ready.wait()

    def _fail(self, reason: str) -> None:
        self._state = ServerState.FAILED
        self.error = reason

    @property
    def healable(self) -> bool:
        """FAILED after it had connected, and not given up on: a call restarts it."""
        return self._state is ServerState.FAILED and self._healable

    # -- the owner task ------------------------------------------------------------------

    def start(self, stop: asyncio.Event) -> None:
        self._state = ServerState.CONNECTING
        self.task = asyncio.create_task(self._run(stop), name=f"mcp:{self.name}")

    async def _run(self, stop: asyncio.Event) -> None:
        """Connect, list tools, wait for stop, close. Never raises but for cancellation."""
        client: McpClient | None = None
        auth: McpAuth | None = None
        # The outer try closes what was opened on every path, a cancelled startup included.
        try:
            try:
                if self._pool.transport_factory is default_transport:
                    auth = self._pool.auth_for(self.config)
                    transport = default_transport(self.config, auth=auth)
                else:  # a custom factory builds the whole transport, auth included
                    transport = self._pool.transport_factory(self.config)
                client = McpClient(
                    transport,
                    name=self.name,
                    request_timeout=self.config.request_timeout_s,
                    elicitation_handler=self._pool.elicitation_handler_for(self.name),
                    on_tools_changed=self._tools_changed,
                    on_lost=self._lost,
                    fallback=legacy_fallback(self.config, auth=auth),
                    protocol_version=self.config.protocol_version,
                    era_memory=self._pool.era_memory,
                    roots=self._pool.roots,
                )
                self._client = client
                startup = self.config.startup_timeout_s
                try:
                    async with asyncio.timeout(startup):
                        await client.connect()
                        self.wire_tools = await client.list_tools()
                except TimeoutError:
                    raise McpClientError(f"did not finish starting within {startup:g} s") from None
                if client.closed_reason is not None:
                    raise TransportClosed(client.closed_reason)
                self._state = ServerState.CONNECTED
                logger.debug("%s: %d tool(s)", self.name, len(self.wire_tools))
            except asyncio.CancelledError:
                self._fail(self.error or "startup was cancelled")
                raise
            except Exception as exc:  # one server's failure must never reach another
                if needs_login(exc):
                    self._state = ServerState.NEEDS_LOGIN
                    self.error = login_hint(self.name)
                    logger.debug("%s: needs a sign-in", self.name)
                else:
                    self._fail(describe_error(exc))
                    logger.debug("%s: failed: %s", self.name, self.error)
            finally:
                self._ready.set()
            if self._state is ServerState.CONNECTED:
                await _first_of(stop, self._halt)
        finally:
            self._stopping = True
            if self._refresh is not None:
                self._refresh.cancel()
            if client is not None:
                await _close(client)
            if auth is not None:
                await _close_auth(auth, self.name)
            if self._state not in (ServerState.FAILED, ServerState.NEEDS_LOGIN):
                self._state = ServerState.CLOSED

    def _lost(self, reason: str) -> None:
        """The connection ended by itself: FAILED now, not at the next call or status."""
        if self._stopping or self._state is not ServerState.CONNECTED:
            return
        logger.warning("MCP server '%s' stopped: %s", self.name, reason)
        self._fail(reason)
        self._healable = True

    async def stop_owner(self) -> None:
        """End the owner task (it closes what it opened) and wait until it has."""
        self._halt.set()
        task = self.task
        if task is None:
            return
        if not self._ready.is_set():
            task.cancel()  # still starting: nothing to wait for
        await asyncio.wait([task])
        if not task.cancelled():
            task.exception()  # owner tasks never raise; leave nothing unretrieved

    def start_again(self, stop: asyncio.Event) -> None:
        """A new owner task after `stop_owner`: fresh events, no connection, no error."""
        self._ready = asyncio.Event()
        self._halt = asyncio.Event()
        self._stopping = False
        self._client = None
        self._refresh = None
        self.error = None
        self._healable = False
        self.gave_up = False
        self.start(stop)

    def disable(self) -> None:
        """DISABLED for this session (after `stop_owner`)."""
        self._state = ServerState.DISABLED
        self.error = None
        self._healable = False
        self.gave_up = False
        self._ready.set()

    def _tools_changed(self) -> None:
        if self._state is not ServerState.CONNECTED or self._stopping:
            # Still starting: the initial listing will see the new list. Stopping: a
            # refresh would only race the close (and warn that it failed).
            return
        if self._refresh is not None and not self._refresh.done():
            self._refresh.cancel()
        self._refresh = asyncio.ensure_future(self._pool.refresh_tools(self))

    # -- what tools and status use -------------------------------------------------------

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call one of this server's tools through its current connection (started again
        first if it stopped by itself since the last call)."""
        client = await self._reachable()
        # toolTimeoutMs, when the entry sets it, bounds tool calls instead of requestTimeoutMs.
        timeout = self.config.tool_timeout_s
        try:
            return await client.call_tool(tool, arguments, timeout=timeout, progress=progress)
        except (ConnectError, TransportClosed) as exc:
            if client is self._client:
                # A stdio child's exit was heard already (`_lost`); an HTTP server that
                # went away only shows here, in the call that could not reach it.
                self._lost(describe_error(exc))
            raise

    # -- resources and prompts (through the current connection) ------------------------

    async def _reachable(self) -> McpClient:
        """The connection, after starting the server again if it stopped by itself (within
        its restart budget): for tool calls and resources, which the model reaches for."""
        if self.healable:
            await self._pool.heal(self)
        return self._connected()

    def _connected(self) -> McpClient:
        client = self._client
        if self._state is not ServerState.CONNECTED or client is None:
            why = f": {self.error}" if self.error else ""
            raise TransportClosed(f"MCP server '{self.name}' is {self._state}{why}")
        return client

    def offers(self, feature: str) -> bool:
        """Whether the server is connected and declared ``feature`` (``resources``, ...)."""
        client = self._client
        connected = self._state is ServerState.CONNECTED
        return connected and client is not None and client.offers(feature)

    async def list_resources(self) -> list[Resource]:
        return await (await self._reachable()).list_resources()

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return await (await self._reachable()).list_resource_templates()

    async def read_resource(self, uri: str) -> ReadResourceResult:
        return await (await self._reachable()).read_resource(uri)

    async def list_prompts(self) -> list[Prompt]:
        return await self._connected().list_prompts()

    def cached_prompts(self) -> list[Prompt]:
        """The prompts as last listed (no request; [] when not listed or not connected)."""
        client = self._client
        if client is None or not self.offers("prompts"):
            return []
        return client.cached_prompts() or []

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> GetPromptResult:
        return await self._connected().get_prompt(name, arguments)

    async def complete(
        self,
        ref: CompletionReference,
        argument: str,
        value: str,
        context: dict[str, str] | None = None,
    ) -> Completion:
        return await self._connected().complete(ref, argument, value, context)

    def status(self) -> ServerStatus:
        client = self._client
        failed = self._state is ServerState.FAILED
        explained = failed or self._state is ServerState.NEEDS_LOGIN
        return ServerStatus(
            name=self.name,
            state=self._state,
            tools=len(self.tools),
            transport=client.transport.kind if client is not None else self.config.type,
            target=self.config.target,
            error=self.error if explained else None,
            protocol_version=client.protocol_version if client is not None else None,
            era=client.era if client is not None and client.protocol_version else None,
            stderr_tail=client.transport.diagnostics() if failed and client is not None else [],
            server_info=client.server_info if client is not None else {},
            restarts=self.restarts,
            gave_up=failed and self.gave_up,
        )

    def hurry(self) -> None:
        if self._client is not None:
            self._client.transport.hurry()

    def kill_now(self) -> None:
        if self._client is not None:
            self._client.transport.kill_now()


class McpPool:
    """All configured MCP servers: parallel connect, tool registration, status, close."""

    def __init__(
        self,
        config: McpConfig,
        *,
        elicitation_handler: ServerElicitationHandler | None = None,
        transport_factory: TransportFactory = default_transport,
        auth_factory: AuthFactory | None = None,
        token_store: TokenStore | None = None,
        era_memory: EraMemory | None = None,
        restart_policy: RestartPolicy | None = None,
        roots: Roots | None = None,
    ) -> None:
        from cat_code.host import run_records

        # Before any server starts: the groups a killed cat-code left are ended meanwhile.
        run_records.reap_orphans()
        self.config = config
        #: How often a server that stopped by itself is started again.
        self.restart_policy = restart_policy or RestartPolicy()
        #: The folders every server may work in (cwd and ``--add-dir``), shared by all.
        self.roots = default_roots() if roots is None else roots
        #: Protocol eras remembered across runs (``$CAT_CODE_HOME/eras.json``).
        self.era_memory = (
            EraMemory(cat_code_home() / ERAS_FILE) if era_memory is None else era_memory
        )
        self.elicitation_handler = elicitation_handler
        self.transport_factory = transport_factory
        self._auth_factory = auth_factory
        self._token_store = token_store
        self.servers: list[McpServer] = [McpServer(c, self) for c in config.servers]
        self.broken: list[BrokenServer] = list(config.broken)
        #: Project entries waiting for approval (or rejected): status rows, never started.
        self.waiting: list[WaitingServer] = list(config.waiting)
        self._stop = asyncio.Event()
        #: Restarts, reloads and the like under way (`_operation`).
        self._operations: set[asyncio.Task[Any]] = set()
        self._registry: ToolRegistry | None = None
        #: (server, tool) → registered name, for the life of the pool.
        self._pinned: dict[tuple[str, str], str] = {}

    @property
    def token_store(self) -> TokenStore:
        """Where sign-ins are kept: ``$CAT_CODE_HOME/credentials.json`` unless given."""
        if self._token_store is None:
            from cat_code.host.home import token_store

            self._token_store = token_store()
        return self._token_store

    def auth_for(self, config: ServerConfig) -> McpAuth | None:
        """The OAuth of one entry's connection (None for stdio and self-signed entries)."""
        if not isinstance(config, HttpServerConfig):
            return None
        if self._auth_factory is not None:
            return self._auth_factory(config)
        return default_auth(config, self.token_store)

    def server(self, name: str) -> McpServer | None:
        return next((s for s in self.servers if s.name == name), None)

    def _named(self, name: str) -> McpServer:
        server = self.server(name)
        if server is None:
            raise KeyError(name)
        if self._stop.is_set():
            raise TransportClosed("the MCP servers are closing")
        return server

    async def reconnect(self, name: str) -> McpServer:
        """Connect one server anew (after a sign-in, or by hand): stop its owner task if
        it has one, start a new one, and swap its tools in the registry. Its window of
        automatic restarts starts empty again."""
        server = self._named(name)

        async def work() -> None:
            async with server.lifecycle:
                if server.state is not ServerState.DISABLED:  # `enable` starts those
                    server.budget.reset()
                    await self._relaunch(server, keep_tools=False)

        await self._operation(work())
        return server

    async def restart(self, name: str) -> McpServer:
        """``/mcp restart NAME``: `reconnect`, also for a server that gave up restarting."""
        return await self.reconnect(name)

    async def disable(self, name: str) -> McpServer:
        """Stop one server and drop its tools, for this session (no file changes)."""
        server = self._named(name)

        async def work() -> None:
            async with server.lifecycle:
                await server.stop_owner()
                self._unpublish(server)
                server.disable()

        await self._operation(work())
        return server

    async def enable(self, name: str) -> McpServer:
        """Start a DISABLED server (disabled in its entry or by `disable`), for this session."""
        server = self._named(name)

        async def work() -> None:
            async with server.lifecycle:
                if server.state is ServerState.DISABLED:
                    await self._relaunch(server, keep_tools=False)

        await self._operation(work())
        return server

    async def _operation(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Run a lifecycle change to its end even if the caller is cancelled (Ctrl-C must
        not leave a server half restarted); `close_all` cancels it, at an await, where
        it has started nothing that the close would miss."""
        task = asyncio.ensure_future(work)
        self._operations.add(task)
        task.add_done_callback(self._operations.discard)
        return await asyncio.shield(task)

    async def heal(self, server: McpServer) -> None:
        """Start a server that stopped by itself again, if its budget allows; concurrent
        callers share one attempt, which a cancelled caller does not cut short."""
        if server._healing is None or server._healing.done():
            server._healing = asyncio.ensure_future(self._operation(self._heal(server)))
        await asyncio.shield(server._healing)

    async def _heal(self, server: McpServer) -> None:
        async with server.lifecycle:
            if not server.healable or self._stop.is_set():
                return  # another caller healed it already, or we are closing
            if not server.budget.take():
                server._healable = False
                server.gave_up = True
                # No command in it: the reason reaches the model, -p and `mcp call` too.
                server.error = (
                    f"{server.error} — not restarted again after {self.restart_policy.describe()}"
                )
                logger.warning(
                    "MCP server '%s' stopped again: %s (in the REPL, /mcp restart %s starts it)",
                    server.name,
                    server.error,
                    server.name,
                )
                return
            server.restarts += 1
            await self._relaunch(server, keep_tools=True)
            # A restart that failed to connect is tried again on the next call, while
            # the budget lasts.
            server._healable = server.state is ServerState.FAILED
            if server.state is ServerState.CONNECTED:
                logger.warning(
                    "MCP server '%s' restarted (%d× so far)", server.name, server.restarts
                )
            else:
                logger.warning("MCP server '%s' did not restart: %s", server.name, server.error)

    async def _relaunch(self, server: McpServer, *, keep_tools: bool) -> None:
        """Stop the server's owner task and start a new one, then publish its tools.

        ``keep_tools``: on failure the old tools stay registered, so a call can still
        reach the server (and restart it) later; otherwise they go as they do when a
        server fails at start.
        """
        await server.stop_owner()
        if not keep_tools:
            self._unpublish(server)
        if self._stop.is_set():
            return
        server.start_again(self._stop)
        await self._await_ready(server)
        if server.state is ServerState.CONNECTED:
            self._publish(server)

    def _unpublish(self, server: McpServer) -> None:
        if self._registry is not None:
            for tool in server.tools:
                self._registry.unregister(tool.name)
        server.tools = []

    async def reload(self, config: McpConfig) -> ReloadPlan:
        """Take a newly read config: new servers start, removed ones stop, changed ones
        (compared by value) restart, the rest go on untouched; the registry follows."""
        if self._stop.is_set():
            raise TransportClosed("the MCP servers are closing")
        return await self._operation(self._reload(config))

    async def _reload(self, config: McpConfig) -> ReloadPlan:
        plan = plan_reload([s.config for s in self.servers], config)
        going = [s for s in self.servers if s.name in plan.removed or s.name in plan.changed]
        await asyncio.gather(*(self._retire(s) for s in going))
        kept = {s.name: s for s in self.servers if s.name in plan.unchanged}
        servers: list[McpServer] = []
        for entry in config.servers:
            server = kept.get(entry.name)
            if server is None:
                server = McpServer(entry, self)
            else:
                server.config = entry  # equal but for where it was read from
            servers.append(server)
        self.config = config
        self.servers = servers
        self.broken = list(config.broken)
        self.waiting = list(config.waiting)
        fresh = [s for s in servers if s.state is ServerState.NEW]
        for server in fresh:
            server.start(self._stop)
        await asyncio.gather(*(self._await_ready(s) for s in fresh))
        for server in fresh:  # config order, as at start
            if server.state is ServerState.CONNECTED:
                self._publish(server)
        return plan

    async def _retire(self, server: McpServer) -> None:
        async with server.lifecycle:
            await server.stop_owner()
            self._unpublish(server)
            server._healable = False  # a call through an old tool must not start it again

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
        waiting = []
        for server in self.servers:
            if server.state is ServerState.NEW:
                server.start(self._stop)
                waiting.append(self._await_ready(server))
        await asyncio.gather(*waiting)
        # Named in config order, whichever server finished first: collisions go the same
        # way every run. (Names already given stay: they are pinned.)
        for server in self.servers:
            if server.state is ServerState.CONNECTED:
                self._publish(server)

    async def _await_ready(self, server: McpServer) -> None:
        limit = server.config.startup_timeout_s + _STARTUP_SLACK_S
        try:
            async with asyncio.timeout(limit):
                await server.wait_ready()
        except TimeoutError:
            # The owner ignored its own timeout (a blocking transport?): cancel it outright.
            server.error = f"did not finish starting within {server.config.startup_timeout_s:g} s"
            if server.task is not None:
                server.task.cancel()
                await asyncio.wait([server.task])

    def _publish(self, server: McpServer) -> None:
        """(Re)build a server's tools from its definitions under their pinned names, and
        swap them in the registry."""
        kept = select_tools(server.name, server.wire_tools, server.config)  # includeTools etc.
        by_name = {t["name"]: t for t in kept}
        new = [tool for tool in by_name if (server.name, tool) not in self._pinned]
        if new:
            taken = set(self._pinned.values())
            if self._registry is not None:
                taken.update(self._registry.names())
            for original, name in assign_names(server.name, new, taken).items():
                self._pinned[(server.name, original)] = name
        old = server.tools
        server.tools = sorted(
            (
                McpTool(
                    server,
                    by_name[t],
                    self._pinned[(server.name, t)],
                    max_output_tokens=server.config.max_output_tokens,
                )
                for t in by_name
            ),
            key=lambda registered: registered.name,
        )
        for tool in server.tools:  # tool search never defers an "alwaysLoad" server's tools
            tool.always_load = server.config.always_load
        if self._registry is not None:
            for tool in old:
                self._registry.unregister(tool.name)
            for tool in server.tools:
                self._registry.register(tool)

    def register_into(self, registry: ToolRegistry) -> None:
        """Register every connected server's tools; later list changes update it too."""
        self._registry = registry
        for server in self.servers:
            for tool in server.tools:
                registry.register(tool)

    async def refresh_tools(self, server: McpServer) -> None:
        """Re-list a server's tools and swap them in; on any failure the old list stays."""
        client = server.client
        if client is None:
            return
        try:
            server.wire_tools = await client.list_tools(refresh=True)
            self._publish(server)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a boundary: whatever went wrong, the old list stays
            logger.warning(
                "%s: could not re-list tools after a change (keeping the old list): %s",
                server.name,
                describe_error(exc),
            )
            return
        logger.info("%s: tool list changed: %d tool(s) now", server.name, len(server.tools))

    def tools(self, server: str | None = None) -> list[McpTool]:
        return [t for s in self.servers if server in (None, s.name) for t in s.tools]

    def find_tool(self, name: str) -> McpTool | None:
        return next((t for t in self.tools() if t.name == name), None)

    # -- resources and prompts across servers (`cat_code.host.catalog`) ------------------

    def connected(self, server: str | None = None) -> list[McpServer]:
        """The CONNECTED servers (or the one named); `UnknownServer` for a name not among them."""
        chosen = [s for s in self.servers if s.state is ServerState.CONNECTED]
        if server is None:
            return chosen
        found = [s for s in chosen if s.name == server]
        if not found:
            raise UnknownServer(server, [s.name for s in chosen])
        return found

    async def _with_resources(self, server: str | None) -> list[McpServer]:
        """`connected`, after starting again the servers (or the one named) that offered
        resources and stopped by themselves: a resource read or listing heals a crash as a
        tool call does. Not a server without resources, nor the prompt listing (the REPL
        refreshes it around every line): nothing restarts behind the user's back."""
        stopped = [
            s
            for s in self.servers
            if s.healable
            and server in (None, s.name)
            and s.client is not None  # the lost connection: what the server offered
            and s.client.offers("resources")
        ]
        if stopped:
            await asyncio.gather(*(self.heal(s) for s in stopped))
        return self.connected(server)

    async def resources(self, server: str | None = None) -> Gathered[Resource]:
        return await gather(await self._with_resources(server), lambda s: s.list_resources())

    async def resource_templates(self, server: str | None = None) -> Gathered[ResourceTemplate]:
        chosen = await self._with_resources(server)
        return await gather(chosen, lambda s: s.list_resource_templates())

    async def prompts(self, server: str | None = None) -> Gathered[Prompt]:
        return await gather(self.connected(server), lambda s: s.list_prompts())

    def known_prompts(self) -> list[tuple[str, Prompt]]:
        """Every connected server's prompts as last listed (no request)."""
        return [(s.name, p) for s in self.connected() for p in s.cached_prompts()]

    async def read_resource(self, server: str, uri: str) -> ReadResourceResult:
        return await (await self._with_resources(server))[0].read_resource(uri)

    async def get_prompt(
        self, server: str, name: str, arguments: dict[str, str]
    ) -> GetPromptResult:
        return await self.connected(server)[0].get_prompt(name, arguments)

    async def complete(
        self,
        server: str,
        ref: CompletionReference,
        argument: str,
        value: str,
        context: dict[str, str] | None = None,
    ) -> Completion:
        return await self.connected(server)[0].complete(ref, argument, value, context)

    def instructions(self) -> dict[str, str]:
        """The ``instructions`` of every connected server that gave some, by server name."""
        return {s.name: text for s in self.servers if (text := s.instructions)}

    def status(self) -> list[ServerStatus]:
        """One entry per configured server, broken entries included, in config order."""
        statuses = [server.status() for server in self.servers]
        statuses.extend(
            ServerStatus(
                name=b.name,
                state=ServerState.FAILED,
                tools=0,
                transport=b.type,
                target=b.target,
                error=b.error,
            )
            for b in self.broken
        )
        statuses.extend(
            ServerStatus(
                name=w.name,
                state=ServerState.REJECTED if w.rejected else ServerState.NEEDS_APPROVAL,
                tools=0,
                transport=w.type,
                target=w.target,
                error=w.hint,
            )
            for w in self.waiting
        )
        # Config order, broken entries in their place (the files' order is the user's).
        rank = {name: i for i, name in enumerate(self.config.order)}
        statuses.sort(key=lambda s: rank.get(s.name, len(rank)))
        return statuses

    @property
    def all_connected(self) -> bool:
        """Every enabled server connected (and no entry was broken or waits for approval;
        a rejected one counts as disabled)."""
        ok = (ServerState.CONNECTED, ServerState.DISABLED)
        waiting = any(not w.rejected for w in self.waiting)
        return not self.broken and not waiting and all(s.state in ok for s in self.servers)

    async def close_all(self) -> None:
        """Close every server; returns when every owner task has finished its cleanup.

        A cancellation of the caller does not cut the closing short: it hurries it (no
        more grace periods) and goes on once every server is closed.
        """
        self._stop.set()
        # A restart under way would only start what is being closed; cancelled at an
        # await, it starts nothing more, so the owner tasks listed next are the last.
        healing = [s._healing for s in self.servers if s._healing is not None]
        healing.extend(self._operations)
        for heal in healing:
            heal.cancel()
        tasks = [s.task for s in self.servers if s.task is not None]
        for server in self.servers:
            if server.task is not None and not server._ready.is_set():
                server.task.cancel()  # still starting: nothing to wait for
        cancelled: asyncio.CancelledError | None = None
        pending: set[asyncio.Task[None]] = {t for t in [*tasks, *healing] if not t.done()}
        while pending:
            try:
                _, pending = await asyncio.wait(pending)
            except asyncio.CancelledError as exc:
                cancelled = exc
                self.hurry()
        for task in [*tasks, *healing]:  # they never raise, but leave no error unretrieved
            if task.done() and not task.cancelled():
                task.exception()
        if cancelled is not None:
            raise cancelled

    def hurry(self) -> None:
        """Make every close in progress (or to come) skip its remaining grace periods."""
        for server in self.servers:
            server.hurry()

    def kill_now(self) -> None:
        """Last resort, synchronous: end every server process at once (HTTP has none)."""
        for server in self.servers:
            server.kill_now()

    async def __aenter__(self) -> McpPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close_all()


async def _first_of(*events: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


async def _close_auth(auth: McpAuth, name: str) -> None:
    try:
        await asyncio.shield(auth.aclose())
    except Exception as exc:  # closing must go on; -v says why
        logger.debug("%s: error while closing its sign-in: %s", name, describe_error(exc))


async def _close(client: McpClient) -> None:
    try:
        await asyncio.shield(client.close())
    except Exception as exc:  # closing must go on for the others; -v says why
        logger.debug("%s: error while closing: %s", client.name, describe_error(exc))
