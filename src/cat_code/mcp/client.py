"""`McpClient`: one server connection on top of a `Transport` and an era's session.

It owns the MCP meaning the transport does not know, through its session
(`cat_code.mcp.session`: the handshake, versions, HTTP session headers, renewal, the
legacy SSE fallback): ``tools/list`` (every page, cached until the server says the list
changed), ``tools/call``, per-request timeouts that send ``notifications/cancelled``
and leave the connection usable (progress from the server restarts a timeout, up to
`MAX_TIMEOUT_WITH_PROGRESS` times it in all; the timers live in `deadlines`), and the
answers to server-originated messages (``ping`` → ``{}``, ``roots/list`` when it was
given `Roots`, ``elicitation/create`` (forms and URLs) only when a handler was given,
anything else -32601; a 2026-07-28 server's input requests get the same answers, roots or
the working directory; a -32042 "URL elicitation required" shows its URLs through the
handler and fails the call saying so — the library itself never opens a URL). With a
`Roots` it declares ``roots`` (``listChanged``; the 2026-07-28 session
drops that flag) and, in the handshake era, sends ``notifications/roots/list_changed`` when
they change. A server takes a ``roots/list`` answer in its own time, so a tool call within
`ROOTS_GRACE_S` of one waits out the rest of that grace first (once, bounded: at worst one
wait per call, and none when no roots were asked for lately). When the session
expires, one renewal serves every call that found it gone, and every call issued while
it runs waits for it, each bounded by its own timeout. The client keeps no server
state: it raises, and it tells its owner (``on_lost``) the moment its connection ends
by itself.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, TypeGuard, cast

from cat_code.mcp.deadlines import MAX_TIMEOUT_WITH_PROGRESS, Deadlines
from cat_code.mcp.elicitation import (
    ELICITATION_CAPABILITY,
    URL_ELICITATION_REQUIRED,
    url_elicitations,
)
from cat_code.mcp.errors import (
    HttpStatusError,
    McpClientError,
    McpError,
    ProtocolError,
    RequestTimeout,
    SessionExpired,
    TransportClosed,
    TransportError,
)
from cat_code.mcp.prompts import valid_completion, valid_prompt, valid_prompt_result
from cat_code.mcp.resources import valid_read_result, valid_resource, valid_template
from cat_code.mcp.roots import Roots
from cat_code.mcp.session import HandshakeSession, Session
from cat_code.mcp.session.detect import EraMemory, open_session
from cat_code.mcp.session.modern import (
    HEADER_MISMATCH,
    MISSING_CAPABILITY,
    UNSUPPORTED_VERSION,
    StatelessSession,
    result_type,
)
from cat_code.mcp.skills import (
    SKILLS_EXTENSION,
    LoadedSkill,
    Skill,
    VerifiedFile,
    load_skill,
    read_skill_file,
    valid_skill,
)
from cat_code.mcp.tasks import Shape, TaskWait, task_shape
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

DEFAULT_REQUEST_TIMEOUT_S = 30.0
#: The most pages a tools/list may take; a server looping on cursors must not hang us.
MAX_LIST_PAGES = 1000
#: How often a listing is redone when the list changes while it is read; then it is
#: returned uncached, so a server that changes its list constantly cannot loop us.
MAX_RELISTS = 3

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: How many times one request may come back asking for input (2026-07-28 multi-round
#: requests) before it fails: a server asking for ever must not hold a call for ever.
MAX_INPUT_ROUNDS = 8
#: How long a tool call waits after we answered a server's ``roots/list``: servers such as
#: server-filesystem take the answer in the background, and a call that overtakes it is
#: refused ("Access denied"). A bound, not a signal: no server says when it is done.
ROOTS_GRACE_S = 0.15
#: How many status notifications of not-yet-followed tasks are kept (see `_follow_task`).
EARLY_TASK_NOTES = 32
#: ``-v`` logs every message, cut to this many characters.
TRACE_CHARS = 2000

#: (progress, total, message) for one request's notifications/progress.
ProgressHandler = Callable[[float, float | None, str | None], None]
#: Given the elicitation/create params, returns the result ({"action": ..., "content": ...}).
ElicitationHandler = Callable[[JsonObject], Awaitable[JsonObject]]


class _Expired(SessionExpired):
    """A request's answer said its session is gone; ``sent`` is the context it went with."""

    def __init__(self, message: str, sent: RequestContext) -> None:
        super().__init__(message)
        self.sent = sent


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
        self.session: Session = HandshakeSession(fallback=fallback)
        #: The session, when it is a stateless (2026-07-28) one: requests are decorated.
        self._modern: StatelessSession | None = None
        self._fallback = fallback
        self._pinned_version = protocol_version
        self._era_memory = era_memory
        #: Why the connection ended by itself (a stdio child exited, ...), once it has.
        self.closed_reason: str | None = None
        self._ids = itertools.count(1)
        self._progress_tokens = itertools.count(1)
        #: progress token → (the caller's handler, the request id, its timeout)
        self._progress: dict[Any, tuple[ProgressHandler, int, float]] = {}
        self._tools: list[ToolDefinition] | None = None
        #: Event-loop time until which the cached tool list is fresh (a modern ``ttlMs``).
        self._tools_fresh_until = math.inf
        #: Bumped by every tools/list_changed, so a listing in flight knows it is stale.
        self._tools_generation = 0
        self._background: set[asyncio.Task[Any]] = set()
        #: The handshake that replaces an expired session, shared by every call waiting on it.
        self._renewal: asyncio.Task[None] | None = None
        self._started = False
        self._closing = False
        self._deadlines = Deadlines()
        #: Told when the server says its resources / prompts changed, or one resource did.
        self.on_resources_changed: Callable[[], None] | None = None
        self.on_prompts_changed: Callable[[], None] | None = None
        self.on_resource_updated: Callable[[str], None] | None = None
        self._listings: dict[str, _Listing] = {method: _Listing() for method in _LISTED}
        #: Event-loop time until which a tool call waits: the server may still be taking
        #: the roots we just answered (0: no answer lately, the hot path checks only that).
        self._roots_settle_until = 0.0
        #: Task id → the tool call following it (status notifications wake it).
        self._tasks: dict[str, TaskWait] = {}
        #: Status notifications of tasks nobody follows yet: a server may notify before the
        #: call that created the task has resumed (the last `EARLY_TASK_NOTES` are kept).
        self._early_task_notes: dict[str, JsonObject] = {}

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

    def _capabilities(self) -> JsonObject:
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
                    self._capabilities(),
                    pinned=self._pinned_version,
                    memory=self._era_memory,
                    fallback=self._fallback,
                    adopt=self._adopt,
                )
        except TimeoutError:
            if not deadline.expired():  # the transport's own TimeoutError, not our limit
                raise
            raise RequestTimeout(f"no answer to initialize within {timeout:g} s") from None

    def _adopt(self, session: Session) -> None:
        self.session = session
        self._modern = session if isinstance(session, StatelessSession) else None

    async def close(self) -> None:
        """End the session (bounded) and close the transport. Idempotent."""
        if self._closing:
            await self._transport.close()
            return
        self._closing = True
        if self._unsubscribe_roots is not None:
            self._unsubscribe_roots()
        self._deadlines.close()
        for task in list(self._background):
            task.cancel()
        try:
            if self._started and self.closed_reason is None:
                await self.session.close(self)
        finally:
            await self._transport.close()

    def _on_close(self, reason: str) -> None:
        if self._closing or self.closed_reason is not None:
            return
        self.closed_reason = reason
        if self.on_lost is not None:
            self.on_lost(reason)

    # -- the session's link ----------------------------------------------------------

    async def exchange(self, method: str, params: JsonObject, context: RequestContext) -> Any:
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        self._trace("→", message)
        response = await self._transport.request(message, context)
        self._trace("←", response)
        return _result_of(response)

    async def notify(self, method: str, context: RequestContext) -> None:
        message: JsonObject = {"jsonrpc": "2.0", "method": method}
        self._trace("→", message)
        await self._transport.send(message, context)

    async def switch_transport(self, transport: Transport) -> None:
        await self._transport.close()
        self._transport = transport
        await transport.start(self._on_message, self._on_close)

    # -- requests --------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressHandler | None = None,
    ) -> Any:
        """Send a request and return its result; raise an `McpClientError` on failure.

        On timeout or cancellation the server is told with ``notifications/cancelled``.
        A request issued while the session is being renewed waits for the new one; a
        request that finds the session expired renews it (once for all) and is retried once.
        """
        if self._modern is not None:
            return await self._stateless_request(method, params, timeout, progress)
        if self._renewal is not None:
            await self._await_renewal(method, timeout)
        try:
            return await self._timed_request(method, params, timeout, progress)
        except _Expired as exc:
            return await self._in_new_session(exc, method, params, timeout, progress)

    async def _stateless_request(
        self,
        method: str,
        params: JsonObject | None,
        timeout: float | None,
        progress: ProgressHandler | None,
    ) -> Any:
        """A 2026-07-28 request with the retries its answers may ask for: another version
        (-32022, once), headers that mismatched a changed tool (-32020: list the tools
        again, once), and input (``input_required``: bounded rounds, each a new id)."""
        session = self._modern
        assert session is not None
        retried: set[int] = set()
        rounds = 0
        while True:
            try:
                result = await self._timed_request(method, params, timeout, progress)
            except McpError as exc:
                if exc.code in retried:
                    raise
                retried.add(exc.code)
                if exc.code == UNSUPPORTED_VERSION:
                    mutual = session.mutual_version(exc.data)
                    if mutual is None:
                        raise McpError(
                            exc.code,
                            f"server '{self.name}' supports none of the protocol versions "
                            f"cat-code speaks ({exc.message})",
                            exc.data,
                        ) from exc
                    logger.info("%s: the server asked for protocol %s", self.name, mutual)
                    session.use_version(mutual)
                    continue
                if exc.code == HEADER_MISMATCH:
                    logger.info("%s: %s; listing the tools again", self.name, exc.message)
                    if method == "tools/call":
                        await self.list_tools(refresh=True)
                    continue
                if exc.code == MISSING_CAPABILITY:
                    raise McpError(
                        exc.code,
                        f"server '{self.name}' needs a client capability cat-code does not "
                        f"offer: {_missing_capability(exc.data)} ({exc.message})",
                        exc.data,
                    ) from exc
                raise
            if result_type(result) in ("complete", "task"):
                return result
            rounds += 1
            if rounds > MAX_INPUT_ROUNDS:
                raise ProtocolError(
                    f"{method}: server '{self.name}' still asked for input after "
                    f"{MAX_INPUT_ROUNDS} rounds"
                )
            params = await self._with_inputs(params, result)

    async def _with_inputs(self, params: JsonObject | None, result: JsonObject) -> JsonObject:
        """The retry's params: the inputs the server asked for, its ``requestState`` as is."""
        retry = {
            k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")
        }
        requests = result.get("inputRequests")
        if isinstance(requests, dict) and requests:
            retry["inputResponses"] = await self._answer_inputs(requests)
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        return retry

    async def _answer_inputs(self, requests: JsonObject) -> JsonObject:
        """The answers to a map of input requests, keyed like it."""
        return {key: await self._input_for(request) for key, request in requests.items()}

    async def _input_for(self, request: Any) -> JsonObject:
        """One input a server asked for: a form through the elicitation handler, the roots
        (as they are now); anything else, or no handler, is declined."""
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params") if isinstance(request, dict) else None
        params = params if isinstance(params, dict) else {}
        if method == "elicitation/create" and self.elicitation_handler is not None:
            try:
                return await self.elicitation_handler(params)
            except Exception as exc:  # a boundary: the handler is the user's
                logger.warning("%s: elicitation handler failed: %s", self.name, exc)
                return {"action": "cancel"}
        if method == "roots/list":
            return self._roots_result()
        logger.debug("%s: declining the server's %s input request", self.name, method)
        return {"action": "decline"}

    async def _url_required(self, method: str, error: McpError) -> McpError:
        """A -32042: the server needs the user on a web page first. Each URL goes to the
        elicitation handler (which asks before opening anything); the error that is
        raised says what the user chose, so whoever called may try again later."""
        urls = url_elicitations(error.data)
        if self.elicitation_handler is None or not urls:
            return error
        chosen = []
        for params in urls:
            try:
                action = (await self.elicitation_handler(params)).get("action")
            except Exception as exc:  # a boundary: the handler is the user's
                logger.warning("%s: elicitation handler failed: %s", self.name, exc)
                action = "cancel"
            chosen.append(f"{params['url']} ({'opened' if action == 'accept' else action})")
        return McpError(
            error.code,
            f"{method}: server '{self.name}' needs the user to finish a step in the browser "
            f"first: {'; '.join(chosen)}. Try again once it is done. ({error.message})",
            error.data,
        )

    async def _in_new_session(
        self,
        expired: _Expired,
        method: str,
        params: JsonObject | None,
        timeout: float | None,
        progress: ProgressHandler | None,
    ) -> Any:
        """Renew the session (or join the renewal under way), then retry once."""
        await self._renew(expired, method, timeout)
        try:
            return await self._timed_request(method, params, timeout, progress)
        except _Expired as again:
            raise SessionExpired(
                f"{method}: the server refused the new session too ({again.__cause__})"
            ) from again

    async def _renew(self, expired: _Expired, method: str, timeout: float | None) -> None:
        if expired.sent is self.session.context:
            self.renew_soon()
        await self._await_renewal(method, timeout)

    def renew_soon(self) -> None:
        """Start renewing the session, unless a renewal is already under way: one new
        session for every call that found the old one gone, not one each."""
        renewal = self._renewal
        if self._closing or (renewal is not None and not renewal.done()):
            return
        logger.info("%s: session expired; starting a new one", self.name)
        renewal = self._renewal = asyncio.create_task(self._renew_session())
        self._background.add(renewal)  # close() cancels it
        renewal.add_done_callback(self._renewed)

    async def _await_renewal(self, method: str, timeout: float | None) -> None:
        """Wait for the renewal under way, within this caller's own timeout."""
        renewal = self._renewal
        if renewal is None:
            return
        limit = self.request_timeout if timeout is None else timeout
        waiting = asyncio.timeout(None if limit == math.inf else limit)
        try:
            # Shielded: a caller that gives up must not cancel the others' renewal.
            async with waiting:
                await asyncio.shield(renewal)
        except TimeoutError:
            if waiting.expired():
                raise RequestTimeout(
                    f"{method} timed out after {limit:g} s waiting for a new session "
                    f"(no answer to initialize from server '{self.name}')"
                ) from None
            raise SessionExpired(
                f"{method}: could not renew the session (no answer to initialize from "
                f"server '{self.name}' within {self._renewal_limit():g} s)"
            ) from None
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if renewal.cancelled() and task is not None and task.cancelling() == 0:
                # close() ended the renewal; nobody cancelled this caller.
                raise TransportClosed("connection closed") from None
            raise

    def _renewal_limit(self) -> float:
        return self.request_timeout

    async def _renew_session(self) -> None:
        # Bounded by the server's request timeout, which no single caller owns: a renewal
        # nobody waits for any more still ends.
        limit = self._renewal_limit()
        async with asyncio.timeout(None if limit == math.inf else limit):
            await self.session.renew(self, self._capabilities())

    def _renewed(self, renewal: asyncio.Task[None]) -> None:
        self._background.discard(renewal)
        if self._renewal is renewal:
            self._renewal = None
        if not renewal.cancelled():
            renewal.exception()  # its waiters have it; none left must not log "never retrieved"

    async def _timed_request(
        self,
        method: str,
        params: JsonObject | None,
        timeout: float | None,
        progress: ProgressHandler | None,
    ) -> Any:
        limit = self.request_timeout if timeout is None else timeout
        request_id = next(self._ids)
        token = None
        if progress is not None:
            token = next(self._progress_tokens)
            params = dict(params or {})
            params["_meta"] = {**params.get("_meta", {}), "progressToken": token}
            self._progress[token] = (progress, request_id, limit)
        modern = self._modern
        if modern is None:
            context = self.session.context
        else:
            params, context = modern.prepare(method, params)
        message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        deadline = self._deadlines.start(request_id, limit)
        self._trace("→", message)
        try:
            response = await self._transport.request(message, self._with_deadline(context, limit))
            self._trace("←", response)
        except asyncio.CancelledError:
            if deadline is not None and deadline.expired_here():
                raise self._timed_out(request_id, method, limit) from None
            self._cancel_remote(request_id, "cancelled by the user")
            raise
        except HttpStatusError as exc:
            error = exc.rpc_error
            if modern is not None and error is not None:
                # A 2026-07-28 server answers protocol errors with a 4xx and the error.
                raise _rpc_error(error) from exc
            if self.session.expired(exc, context):
                raise _Expired(
                    f"the server no longer knows this session ({exc}); a new session is needed",
                    context,
                ) from exc
            raise
        except TimeoutError:
            raise self._timed_out(request_id, method, limit) from None
        finally:
            if deadline is not None:
                self._deadlines.finish(request_id)
            if token is not None:
                del self._progress[token]
        if modern is not None:
            result = _result_of(response)
            modern.observe(result)
            return result
        return _result_of(response)

    @staticmethod
    def _with_deadline(context: RequestContext, limit: float) -> RequestContext:
        """The session's context with the latest time the answer can still be wanted (the
        timeout, as far as progress may stretch it). Only a context with headers (HTTP)
        gets one: stdio never waits to reconnect, and its hot path allocates nothing."""
        if not context.headers or limit == math.inf:
            return context
        latest = asyncio.get_running_loop().time() + limit * MAX_TIMEOUT_WITH_PROGRESS
        return replace(context, deadline=latest)

    def _timed_out(self, request_id: int, method: str, limit: float) -> RequestTimeout:
        self._cancel_remote(request_id, f"timed out after {limit:g} s")
        return RequestTimeout(
            f"{method} timed out after {limit:g} s (no answer or progress from server "
            f"'{self.name}')"
        )

    def _cancel_remote(self, request_id: int, reason: str) -> None:
        if self._modern is not None and self._transport.kind == "http":
            return  # 2026-07-28 HTTP: abandoning the request closed its stream; that is the cancel
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": reason},
        }
        self._spawn(self._send_quietly(note))

    async def _send_quietly(self, message: JsonObject) -> None:
        self._trace("→", message)
        try:
            await self._transport.send(message, self.session.context)
        except McpClientError as exc:
            what = message.get("method") or f"the reply to request {message.get('id')!r}"
            logger.debug("%s: could not send %s: %s", self.name, what, exc)

    # -- tools -----------------------------------------------------------------------

    async def list_tools(self, *, refresh: bool = False) -> list[ToolDefinition]:
        """Every tool over every page; cached until refreshed or the server reports a change."""
        fresh = self._tools_fresh_until > asyncio.get_running_loop().time()
        if self._tools is not None and not refresh and fresh:
            return self._tools
        tools: list[ToolDefinition] = []
        for _ in range(MAX_RELISTS):
            generation = self._tools_generation
            tools = await self._list_every_page()
            if generation == self._tools_generation:
                self._tools = tools
                break
            # The list changed while we read it: what we hold may already be stale.
        return tools

    async def _list_every_page(self) -> list[ToolDefinition]:
        tools: list[ToolDefinition] = []
        cursor: Any = None
        ttl = math.inf
        for _ in range(MAX_LIST_PAGES):
            # An empty-string cursor is a cursor (2026 spec: MUST NOT be taken as the end).
            params = {"cursor": cursor} if cursor is not None else None
            result = await self.request("tools/list", params)
            if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
                raise ProtocolError("tools/list result has no 'tools' array")
            page = [t for t in result["tools"] if _valid_tool(t, self.name)]
            tools.extend(self.session.accept_tools(page))  # type: ignore[arg-type]
            if self._modern is not None:
                ttl = min(ttl, _ttl_s(result))
            cursor = result.get("nextCursor")
            if cursor is None:
                self._tools_fresh_until = asyncio.get_running_loop().time() + ttl
                return tools
        raise ProtocolError(f"tools/list did not end after {MAX_LIST_PAGES} pages")

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
        if self._modern is None and self._task_support(name):
            params["task"] = {"ttl": int(timeout * 1000)} if timeout and timeout < math.inf else {}
        if self._roots_settle_until:
            await self._roots_settled()
        try:
            # `request` inlined: one coroutine less per call on the hottest path (~0.8 µs).
            if self._modern is not None:
                result = await self._stateless_request("tools/call", params, timeout, progress)
            else:
                if self._renewal is not None:
                    await self._await_renewal("tools/call", timeout)
                try:
                    result = await self._timed_request("tools/call", params, timeout, progress)
                except _Expired as exc:
                    result = await self._in_new_session(
                        exc, "tools/call", params, timeout, progress
                    )
        except McpError as exc:
            if exc.code == URL_ELICITATION_REQUIRED:
                raise await self._url_required(name, exc) from exc
            raise
        shape = task_shape(result)
        if shape is not None:
            result = await self._follow_task(result, shape, timeout, progress)
        if not isinstance(result, dict):
            raise ProtocolError("tools/call result is not an object")
        # Where call results cross into our code: an object is taken as one (the adapter
        # still checks every field it reads).
        return cast(CallToolResult, result)

    def _task_support(self, tool: str) -> bool:
        """Whether a 2025-11-25 server runs this tool as a task: it declares task-augmented
        ``tools/call`` and the tool allows it (``execution.taskSupport``)."""
        tasks = self.server_capabilities.get("tasks")
        requests = tasks.get("requests") if isinstance(tasks, dict) else None
        tools = requests.get("tools") if isinstance(requests, dict) else None
        if not isinstance(tools, dict) or "call" not in tools:
            return False
        for definition in self._tools or ():
            if definition.get("name") == tool:
                execution = definition.get("execution")
                support = execution.get("taskSupport") if isinstance(execution, dict) else None
                return support in ("optional", "required")
        return False

    async def _follow_task(
        self,
        first: JsonObject,
        shape: Shape,
        timeout: float | None,
        progress: ProgressHandler | None,
    ) -> Any:
        """Poll a task-augmented call to its end (`cat_code.mcp.tasks`): bounded by the
        task's TTL and ``timeout`` (``toolTimeoutMs``), each poll by the request timeout."""
        wait = TaskWait(
            first,
            shape,
            server=self.name,
            request=self.request,
            answer_inputs=self._answer_inputs,
            spawn=self._spawn,
            limit=timeout,
            report=progress,
        )
        self._tasks[wait.task_id] = wait
        early = self._early_task_notes.pop(wait.task_id, None)
        if early is not None:
            wait.notified(early)
        try:
            return await wait.outcome()
        finally:
            self._tasks.pop(wait.task_id, None)

    # -- resources, prompts, completion ------------------------------------------------

    def offers(self, feature: str) -> bool:
        """Whether the server declared ``feature`` (``resources``, ``prompts``, ...)."""
        return isinstance(self.server_capabilities.get(feature), dict)

    async def list_resources(self, *, refresh: bool = False) -> list[Resource]:
        """Every resource over every page ([] with no request if the server has none)."""
        if not self.offers("resources"):
            return []
        return cast(list[Resource], await self._listing("resources/list", refresh))

    async def list_resource_templates(self, *, refresh: bool = False) -> list[ResourceTemplate]:
        """Every resource template over every page ([] if the server has no resources)."""
        if not self.offers("resources"):
            return []
        listed = await self._listing("resources/templates/list", refresh)
        return cast(list[ResourceTemplate], listed)

    async def list_prompts(self, *, refresh: bool = False) -> list[Prompt]:
        """Every prompt over every page ([] with no request if the server has none)."""
        if not self.offers("prompts"):
            return []
        return cast(list[Prompt], await self._listing("prompts/list", refresh))

    def cached_prompts(self) -> list[Prompt] | None:
        """The prompts as last listed, if that listing is still current (no request)."""
        return cast("list[Prompt] | None", self._listings["prompts/list"].items)

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ReadResourceResult:
        """The contents of one resource (text and/or base64 blobs)."""
        if not self.offers("resources"):
            raise ProtocolError(f"server '{self.name}' offers no resources")
        result = await self.request("resources/read", {"uri": uri}, timeout=timeout)
        try:
            return valid_read_result(result, self.name, uri)
        except ValueError as exc:
            raise ProtocolError(str(exc)) from None

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, timeout: float | None = None
    ) -> GetPromptResult:
        """One prompt filled in with ``arguments`` (strings, as the spec has them)."""
        if not self.offers("prompts"):
            raise ProtocolError(f"server '{self.name}' offers no prompts")
        params: JsonObject = {"name": name, "arguments": dict(arguments or {})}
        result = await self.request("prompts/get", params, timeout=timeout)
        try:
            return valid_prompt_result(result, self.name, name)
        except ValueError as exc:
            raise ProtocolError(str(exc)) from None

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
        return cast(list[Skill], await self._listing("skills/list", refresh))

    def cached_skills(self) -> list[Skill] | None:
        """The skills as last listed (no request; None when never listed)."""
        if not self._offers_skills():
            return []
        return cast("list[Skill] | None", self._listings["skills/list"].items)

    async def load_skill(self, skill: Skill, *, timeout: float | None = None) -> LoadedSkill:
        """Read the skill's ``SKILL.md`` and verify it; `SkillRefused` when it fails."""

        async def read(uri: str) -> ReadResourceResult:
            return await self.read_resource(uri, timeout=timeout)

        return await load_skill(self.name, skill, read)

    async def read_skill_file(
        self, skill: Skill, path: str, *, timeout: float | None = None
    ) -> VerifiedFile:
        """One file of the skill (a path inside it), read and verified."""

        async def read(uri: str) -> ReadResourceResult:
            return await self.read_resource(uri, timeout=timeout)

        return await read_skill_file(self.name, skill, path, read)

    async def _listing(self, method: str, refresh: bool) -> list[Any]:
        """A cached paged list (`list_tools`'s rules: a change mid-listing re-lists)."""
        listing = self._listings[method]
        fresh = listing.fresh_until > asyncio.get_running_loop().time()
        if listing.items is not None and not refresh and fresh:
            return listing.items
        items: list[Any] = []
        for _ in range(MAX_RELISTS):
            generation = listing.generation
            items, ttl = await self._pages(method)
            if generation == listing.generation:
                listing.items = items
                listing.fresh_until = asyncio.get_running_loop().time() + ttl
                break
        return items

    async def _pages(self, method: str) -> tuple[list[Any], float]:
        key, valid = _LISTED[method]
        items: list[Any] = []
        cursor: Any = None
        ttl = math.inf
        for _ in range(MAX_LIST_PAGES):
            params = {"cursor": cursor} if cursor is not None else None
            result = await self.request(method, params)
            if not isinstance(result, dict) or not isinstance(result.get(key), list):
                raise ProtocolError(f"{method} result has no {key!r} array")
            items.extend(v for entry in result[key] if (v := valid(entry, self.name)) is not None)
            if self._modern is not None:
                ttl = min(ttl, _ttl_s(result))
            cursor = result.get("nextCursor")
            if cursor is None:
                return items, ttl
        raise ProtocolError(f"{method} did not end after {MAX_LIST_PAGES} pages")

    def _listing_changed(self, *methods: str) -> None:
        for method in methods:
            listing = self._listings[method]
            listing.items = None
            listing.generation += 1

    # -- server-originated messages --------------------------------------------------

    def _on_message(self, message: JsonObject) -> None:
        self._trace("←", message)
        method = message.get("method")
        if "id" in message:
            self._on_request(message["id"], method, message.get("params"))
            return
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if method == "notifications/progress":
            token = params.get("progressToken")
            entry = self._progress.get(token) if isinstance(token, str | int) else None
            if entry is not None:
                handler, request_id, limit = entry
                # A server that reports progress is alive: give the request its time again.
                self._deadlines.extend(request_id, limit)
                progress, total = params.get("progress"), params.get("total")
                text = params.get("message")
                handler(
                    float(progress) if isinstance(progress, int | float) else 0.0,
                    float(total) if isinstance(total, int | float) else None,
                    text if isinstance(text, str) else None,
                )
        elif method == "notifications/message":
            level = params.get("level", "info")
            logger.log(
                _LOG_LEVELS.get(str(level), logging.INFO),
                "%s [%s]: %s",
                self.name,
                params.get("logger", level),
                params.get("data"),
            )
        elif method == "notifications/tools/list_changed":
            logger.debug("%s: tool list changed", self.name)
            self._tools = None
            self._tools_generation += 1
            if self.on_tools_changed is not None:
                self.on_tools_changed()
        elif method == "notifications/resources/list_changed":
            logger.debug("%s: resource list changed", self.name)
            self._listing_changed("resources/list", "resources/templates/list")
            if self.on_resources_changed is not None:
                self.on_resources_changed()
        elif method == "notifications/prompts/list_changed":
            logger.debug("%s: prompt list changed", self.name)
            self._listing_changed("prompts/list")
            if self.on_prompts_changed is not None:
                self.on_prompts_changed()
        elif method in ("notifications/tasks", "notifications/tasks/status"):
            task_id = params.get("taskId")
            wait = self._tasks.get(task_id) if isinstance(task_id, str) else None
            if wait is not None:
                wait.notified(params)
            elif isinstance(task_id, str):
                self._early_task_notes[task_id] = params
                while len(self._early_task_notes) > EARLY_TASK_NOTES:
                    del self._early_task_notes[next(iter(self._early_task_notes))]
        elif method == "notifications/elicitation/complete":
            logger.info("%s: the step in the browser is done", self.name)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if isinstance(uri, str) and self.on_resource_updated is not None:
                self.on_resource_updated(uri)
        else:
            logger.debug("%s: ignoring notification %s", self.name, method)

    def _on_request(self, request_id: Any, method: Any, params: Any) -> None:
        if method == "ping":
            self._reply(request_id, result={})
        elif method == "roots/list" and self.roots is not None:
            self._reply(request_id, result=self.roots.result())
            grace_end = asyncio.get_running_loop().time() + ROOTS_GRACE_S
            self._roots_settle_until = max(self._roots_settle_until, grace_end)
        elif method == "elicitation/create" and self.elicitation_handler is not None:
            self._spawn(self._elicit(request_id, params if isinstance(params, dict) else {}))
        else:
            self._reply(
                request_id,
                error={"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"},
            )

    def _roots_result(self) -> JsonObject:
        # Without a Roots of its own (a bare client), the working directory, as always.
        return (self.roots or Roots()).result()

    async def _roots_settled(self) -> None:
        """Wait out what is left of the grace after our last ``roots/list`` answer: one
        wait, however many answers follow, so a server asking again and again cannot hold
        a call."""
        left = self._roots_settle_until - asyncio.get_running_loop().time()
        if left > 0:
            logger.debug("%s: giving the server %.0f ms to take the roots", self.name, left * 1e3)
            await asyncio.sleep(left)
        if self._roots_settle_until <= asyncio.get_running_loop().time():
            self._roots_settle_until = 0.0

    def _roots_changed(self) -> None:
        """The roots grew: a handshake-era server is told; a 2026-07-28 one has no such
        notification and gets the new list the next time a request asks for it."""
        if self._closing or self.closed_reason is not None or not self._started:
            return
        if self.era != "handshake" or self.protocol_version is None:
            logger.debug("%s: roots changed; nothing to send in this era", self.name)
            return
        self._spawn(
            self._send_quietly({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
        )

    async def _elicit(self, request_id: Any, params: JsonObject) -> None:
        assert self.elicitation_handler is not None
        try:
            result = await self.elicitation_handler(params)
        except Exception as exc:
            logger.warning("%s: elicitation handler failed: %s", self.name, exc)
            self._reply(request_id, error={"code": INTERNAL_ERROR, "message": str(exc)})
            return
        self._reply(request_id, result=result)

    def _reply(
        self, request_id: Any, *, result: Any = None, error: JsonObject | None = None
    ) -> None:
        message: JsonObject = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            message["error"] = error
        else:
            message["result"] = result
        self._spawn(self._send_quietly(message))

    def _trace(self, arrow: str, message: Any) -> None:
        """``-v``: one debug line per message, ``→`` to the server, ``←`` from it."""
        if not logger.isEnabledFor(logging.DEBUG):
            return
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=repr)
        if len(text) > TRACE_CHARS:
            text = f"{text[:TRACE_CHARS]}… ({len(text)} characters)"
        logger.debug("%s %s %s", self.name, arrow, text)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


def _result_of(response: JsonObject) -> Any:
    error = response.get("error")
    if error is not None:
        if not isinstance(error, dict):
            raise ProtocolError(f"malformed JSON-RPC error: {error!r:.200}")
        code = error.get("code")
        return_code = code if isinstance(code, int) else INTERNAL_ERROR
        raise McpError(return_code, str(error.get("message", "unknown error")), error.get("data"))
    if "result" not in response:
        raise ProtocolError("response has neither 'result' nor 'error'")
    return response["result"]


def _rpc_error(error: JsonObject) -> McpError:
    code = error.get("code")
    return McpError(
        code if isinstance(code, int) else INTERNAL_ERROR,
        str(error.get("message", "unknown error")),
        error.get("data"),
    )


def _ttl_s(result: JsonObject) -> float:
    """How long a 2026-07-28 list result stays fresh: ``ttlMs``; absent or negative is 0."""
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
        return 0.0
    return float(ttl) / 1000


def _missing_capability(data: Any) -> str:
    """What a -32021's ``data`` says is missing, as well as it says it."""
    if isinstance(data, dict):
        for key in ("missing", "required", "capabilities", "capability"):
            if key in data:
                return json.dumps(data[key])[:200]
    return json.dumps(data)[:200] if data is not None else "(not named)"


@dataclass(slots=True)
class _Listing:
    """One cached paged list: its items, until when they are fresh, and a change counter."""

    items: list[Any] | None = None
    fresh_until: float = math.inf
    #: Bumped by every list_changed, so a listing in flight knows it is stale.
    generation: int = 0


#: Listed method → (the result's array, the check each entry passes).
_LISTED: dict[str, tuple[str, Callable[[Any, str], Any]]] = {
    "resources/list": ("resources", valid_resource),
    "resources/templates/list": ("resourceTemplates", valid_template),
    "prompts/list": ("prompts", valid_prompt),
    "skills/list": ("skills", valid_skill),
}


def _valid_tool(tool: Any, server: str) -> TypeGuard[ToolDefinition]:
    """Where tool definitions cross into our code: a named object is taken as one."""
    if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"]:
        return True
    logger.warning("%s: skipping a tool without a name: %.200r", server, tool)
    return False


__all__ = [
    "MAX_TIMEOUT_WITH_PROGRESS",
    "ElicitationHandler",
    "McpClient",
    "ProgressHandler",
    "TransportError",
]
