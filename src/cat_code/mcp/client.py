"""`McpClient`: one server connection on top of a `Transport` and an era's session.

The library's front door: it owns the transport and the session (`cat_code.mcp.session`)
and offers MCP's operations; one module per job does the work: `requests` (ids, deadlines,
progress, cancellation, renewal), `input_rounds` (what a 2026-07-28 answer asks first, URL
elicitation), `listings` (one paged, cached listing for every list), `inbound` (the table
of server-started messages, the roots grace) and `tasks`. With a `Roots` it declares
``roots`` and, in the handshake era, says when they change. It keeps no server state: it
raises, and tells its owner (``on_lost``) the moment its connection ends by itself.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar, cast

from cat_code.mcp import inbound
from cat_code.mcp.deadlines import MAX_TIMEOUT_WITH_PROGRESS
from cat_code.mcp.elicitation import ELICITATION_CAPABILITY, URL_ELICITATION_REQUIRED
from cat_code.mcp.errors import (
    McpError,
    ProtocolError,
    RequestTimeout,
    TransportError,
)
from cat_code.mcp.inbound import ROOTS_GRACE_S
from cat_code.mcp.input_rounds import answer_inputs, stateless_request, url_required
from cat_code.mcp.listings import Listings
from cat_code.mcp.prompts import valid_completion, valid_prompt_result
from cat_code.mcp.requests import ProgressHandler, Requests
from cat_code.mcp.resources import valid_read_result
from cat_code.mcp.roots import Roots
from cat_code.mcp.session import HandshakeSession, ProtocolSession
from cat_code.mcp.session.detect import EraMemory, open_session
from cat_code.mcp.session.stateless import StatelessSession
from cat_code.mcp.skills import (
    SKILLS_EXTENSION,
    LoadedSkill,
    Skill,
    VerifiedFile,
    load_skill,
    read_skill_file,
)
from cat_code.mcp.tasks import TaskTable, TaskWait, task_shape, task_support
from cat_code.mcp.transports.base import JsonObject, RequestContext, Transport
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

logger = logging.getLogger(__name__)
_T = TypeVar("_T")

DEFAULT_REQUEST_TIMEOUT_S = 30.0

#: Given the elicitation/create params, returns the result ({"action": ..., "content": ...}).
ElicitationHandler = Callable[[JsonObject], Awaitable[JsonObject]]


class McpClient:
    """One MCP server connection: handshake, tools, calls, and server-originated messages."""

    def __init__(
        self,
        transport: Transport,
        *,
        name: str = "server",
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT_S,
        elicitation_handler: ElicitationHandler | None = None,
        on_tools_changed: Callable[[], None] | None = None,
        on_lost: Callable[[str], None] | None = None,
        fallback: Callable[[], Transport] | None = None,
        protocol_version: str | None = None,
        era_memory: EraMemory | None = None,
        roots: Roots | None = None,
        skills: bool = False,
    ) -> None:
        self._transport = transport
        #: Whether ``io.modelcontextprotocol/skills`` is declared (`list_skills` and co).
        self.skills = skills
        #: The folders offered to the server (declared as the ``roots`` capability).
        self.roots = roots
        self._unsubscribe_roots = roots.subscribe(self._roots_changed) if roots else None
        self.name = name
        self.request_timeout = request_timeout
        self.elicitation_handler = elicitation_handler
        self.on_tools_changed = on_tools_changed
        self.on_lost = on_lost
        self.session: ProtocolSession = HandshakeSession(fallback=fallback)
        #: The session, when it is a stateless (2026-07-28) one: requests are decorated.
        self.modern: StatelessSession | None = None
        self._fallback = fallback
        self._pinned_version = protocol_version
        self._era_memory = era_memory
        #: Why the connection ended by itself (a stdio child exited, ...), once it has.
        self.closed_reason: str | None = None
        self.requests = Requests(self)
        self.listings = Listings(self)
        self._background: set[asyncio.Task[Any]] = set()
        self._started = False
        self.closing = False
        #: Told when the server says its resources / prompts changed, or one resource did.
        self.on_resources_changed: Callable[[], None] | None = None
        self.on_prompts_changed: Callable[[], None] | None = None
        self.on_resource_updated: Callable[[str], None] | None = None
        #: Event-loop time until which a tool call waits: the server may still be taking
        #: the roots we just answered (0: no answer lately, the hot path checks only that).
        self.roots_settle_until = 0.0
        #: The task-augmented calls being followed (status notifications wake them).
        self.tasks = TaskTable()

    # -- what the session tells ------------------------------------------------------

    @property
    def transport(self) -> Transport:
        """The transport in use (a type-less URL may have fallen back to legacy SSE)."""
        return self._transport

    @property
    def era(self) -> str:
        """``modern`` (2026-07-28, stateless) or ``handshake``."""
        return self.session.era

    @property
    def protocol_version(self) -> str | None:
        return self.session.version

    @property
    def server_info(self) -> JsonObject:
        return self.session.server_info

    @property
    def server_capabilities(self) -> JsonObject:
        return self.session.server_capabilities

    @property
    def instructions(self) -> str | None:
        return self.session.instructions

    # -- lifecycle -------------------------------------------------------------------

    def capabilities(self) -> JsonObject:
        """What this client declares."""
        capabilities: JsonObject = {}
        if self.roots is not None:
            capabilities["roots"] = {"listChanged": True}
        if self.elicitation_handler is not None:
            capabilities["elicitation"] = dict(ELICITATION_CAPABILITY)
        if self.skills:
            extensions = capabilities.setdefault("extensions", {})
            extensions[SKILLS_EXTENSION] = {}
        return capabilities

    async def connect(self, timeout: float | None = None) -> None:
        """Start the transport and open the session; raises on any failure."""
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                if not self._started:
                    await self._transport.start(self._on_message, self._on_close)
                    self._started = True
                await open_session(
                    self,
                    self.capabilities(),
                    pinned=self._pinned_version,
                    memory=self._era_memory,
                    fallback=self._fallback,
                    adopt=self._adopt,
                )
        except TimeoutError:
            if not deadline.expired():  # the transport's own TimeoutError, not our limit
                raise
            raise RequestTimeout(f"no answer to initialize within {timeout:g} s") from None

    def _adopt(self, session: ProtocolSession) -> None:
        self.session = session
        self.modern = session if isinstance(session, StatelessSession) else None

    async def close(self) -> None:
        """End the session (bounded) and close the transport. Idempotent."""
        if self.closing:
            await self._transport.close()
            return
        self.closing = True
        if self._unsubscribe_roots is not None:
            self._unsubscribe_roots()
        self.requests.deadlines.close()
        for task in list(self._background):
            task.cancel()
        try:
            if self._started and self.closed_reason is None:
                await self.session.close(self)
        finally:
            await self._transport.close()

    def _on_close(self, reason: str) -> None:
        if self.closing or self.closed_reason is not None:
            return
        self.closed_reason = reason
        if self.on_lost is not None:
            self.on_lost(reason)

    def _on_message(self, message: JsonObject) -> None:
        inbound.on_message(self, message)

    # -- the session's link ----------------------------------------------------------

    async def exchange(self, method: str, params: JsonObject, context: RequestContext) -> Any:
        return await self.requests.exchange(method, params, context)

    async def notify(self, method: str, context: RequestContext) -> None:
        await self.requests.notify(method, context)

    async def switch_transport(self, transport: Transport) -> None:
        await self._transport.close()
        self._transport = transport
        await transport.start(self._on_message, self._on_close)

    def renew_soon(self) -> None:
        """Start renewing the session (one renewal for every call that finds it gone)."""
        self.requests.renew_soon()

    # -- requests --------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressHandler | None = None,
    ) -> Any:
        """Send a request and return its result; raise an `McpClientError` on failure
        (`Requests.send`: deadlines, cancellation, renewal; `input_rounds` in 2026-07-28)."""
        if self.modern is not None:
            return await stateless_request(self, method, params, timeout, progress)
        return await self.requests.send(method, params, timeout, progress)

    async def send_quietly(self, message: JsonObject) -> None:
        """Send a notification or reply; a failure is logged, never raised."""
        await self.requests.send_quietly(message)

    # -- tools -----------------------------------------------------------------------

    async def list_tools(self, *, refresh: bool = False) -> list[ToolDefinition]:
        """Every tool over every page; cached until refreshed or the server reports a change."""
        return cast(list[ToolDefinition], await self.listings.get("tools/list", refresh=refresh))

    async def call_tool(
        self,
        name: str,
        arguments: JsonObject | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressHandler | None = None,
    ) -> CallToolResult:
        """Call a tool by its original name and return the wire ``CallToolResult``."""
        params: JsonObject = {"name": name, "arguments": arguments or {}}
        listed = self.listings.cached("tools/list")
        if self.modern is None and task_support(self.server_capabilities, listed, name):
            params["task"] = {"ttl": int(timeout * 1000)} if timeout and timeout < math.inf else {}
        if self.roots_settle_until:
            await inbound.roots_settled(self)
        try:
            result = await self.request("tools/call", params, timeout=timeout, progress=progress)
        except McpError as exc:
            if exc.code == URL_ELICITATION_REQUIRED:
                raise await url_required(self, name, exc) from exc
            raise
        shape = task_shape(result)
        if shape is not None:
            # Polled to its end, bounded by the task's TTL and ``timeout`` (toolTimeoutMs).
            wait = TaskWait(
                result,
                shape,
                server=self.name,
                request=self.request,
                answer_inputs=partial(answer_inputs, self),
                spawn=self.spawn,
                limit=timeout,
                report=progress,
            )
            result = await self.tasks.follow(wait)
        if not isinstance(result, dict):
            raise ProtocolError("tools/call result is not an object")
        # Where call results cross into our code: an object is taken as one (the adapter
        # still checks every field it reads).
        return cast(CallToolResult, result)

    # -- resources, prompts, completion ------------------------------------------------

    def offers(self, feature: str) -> bool:
        """Whether the server declared ``feature`` (``resources``, ``prompts``, ...)."""
        return isinstance(self.server_capabilities.get(feature), dict)

    async def list_resources(self, *, refresh: bool = False) -> list[Resource]:
        """Every resource over every page ([] with no request if the server has none)."""
        if not self.offers("resources"):
            return []
        return cast(list[Resource], await self.listings.get("resources/list", refresh=refresh))

    async def list_resource_templates(self, *, refresh: bool = False) -> list[ResourceTemplate]:
        """Every resource template over every page ([] if the server has no resources)."""
        if not self.offers("resources"):
            return []
        listed = await self.listings.get("resources/templates/list", refresh=refresh)
        return cast(list[ResourceTemplate], listed)

    async def list_prompts(self, *, refresh: bool = False) -> list[Prompt]:
        """Every prompt over every page ([] with no request if the server has none)."""
        if not self.offers("prompts"):
            return []
        return cast(list[Prompt], await self.listings.get("prompts/list", refresh=refresh))

    def cached_prompts(self) -> list[Prompt] | None:
        """The prompts as last listed, if that listing is still current (no request)."""
        return cast("list[Prompt] | None", self.listings.cached("prompts/list"))

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ReadResourceResult:
        """The contents of one resource (text and/or base64 blobs)."""
        result = await self._offered("resources", "resources/read", {"uri": uri}, timeout)
        return _checked(valid_read_result, result, self.name, uri)

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, timeout: float | None = None
    ) -> GetPromptResult:
        """One prompt filled in with ``arguments`` (strings, as the spec has them)."""
        params: JsonObject = {"name": name, "arguments": dict(arguments or {})}
        result = await self._offered("prompts", "prompts/get", params, timeout)
        return _checked(valid_prompt_result, result, self.name, name)

    async def _offered(
        self, feature: str, method: str, params: JsonObject, timeout: float | None
    ) -> Any:
        if not self.offers(feature):
            raise ProtocolError(f"server '{self.name}' offers no {feature}")
        return await self.request(method, params, timeout=timeout)

    async def complete(
        self,
        ref: CompletionReference,
        argument: str,
        value: str,
        context: dict[str, str] | None = None,
        *,
        timeout: float | None = None,
    ) -> Completion:
        """``completion/complete`` for one argument; no values (and no request) when the
        server does not declare ``completions``."""
        if not self.offers("completions"):
            return {"values": []}
        params: JsonObject = {"ref": dict(ref), "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        return valid_completion(await self.request("completion/complete", params, timeout=timeout))

    # -- skills (io.modelcontextprotocol/skills, `cat_code.mcp.skills`) -------------------

    def offers_extension(self, extension: str) -> bool:
        """Whether the server declared ``extension`` in ``capabilities.extensions``."""
        extensions = self.server_capabilities.get("extensions")
        return isinstance(extensions, dict) and extension in extensions

    def _offers_skills(self) -> bool:
        return self.skills and self.offers_extension(SKILLS_EXTENSION)

    async def list_skills(self, *, refresh: bool = False) -> list[Skill]:
        """Every skill over every page ([] with no request unless both sides declared the
        extension); no file of any skill is read."""
        if not self._offers_skills():
            return []
        return cast(list[Skill], await self.listings.get("skills/list", refresh=refresh))

    def cached_skills(self) -> list[Skill] | None:
        """The skills as last listed (no request; None when never listed)."""
        if not self._offers_skills():
            return []
        return cast("list[Skill] | None", self.listings.cached("skills/list"))

    async def load_skill(self, skill: Skill, *, timeout: float | None = None) -> LoadedSkill:
        """Read the skill's ``SKILL.md`` and verify it; `SkillRefused` when it fails."""
        return await load_skill(self.name, skill, partial(self.read_resource, timeout=timeout))

    async def read_skill_file(
        self, skill: Skill, path: str, *, timeout: float | None = None
    ) -> VerifiedFile:
        """One file of the skill (a path inside it), read and verified."""
        read = partial(self.read_resource, timeout=timeout)
        return await read_skill_file(self.name, skill, path, read)

    # -- roots -----------------------------------------------------------------------

    def _roots_changed(self) -> None:
        """The roots grew: a handshake-era server is told; a 2026-07-28 one has no such
        notification and gets the new list the next time a request asks for it."""
        if self.closing or self.closed_reason is not None or not self._started:
            return
        if self.era != "handshake" or self.protocol_version is None:
            logger.debug("%s: roots changed; nothing to send in this era", self.name)
            return
        self.spawn(
            self.send_quietly({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        )

    # -- background work -------------------------------------------------------------

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run ``coro`` in the background; `close` cancels it."""
        task = asyncio.ensure_future(coro)
        self.keep(task)
        task.add_done_callback(self.forget)

    def keep(self, task: asyncio.Task[Any]) -> None:
        self._background.add(task)

    def forget(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)


def _checked(check: Callable[[Any, str, str], _T], result: Any, server: str, name: str) -> _T:
    """Where a result crosses into our code: its check's complaint as a `ProtocolError`."""
    try:
        return check(result, server, name)
    except ValueError as exc:
        raise ProtocolError(str(exc)) from None


__all__ = [
    "MAX_TIMEOUT_WITH_PROGRESS",
    "ROOTS_GRACE_S",
    "ElicitationHandler",
    "McpClient",
    "ProgressHandler",
    "TransportError",
]
