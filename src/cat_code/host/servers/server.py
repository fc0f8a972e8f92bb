"""`McpServer`: one configured server, owning its whole state machine.

States (`ServerState`): NEW → CONNECTING → CONNECTED, or FAILED / NEEDS_LOGIN; DISABLED by
its entry or by hand; CLOSED once stopped. Only the server changes its state, and status
reads it. One owner task per connection opens the transport, opens the session, lists the
tools, waits until it is told to stop and closes what it opened (`Connection.close`):
open, use and close happen in that one task. A connection that ends by itself makes the
server FAILED at that moment, with the reason; the next call to one of its tools, or read
or listing of its resources, starts it again in place (`heal`: a new owner task and
connection), within its `RestartBudget`, after which it stays FAILED until `reconnect`.
`reconnect`, `disable`, `enable`, `retire` and a restart are serialised by its lifecycle
lock and run to their end even if their caller is cancelled; `begin_close` cancels them.

The server's one way back to its pool is the `ToolPublisher` it is given: it asks it to
register its listed tools under their pinned names (`publish`) or to drop them
(`withdraw`); the pool never writes a server's fields.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from cat_code.host.config.load import ServerConfig
from cat_code.host.mcp_tools.tool_adapter import McpTool
from cat_code.host.notifications import NoteKind, NoteSink, server_note
from cat_code.host.servers.connect import Connection, Connector
from cat_code.host.servers.restarts import RestartBudget, RestartPolicy
from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import ConnectError, McpClientError, TransportClosed, describe_error
from cat_code.mcp.wire import (
    CallToolResult,
    ToolDefinition,
)
from cat_code.tools.base import ProgressCallback

logger = logging.getLogger(__name__)

_T = TypeVar("_T")
#: Extra time over a server's startup timeout before its owner task is cancelled outright.
_STARTUP_SLACK_S = 1.0


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
    #: A project server waiting for approval: the variables it would expand and the files
    #: it would read, by name (`cat_code.host.config.reach`).
    reach: str = ""

    @classmethod
    def of(cls, server: McpServer) -> ServerStatus:
        """What status shows of ``server`` now."""
        client = server.client
        failed = server.state is ServerState.FAILED
        explained = failed or server.state is ServerState.NEEDS_LOGIN
        return cls(
            name=server.name,
            state=server.state,
            tools=len(server.tools),
            transport=client.transport.kind if client is not None else server.config.type,
            target=server.config.target,
            error=server.error if explained else None,
            protocol_version=client.protocol_version if client is not None else None,
            era=client.era if client is not None and client.protocol_version else None,
            stderr_tail=client.transport.diagnostics() if failed and client is not None else [],
            server_info=client.server_info if client is not None else {},
            restarts=server.restarts,
            gave_up=failed and server.gave_up,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **({"reach": self.reach} if self.reach else {}),
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


class ToolPublisher(Protocol):
    """What a server asks of its pool (the pool names tools across servers)."""

    def publish(self, server: McpServer) -> list[McpTool]:
        """Register ``server.wire_tools`` (as its entry filters them) under their pinned
        names in place of ``server.tools``; the tools now registered."""
        ...

    def withdraw(self, tools: list[McpTool]) -> None:
        """Unregister these tools."""
        ...

    @property
    def notes(self) -> NoteSink:
        """Where the server tells what happens to it after its first start (lost,
        restarted, given up, a sign-in needed, its tool list changed)."""
        ...


async def run_to_end(operations: set[asyncio.Task[Any]], work: Coroutine[Any, Any, _T]) -> _T:
    """Run ``work`` to its end even if the caller is cancelled; it stays in ``operations``
    until done, so a close can cancel it (at an await, where it started nothing the close
    would miss)."""
    task = asyncio.ensure_future(work)
    operations.add(task)
    task.add_done_callback(operations.discard)
    return await asyncio.shield(task)


class McpServer:
    """One configured server: its state, its connection, its tools, and their owner task."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        connector: Connector,
        publisher: ToolPublisher,
        closing: asyncio.Event,
        restart_policy: RestartPolicy | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self._connector = connector
        self._publisher = publisher
        #: Set by the pool when it closes: stops the owner task; nothing starts after it.
        self._closing = closing
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
        #: Set to stop this server alone (`reconnect`); ``closing`` stops all.
        self._halt = asyncio.Event()
        self._refresh: asyncio.Task[None] | None = None
        self._stopping = False
        #: Automatic restarts so far (status shows them), and the window that limits them.
        self.restarts = 0
        self.budget = RestartBudget(restart_policy or RestartPolicy())
        #: FAILED because its connection ended by itself: the next call restarts it.
        self._healable = False
        self._healing: asyncio.Task[None] | None = None
        #: Lifecycle changes under way (`_operation`).
        self._operations: set[asyncio.Task[Any]] = set()
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

    def _fail(self, reason: str) -> None:
        self._state = ServerState.FAILED
        self.error = reason

    @property
    def healable(self) -> bool:
        """FAILED after it had connected, and not given up on: a call restarts it."""
        return self._state is ServerState.FAILED and self._healable

    # -- the owner task ------------------------------------------------------------------

    def start(self) -> None:
        """Start connecting (NEW, or after `_stop_owner`): a new owner task."""
        self._state = ServerState.CONNECTING
        self.task = asyncio.create_task(self._run(), name=f"mcp:{self.name}")

    async def started(self) -> None:
        """Until the server is no longer starting, bounded by its startup timeout."""
        limit = self.config.startup_timeout_s + _STARTUP_SLACK_S
        try:
            async with asyncio.timeout(limit):
                await self._ready.wait()
        except TimeoutError:
            # The owner ignored its own timeout (a blocking transport?): cancel it outright.
            self.error = f"did not finish starting within {self.config.startup_timeout_s:g} s"
            if self.task is not None:
                self.task.cancel()
                await asyncio.wait([self.task])

    async def _run(self) -> None:
        """Connect, list tools, wait for stop, close. Never raises but for cancellation."""
        connection: Connection | None = None
        # The outer try closes what was opened on every path, a cancelled startup included.
        try:
            try:
                connection = await self._connector.open(
                    self.config, on_tools_changed=self._tools_changed, on_lost=self._lost
                )
                client = self._client = connection.client
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
                    if self.restarts:  # a restart's sign-in: the startup line said the first
                        self._note(NoteKind.SIGN_IN_NEEDED, f"needs a sign-in ({self.error})")
                else:
                    self._fail(describe_error(exc))
                    logger.debug("%s: failed: %s", self.name, self.error)
            finally:
                self._ready.set()
            if self._state is ServerState.CONNECTED:
                await _first_of(self._closing, self._halt)
        finally:
            self._stopping = True
            if self._refresh is not None:
                self._refresh.cancel()
            if connection is not None:
                await connection.close()
            if self._state not in (ServerState.FAILED, ServerState.NEEDS_LOGIN):
                self._state = ServerState.CLOSED

    def _lost(self, reason: str) -> None:
        """The connection ended by itself: FAILED now, not at the next call or status."""
        if self._stopping or self._state is not ServerState.CONNECTED:
            return
        self._note(NoteKind.SERVER_FAILED, f"stopped: {reason}")
        self._fail(reason)
        self._healable = True

    async def _stop_owner(self) -> None:
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

    def _start_again(self) -> None:
        """A new owner task after `_stop_owner`: fresh events, no connection, no error."""
        self._ready = asyncio.Event()
        self._halt = asyncio.Event()
        self._stopping = False
        self._client = None
        self._refresh = None
        self.error = None
        self._healable = False
        self.gave_up = False
        self.start()

    def _tools_changed(self) -> None:
        if self._state is not ServerState.CONNECTED or self._stopping:
            # Still starting: the initial listing will see the new list. Stopping: a
            # refresh would only race the close (and warn that it failed).
            return
        if self._refresh is not None and not self._refresh.done():
            self._refresh.cancel()
        self._refresh = asyncio.ensure_future(self.refresh_tools())

    async def refresh_tools(self) -> None:
        """Re-list the tools and swap them in; on any failure the old list stays."""
        client = self._client
        if client is None:
            return
        try:
            self.wire_tools = await client.list_tools(refresh=True)
            self.publish_tools()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a boundary: whatever went wrong, the old list stays
            why = describe_error(exc)
            self._note(NoteKind.SERVER_FAILED, f"could not re-list its changed tools: {why}")
            return  # (the old list stays)
        self._note(NoteKind.LIST_CHANGED, f"tool list changed: {len(self.tools)} tool(s) now")

    def _note(self, kind: NoteKind, what: str) -> None:
        self._publisher.notes.post(server_note(kind, self.name, f"MCP server '{self.name}' {what}"))

    def publish_tools(self) -> None:
        """Register the listed tools through the pool, in place of the old ones."""
        self.tools = self._publisher.publish(self)

    def _withdraw_tools(self) -> None:
        self._publisher.withdraw(self.tools)
        self.tools = []

    # -- lifecycle changes (each under the lifecycle lock, run to its end) ----------------

    async def _operation(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Run a lifecycle change to its end even if the caller is cancelled (Ctrl-C must
        not leave a server half restarted); `begin_close` cancels it, at an await, where
        it has started nothing that the close would miss."""
        return await run_to_end(self._operations, work)

    def _check_open(self) -> None:
        if self._closing.is_set():
            raise TransportClosed("the MCP servers are closing")

    async def reconnect(self) -> None:
        """Connect anew (after a sign-in, or by hand): stop the owner task if there is
        one, start a new one, and swap the tools in the registry. The window of automatic
        restarts starts empty again. A DISABLED server stays so (`enable` starts it)."""
        self._check_open()

        async def work() -> None:
            async with self.lifecycle:
                if self._state is not ServerState.DISABLED:
                    self.budget.reset()
                    await self._relaunch(keep_tools=False)

        await self._operation(work())

    async def disable(self) -> None:
        """Stop and drop the tools, for this session (no file changes): DISABLED."""
        self._check_open()

        async def work() -> None:
            async with self.lifecycle:
                await self._stop_owner()
                self._withdraw_tools()
                self._state = ServerState.DISABLED
                self.error = None
                self._healable = False
                self.gave_up = False
                self._ready.set()

        await self._operation(work())

    async def enable(self) -> None:
        """Start a DISABLED server (disabled in its entry or by `disable`), for this session."""
        self._check_open()

        async def work() -> None:
            async with self.lifecycle:
                if self._state is ServerState.DISABLED:
                    await self._relaunch(keep_tools=False)

        await self._operation(work())

    async def retire(self) -> None:
        """Stop for good (its entry was removed or changed): the tools go, and a call
        through an old tool does not start it again."""
        async with self.lifecycle:
            await self._stop_owner()
            self._withdraw_tools()
            self._healable = False

    async def heal(self) -> None:
        """Start again after stopping by itself, if the budget allows; concurrent callers
        share one attempt, which a cancelled caller does not cut short."""
        if self._healing is None or self._healing.done():
            self._healing = asyncio.ensure_future(self._operation(self._heal()))
        await asyncio.shield(self._healing)

    async def _heal(self) -> None:
        async with self.lifecycle:
            if not self.healable or self._closing.is_set():
                return  # another caller healed it already, or we are closing
            if not self.budget.take():
                self._healable = False
                self.gave_up = True
                # No command in it: the reason reaches the model, -p and `mcp call` too.
                self.error = (
                    f"{self.error} — not restarted again after {self.budget.policy.describe()}"
                )
                again = (
                    f"stopped again: {self.error} (in the REPL, /mcp restart {self.name} starts it)"
                )
                self._note(NoteKind.SERVER_GAVE_UP, again)
                return
            self.restarts += 1
            await self._relaunch(keep_tools=True)
            # A restart that failed to connect is tried again on the next call, while
            # the budget lasts.
            self._healable = self._state is ServerState.FAILED
            if self._state is ServerState.CONNECTED:
                self._note(NoteKind.SERVER_RESTARTED, f"restarted ({self.restarts}× so far)")
            else:
                self._note(NoteKind.SERVER_FAILED, f"did not restart: {self.error}")

    async def _relaunch(self, *, keep_tools: bool) -> None:
        """Stop the owner task and start a new one, then publish the tools.

        ``keep_tools``: on failure the old tools stay registered, so a call can still
        reach the server (and restart it) later; otherwise they go as they do when a
        server fails at start.
        """
        await self._stop_owner()
        if not keep_tools:
            self._withdraw_tools()
        if self._closing.is_set():
            return
        self._start_again()
        await self.started()
        if self._state is ServerState.CONNECTED:
            self.publish_tools()

    def begin_close(self) -> list[asyncio.Task[Any]]:
        """The pool is closing (``closing`` is set): cancel the lifecycle changes under
        way and a startup; the tasks to wait for before the server is closed."""
        # A restart under way would only start what is being closed; cancelled at an
        # await, it starts nothing more, so the owner task listed next is the last.
        changes: list[asyncio.Task[Any]] = [*self._operations]
        if self._healing is not None:
            changes.append(self._healing)
        for change in changes:
            change.cancel()
        if self.task is None:
            return changes
        if not self._ready.is_set():
            self.task.cancel()  # still starting: nothing to wait for
        return [self.task, *changes]

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
            await self.heal()
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

    async def use(self, work: Callable[[McpClient], Awaitable[_T]], *, heal: bool = False) -> _T:
        """``work`` on the current connection: the one way to reach a client feature
        (``server.use(lambda c: c.list_prompts())``). ``heal``: first start the server again
        if it stopped by itself (within its restart budget), for what the model reaches
        for (resources, skills); `TransportClosed` when it is not connected."""
        client = await self._reachable() if heal else self._connected()
        return await work(client)

    def cached(self, read: Callable[[McpClient], list[_T] | None]) -> list[_T]:
        """What ``read`` finds in the connection's caches (no request; [] when the server
        is not connected or never listed it): ``server.cached(McpClient.cached_prompts)``."""
        client = self._client
        if client is None or self._state is not ServerState.CONNECTED:
            return []
        return read(client) or []

    def status(self) -> ServerStatus:
        return ServerStatus.of(self)

    def hurry(self) -> None:
        if client := self._client:
            client.transport.hurry()

    def kill_now(self) -> None:
        if client := self._client:
            client.transport.kill_now()


async def _first_of(*events: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
