"""`McpPool`: every configured server, connected in parallel, none able to hurt another.

Each server is an `McpServer` (`cat_code.host.servers.server`), which owns its state machine:
connect, restart under its budget, reconnect, disable, enable, retire. The pool holds the
servers of one config, in config order, and what spans them: ``connect_all`` waits until
every server is CONNECTED or FAILED, each bounded by its startup timeout; tools are then
named in config order, so collisions go the same way every run, and the registered name
of each (server, tool) is pinned for the life of the pool, so a tool list change, a
restart or a reload never renames a tool the model has seen (the pool is each server's
`ToolPublisher`). `reload` takes a newly read config; ``close_all`` finishes closing
every server even when its caller is cancelled. How servers are reached (transport, auth,
roots, elicitation, children spawned early) is the `Connector` (`cat_code.host.servers.connect`).
Creating a pool starts nothing: the front ends reap what a killed cat-code left
(`run_records.reap_orphans`) once, at their start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from cat_code.host.config.load import BrokenServer, McpConfig, ServerConfig
from cat_code.host.mcp_tools.tool_adapter import McpTool, assign_names
from cat_code.host.mcp_tools.tool_filter import select_tools
from cat_code.host.notifications import LOG_NOTES, NoteSink
from cat_code.host.servers.catalog import Gathered, UnknownServer, UnknownSkill, gather
from cat_code.host.servers.connect import (
    AuthFactory,
    Connector,
    ServerElicitationHandler,
    TransportFactory,
)
from cat_code.host.servers.reload import ReloadPlan, plan_reload
from cat_code.host.servers.restarts import RestartPolicy
from cat_code.host.servers.server import McpServer, ServerState, ServerStatus, run_to_end
from cat_code.host.state.home import cat_code_home
from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import TransportClosed
from cat_code.mcp.roots import Roots
from cat_code.mcp.session.detect import ERAS_FILE, EraMemory
from cat_code.mcp.skills import LoadedSkill, Skill, VerifiedFile
from cat_code.mcp.wire import (
    Prompt,
    Resource,
    ResourceTemplate,
)
from cat_code.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from cat_code.host.servers.prestart import Prestarted
    from cat_code.mcp.auth.provider import McpAuth
    from cat_code.mcp.auth.types import TokenStore

logger = logging.getLogger(__name__)

_T = TypeVar("_T")


class McpPool:
    """All configured MCP servers: parallel connect, tool registration, status, close."""

    def __init__(
        self,
        config: McpConfig,
        *,
        elicitation_handler: ServerElicitationHandler | None = None,
        transport_factory: TransportFactory | None = None,
        auth_factory: AuthFactory | None = None,
        token_store: TokenStore | None = None,
        era_memory: EraMemory | None = None,
        restart_policy: RestartPolicy | None = None,
        roots: Roots | None = None,
        prestarted: Prestarted | None = None,
        notes: NoteSink = LOG_NOTES,
    ) -> None:
        self.config = config
        #: Where the servers tell what happens to them later (lost, restarted, ...).
        self.notes = notes
        #: How often a server that stopped by itself is started again.
        self.restart_policy = restart_policy or RestartPolicy()
        self.connector = Connector(
            # The folders every server may work in: the front end's (cwd and --add-dir).
            Roots() if roots is None else roots,
            era_memory=EraMemory(cat_code_home() / ERAS_FILE) if era_memory is None else era_memory,
            elicitation_handler=elicitation_handler,
            transport_factory=transport_factory,
            auth_factory=auth_factory,
            token_store=token_store,
            prestarted=prestarted,
        )
        if prestarted is not None:
            # The front end's close closes us (and whatever of it we never took).
            prestarted.hand_over(self)
        self._stop = asyncio.Event()
        self.servers: list[McpServer] = [self._new_server(c) for c in config.servers]
        self.broken: list[BrokenServer] = list(config.broken)
        #: Reloads under way (`_operation`).
        self._operations: set[asyncio.Task[Any]] = set()
        self._registry: ToolRegistry | None = None
        #: (server, tool) → registered name, for the life of the pool.
        self._pinned: dict[tuple[str, str], str] = {}

    def _new_server(self, config: ServerConfig) -> McpServer:
        return McpServer(
            config,
            connector=self.connector,
            publisher=self,
            closing=self._stop,
            restart_policy=self.restart_policy,
        )

    @property
    def roots(self) -> Roots:
        return self.connector.roots

    @property
    def token_store(self) -> TokenStore:
        """Where sign-ins are kept: ``$CAT_CODE_HOME/credentials.json`` unless given."""
        return self.connector.token_store

    def auth_for(self, config: ServerConfig) -> McpAuth | None:
        """The OAuth of one entry's connection (None for stdio and self-signed entries)."""
        return self.connector.auth_for(config)

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
        """Connect one server anew (after a sign-in, or by hand): `McpServer.reconnect`."""
        server = self._named(name)
        await server.reconnect()
        return server

    async def restart(self, name: str) -> McpServer:
        """``/mcp restart NAME``: `reconnect`, also for a server that gave up restarting."""
        return await self.reconnect(name)

    async def disable(self, name: str) -> McpServer:
        """Stop one server and drop its tools, for this session (no file changes)."""
        server = self._named(name)
        await server.disable()
        return server

    async def enable(self, name: str) -> McpServer:
        """Start a DISABLED server (disabled in its entry or by `disable`), for this session."""
        server = self._named(name)
        await server.enable()
        return server

    async def _operation(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Run a reload to its end even if the caller is cancelled; `close_all` cancels
        it, at an await, where it has started nothing that the close would miss."""
        return await run_to_end(self._operations, work)

    async def reload(self, config: McpConfig) -> ReloadPlan:
        """Take a newly read config: new servers start, removed ones stop, changed ones
        (compared by value) restart, the rest go on untouched; the registry follows."""
        if self._stop.is_set():
            raise TransportClosed("the MCP servers are closing")
        return await self._operation(self._reload(config))

    async def _reload(self, config: McpConfig) -> ReloadPlan:
        plan = plan_reload([s.config for s in self.servers], config)
        going = [s for s in self.servers if s.name in plan.removed or s.name in plan.changed]
        await asyncio.gather(*(s.retire() for s in going))
        kept = {s.name: s for s in self.servers if s.name in plan.unchanged}
        servers: list[McpServer] = []
        for entry in config.servers:
            server = kept.get(entry.name)
            if server is None:
                server = self._new_server(entry)
            else:
                server.config = entry  # equal but for where it was read from
            servers.append(server)
        self.config = config
        self.servers = servers
        self.broken = list(config.broken)
        fresh = [s for s in servers if s.state is ServerState.NEW]
        await self._start(fresh)
        return plan

    async def connect_all(self) -> None:
        """Start every enabled server and wait until each is CONNECTED or FAILED."""
        await self._start([s for s in self.servers if s.state is ServerState.NEW])

    async def _start(self, servers: list[McpServer]) -> None:
        for server in servers:
            server.start()
        await asyncio.gather(*(s.started() for s in servers))
        # Named in config order, whichever server finished first: collisions go the same
        # way every run. (Names already given stay: they are pinned.)
        for server in servers:
            if server.state is ServerState.CONNECTED:
                server.publish_tools()

    # -- naming and registering tools (each server's `ToolPublisher`) ---------------------

    def publish(self, server: McpServer) -> list[McpTool]:
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
        tools = sorted(
            (
                McpTool(
                    server,
                    by_name[t],
                    self._pinned[(server.name, t)],
                    max_output_tokens=server.config.max_output_tokens,
                    project=self.roots.paths[0],  # the working directory's output folder
                )
                for t in by_name
            ),
            key=lambda registered: registered.name,
        )
        for tool in tools:  # tool search never defers an "alwaysLoad" server's tools
            tool.always_load = server.config.always_load
        if self._registry is not None:
            for tool in server.tools:
                self._registry.unregister(tool.name)
            for tool in tools:
                self._registry.register(tool)
        return tools

    def withdraw(self, tools: list[McpTool]) -> None:
        if self._registry is not None:
            for tool in tools:
                self._registry.unregister(tool.name)

    def register_into(self, registry: ToolRegistry) -> None:
        """Register every connected server's tools; later list changes update it too."""
        self._registry = registry
        for server in self.servers:
            for tool in server.tools:
                registry.register(tool)

    def tools(self, server: str | None = None) -> list[McpTool]:
        return [t for s in self.servers if server in (None, s.name) for t in s.tools]

    def find_tool(self, name: str) -> McpTool | None:
        return next((t for t in self.tools() if t.name == name), None)

    # -- resources and prompts across servers (`cat_code.host.servers.catalog`) ------------------

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
            await asyncio.gather(*(s.heal() for s in stopped))
        return self.connected(server)

    async def use(
        self, server: str, work: Callable[[McpClient], Awaitable[_T]], *, heal: bool = False
    ) -> _T:
        """``work`` on the named server's connection (`McpServer.use`): the one way to
        reach a client feature of one server. ``heal``: a server that offered resources and
        stopped by itself is started again first. `UnknownServer` when it is not connected."""
        chosen = await self._with_resources(server) if heal else self.connected(server)
        return await chosen[0].use(work)

    async def resources(self, server: str | None = None) -> Gathered[Resource]:
        chosen = await self._with_resources(server)
        return await gather(chosen, lambda s: s.use(McpClient.list_resources))

    async def resource_templates(self, server: str | None = None) -> Gathered[ResourceTemplate]:
        chosen = await self._with_resources(server)
        return await gather(chosen, lambda s: s.use(McpClient.list_resource_templates))

    async def prompts(self, server: str | None = None) -> Gathered[Prompt]:
        return await gather(self.connected(server), lambda s: s.use(McpClient.list_prompts))

    def known_prompts(self) -> list[tuple[str, Prompt]]:
        """Every connected server's prompts as last listed (no request)."""
        return [(s.name, p) for s in self.connected() for p in s.cached(McpClient.cached_prompts)]

    async def skills(self, server: str | None = None) -> Gathered[Skill]:
        """Every connected server's skills (listed, never read: see `cat_code.mcp.skills`)."""
        return await gather(self.connected(server), lambda s: s.use(McpClient.list_skills))

    def known_skills(self) -> list[tuple[str, Skill]]:
        """Every connected server's skills as last listed (no request)."""
        return [(s.name, k) for s in self.connected() for k in s.cached(McpClient.cached_skills)]

    async def find_skill(self, server: str, name: str) -> Skill:
        """``server``'s skill named ``name`` (or whose uri it is), as listed now;
        `UnknownSkill` when there is none, or more than one of that name."""
        listed = await self.use(server, McpClient.list_skills, heal=True)
        found = [k for k in listed if name in (k.name, k.uri)]
        if not found:
            raise UnknownSkill(server, name, [k.name for k in listed])
        if len(found) > 1:
            raise UnknownSkill(server, name, [k.uri for k in found], ambiguous=True)
        return found[0]

    async def load_skill(self, server: str, name: str) -> LoadedSkill:
        """Find, read and verify one skill's ``SKILL.md`` (`SkillRefused` when it fails)."""
        skill = await self.find_skill(server, name)
        return await self.use(server, lambda c: c.load_skill(skill), heal=True)

    async def read_skill_file(self, server: str, name: str, path: str) -> VerifiedFile:
        """One file of a skill (a path inside it), read and verified."""
        skill = await self.find_skill(server, name)
        return await self.use(server, lambda c: c.read_skill_file(skill, path), heal=True)

    def instructions(self) -> dict[str, str]:
        """The ``instructions`` of every connected server that gave some, by server name."""
        return {
            s.name: text for s in self.connected() if s.client and (text := s.client.instructions)
        }

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
        # Config order, broken entries in their place (the files' order is the user's).
        rank = {name: i for i, name in enumerate(self.config.order)}
        statuses.extend(
            ServerStatus(
                name=w.name,
                state=ServerState.REJECTED if w.rejected else ServerState.NEEDS_APPROVAL,
                tools=0,
                transport=w.type,
                target=w.target,
                error=w.hint,
                reach=w.reach,
            )
            for w in self.config.waiting  # project entries never started (trust)
        )
        statuses.sort(key=lambda s: rank.get(s.name, len(rank)))
        return statuses

    @property
    def all_connected(self) -> bool:
        """Every enabled server connected, no entry broken, and none waiting for approval
        (a rejected project entry counts like a disabled one)."""
        ok = (ServerState.CONNECTED, ServerState.DISABLED)
        if self.broken or self.config.needs_approval:
            return False
        return all(s.state in ok for s in self.servers)

    async def close_all(self) -> None:
        """Close every server; returns when every owner task has finished its cleanup.

        A cancellation of the caller does not cut the closing short: it hurries it (no
        more grace periods) and goes on once every server is closed.
        """
        self._stop.set()
        for reload in self._operations:
            reload.cancel()
        tasks: list[asyncio.Task[Any]] = [*self._operations]
        for server in self.servers:
            tasks.extend(server.begin_close())
        cancelled: asyncio.CancelledError | None = None
        pending = {t for t in tasks if not t.done()}
        while pending:
            try:
                _, pending = await asyncio.wait(pending)
            except asyncio.CancelledError as exc:
                cancelled = exc
                self.hurry()
        for task in tasks:  # they never raise, but leave no error unretrieved
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
