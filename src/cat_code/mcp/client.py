"""`McpClient`: one server connection on top of a `Transport`.

It owns the MCP meaning the transport does not know: the ``initialize`` handshake and
version negotiation, ``tools/list`` (every page, cached until the server says the list
changed), ``tools/call``, per-request timeouts that send ``notifications/cancelled``
and leave the connection usable (progress from the server restarts a timeout, up to
``MAX_TIMEOUT_WITH_PROGRESS`` times it in all), and the answers to server-originated
messages (``ping`` → ``{}``, ``elicitation/create`` only when a handler was given,
anything else -32601).
State runs NEW → CONNECTED → CLOSED, or → FAILED with ``last_error`` kept for status
(also when the server process is found dead under a request after connecting).
The handshake lives in ``_handshake`` alone, so the stateless 2026-07-28 era (``_meta``
on every request, no ``initialize``) can be added there without touching transports.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
import json
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

from cat_code import __version__
from cat_code.mcp.errors import (
    McpClientError,
    McpError,
    ProcessExited,
    ProtocolError,
    RequestTimeout,
    SessionExpired,
    TransportError,
)
from cat_code.mcp.transport import JsonObject, Transport

logger = logging.getLogger(__name__)

LATEST_HANDSHAKE_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
CLIENT_INFO = {"name": "cat-code", "title": "cat-code", "version": __version__}
DEFAULT_REQUEST_TIMEOUT_S = 30.0
#: The most pages a tools/list may take; a server looping on cursors must not hang us.
MAX_LIST_PAGES = 1000
#: How often a listing is redone when the list changes while it is read; then it is
#: returned uncached, so a server that changes its list constantly cannot loop us.
MAX_RELISTS = 3

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: ``-v`` logs every message, cut to this many characters.
TRACE_CHARS = 2000
#: Progress from the server restarts a request's timeout, but never past this many times
#: the timeout in all: the spec asks for a maximum even while progress keeps coming.
MAX_TIMEOUT_WITH_PROGRESS = 10

#: (progress, total, message) for one request's notifications/progress.
ProgressHandler = Callable[[float, float | None, str | None], None]
#: Given the elicitation/create params, returns the result ({"action": ..., "content": ...}).
ElicitationHandler = Callable[[JsonObject], Awaitable[JsonObject]]


class ClientState(enum.Enum):
    NEW = "NEW"
    CONNECTED = "CONNECTED"
    FAILED = "FAILED"
    CLOSED = "CLOSED"


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
    ) -> None:
        self.transport = transport
        self.name = name
        self.request_timeout = request_timeout
        self.elicitation_handler = elicitation_handler
        self.on_tools_changed = on_tools_changed
        self.state = ClientState.NEW
        self.last_error: str | None = None
        self.protocol_version: str | None = None
        self.server_info: JsonObject = {}
        self.server_capabilities: JsonObject = {}
        self.instructions: str | None = None
        self._ids = itertools.count(1)
        self._progress_tokens = itertools.count(1)
        #: progress token → (the caller's handler, the request id, its timeout)
        self._progress: dict[Any, tuple[ProgressHandler, int, float]] = {}
        self._tools: list[JsonObject] | None = None
        #: Bumped by every tools/list_changed, so a listing in flight knows it is stale.
        self._tools_generation = 0
        self._background: set[asyncio.Task[Any]] = set()
        #: The handshake that replaces an expired session, shared by every call waiting on it.
        self._renewal: asyncio.Task[None] | None = None
        self._started = False
        self._closing = False
        self._deadlines = _Deadlines()

    # -- lifecycle -------------------------------------------------------------------

    async def connect(self, timeout: float | None = None) -> None:
        """Start the transport and run the handshake; FAILED with the reason on any error."""
        deadline = asyncio.timeout(timeout)
        try:
            async with deadline:
                if not self._started:
                    await self.transport.start(self._on_message)
                    self._started = True
                await self._handshake()
        except TimeoutError as exc:
            if not deadline.expired():  # the transport's own TimeoutError, not our limit
                self._fail(f"TimeoutError: {exc}" if str(exc) else "TimeoutError")
                raise
            self._fail(f"no answer to initialize within {timeout:g} s")
            raise RequestTimeout(self.last_error) from None
        except McpClientError as exc:
            self._fail(str(exc))
            raise
        except BaseException as exc:
            self._fail(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
            raise
        self.state = ClientState.CONNECTED

    async def _handshake(self) -> None:
        capabilities: JsonObject = {}
        if self.elicitation_handler is not None:
            capabilities["elicitation"] = {"form": {}}
        params = {
            "protocolVersion": LATEST_HANDSHAKE_VERSION,
            "capabilities": capabilities,
            "clientInfo": CLIENT_INFO,
        }
        # Not cancellable per the spec, so no cancel notification: the connect timeout
        # (startup timeout) bounds it and fails the whole server instead.
        result = await self._raw_request("initialize", params)
        if not isinstance(result, dict):
            raise ProtocolError("initialize result is not an object")
        version = result.get("protocolVersion")
        if version not in SUPPORTED_VERSIONS:
            raise ProtocolError(f"unsupported protocol version {version}")
        self.protocol_version = version
        self.transport.protocol_version = version
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        caps = result.get("capabilities")
        self.server_capabilities = caps if isinstance(caps, dict) else {}
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        initialized: JsonObject = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        self._trace("→", initialized)
        await self.transport.send(initialized)
        logger.debug("%s: connected, protocol %s, server %s", self.name, version, self.server_info)

    async def close(self) -> None:
        """Close the connection. Idempotent; keeps FAILED as the state if it had failed."""
        self._closing = True
        self._deadlines.close()
        for task in list(self._background):
            task.cancel()
        try:
            await self.transport.close()
        finally:
            if self.state is not ClientState.FAILED:
                self.state = ClientState.CLOSED

    def _fail(self, reason: str) -> None:
        self.state = ClientState.FAILED
        self.last_error = reason

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
        A `SessionExpired` from the transport re-runs the handshake and retries once.
        """
        try:
            return await self._timed_request(method, params, timeout, progress)
        except SessionExpired:
            return await self._in_new_session(method, params, timeout, progress)

    async def _in_new_session(
        self,
        method: str,
        params: JsonObject | None,
        timeout: float | None,
        progress: ProgressHandler | None,
    ) -> Any:
        limit = self.request_timeout if timeout is None else timeout
        renewal = self._renewal
        if renewal is None or renewal.done():
            # One new session for every call that found the old one gone, not one each.
            logger.info("%s: session expired; starting a new one", self.name)
            renewal = self._renewal = asyncio.create_task(self._renew_session(limit))
            self._background.add(renewal)  # close() cancels it
            renewal.add_done_callback(self._renewed)
        try:
            # Shielded: a caller that gives up must not cancel the others' renewal.
            async with asyncio.timeout(None if limit == math.inf else limit):
                await asyncio.shield(renewal)
        except TimeoutError:
            raise RequestTimeout(
                f"{method} timed out after {limit:g} s waiting for a new session "
                f"(no answer to initialize from server '{self.name}')"
            ) from None
        return await self._timed_request(method, params, timeout, progress)

    async def _renew_session(self, limit: float) -> None:
        # Bounded by its starter's limit, so a renewal nobody waits for any more ends too.
        async with asyncio.timeout(None if limit == math.inf else limit):
            await self._handshake()

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
        message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        deadline = self._deadlines.start(request_id, limit)
        self._trace("→", message)
        try:
            response = await self.transport.request(message)
            self._trace("←", response)
        except asyncio.CancelledError:
            if deadline is not None and deadline.expired_here():
                raise self._timed_out(request_id, method, limit) from None
            self._cancel_remote(request_id, "cancelled by the user")
            raise
        except ProcessExited as exc:
            # The server process died under us: status must say so, and why. (Only this
            # TransportClosed is final; an HTTP one may be a single broken connection.)
            if self.state is ClientState.CONNECTED and not self._closing:
                self._fail(str(exc))
            raise
        except TimeoutError:
            raise self._timed_out(request_id, method, limit) from None
        finally:
            if deadline is not None:
                self._deadlines.finish(request_id)
            if token is not None:
                del self._progress[token]
        return _result_of(response)

    def _timed_out(self, request_id: int, method: str, limit: float) -> RequestTimeout:
        self._cancel_remote(request_id, f"timed out after {limit:g} s")
        return RequestTimeout(
            f"{method} timed out after {limit:g} s (no answer or progress from server "
            f"'{self.name}')"
        )

    async def _raw_request(self, method: str, params: JsonObject) -> Any:
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        self._trace("→", message)
        response = await self.transport.request(message)
        self._trace("←", response)
        return _result_of(response)

    def _cancel_remote(self, request_id: int, reason: str) -> None:
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": reason},
        }
        self._spawn(self._send_quietly(note))

    async def _send_quietly(self, message: JsonObject) -> None:
        self._trace("→", message)
        try:
            await self.transport.send(message)
        except McpClientError as exc:
            logger.debug("%s: could not send %s: %s", self.name, message.get("method"), exc)

    # -- tools -----------------------------------------------------------------------

    async def list_tools(self, *, refresh: bool = False) -> list[JsonObject]:
        """Every tool over every page; cached until refreshed or the server reports a change."""
        if self._tools is not None and not refresh:
            return self._tools
        tools: list[JsonObject] = []
        for _ in range(MAX_RELISTS):
            generation = self._tools_generation
            tools = await self._list_every_page()
            if generation == self._tools_generation:
                self._tools = tools
                break
            # The list changed while we read it: what we hold may already be stale.
        return tools

    async def _list_every_page(self) -> list[JsonObject]:
        tools: list[JsonObject] = []
        cursor: Any = None
        for _ in range(MAX_LIST_PAGES):
            # An empty-string cursor is a cursor (2026 spec: MUST NOT be taken as the end).
            params = {"cursor": cursor} if cursor is not None else None
            result = await self.request("tools/list", params)
            if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
                raise ProtocolError("tools/list result has no 'tools' array")
            tools.extend(t for t in result["tools"] if _valid_tool(t, self.name))
            cursor = result.get("nextCursor")
            if cursor is None:
                return tools
        raise ProtocolError(f"tools/list did not end after {MAX_LIST_PAGES} pages")

    async def call_tool(
        self,
        name: str,
        arguments: JsonObject | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressHandler | None = None,
    ) -> JsonObject:
        """Call a tool by its original name and return the wire ``CallToolResult``."""
        params = {"name": name, "arguments": arguments or {}}
        # `request` inlined: one coroutine less per call on the hottest path (~0.8 µs).
        try:
            result = await self._timed_request("tools/call", params, timeout, progress)
        except SessionExpired:
            result = await self._in_new_session("tools/call", params, timeout, progress)
        if not isinstance(result, dict):
            raise ProtocolError("tools/call result is not an object")
        return result

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
        else:
            logger.debug("%s: ignoring notification %s", self.name, method)

    def _on_request(self, request_id: Any, method: Any, params: Any) -> None:
        if method == "ping":
            self._reply(request_id, result={})
        elif method == "elicitation/create" and self.elicitation_handler is not None:
            self._spawn(self._elicit(request_id, params if isinstance(params, dict) else {}))
        else:
            self._reply(
                request_id,
                error={"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"},
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

    def _renewed(self, renewal: asyncio.Task[None]) -> None:
        self._background.discard(renewal)
        if not renewal.cancelled():
            renewal.exception()  # its waiters have it; none left must not log "never retrieved"


class _Deadline:
    """One request's timeout: its task, when it expires, and whether it has."""

    __slots__ = ("cancelling", "expired", "latest", "task", "when")

    def __init__(self, task: asyncio.Task[Any], when: float, latest: float) -> None:
        self.task = task
        self.when = when
        self.latest = latest
        self.cancelling = task.cancelling()
        self.expired = False

    def expired_here(self) -> bool:
        """Whether this deadline caused the CancelledError in hand (asyncio.timeout's rule)."""
        return self.expired and self.task.uncancel() <= self.cancelling


class _Deadlines:
    """Every request timeout of one client on a single timer.

    ``asyncio.timeout`` costs about 5 µs a request (an object and a timer in the loop's
    heap), as much as a whole floor round trip with 1000 calls in flight. Here starting
    a deadline is a dict entry; the timer is re-armed only for a deadline earlier than
    the armed one (with one timeout per client, never while armed). When it fires, each
    request past its deadline has its task cancelled exactly as ``asyncio.timeout`` does,
    and `_Deadline.expired_here` turns that CancelledError into a timeout.
    """

    def __init__(self) -> None:
        self._entries: dict[int, _Deadline] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._armed_at = math.inf

    def start(self, key: int, limit: float | None) -> _Deadline | None:
        if limit is None or limit == math.inf:
            return None
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None, "requests run in a task"
        now = loop.time()
        entry = self._entries[key] = _Deadline(
            task, now + limit, now + limit * MAX_TIMEOUT_WITH_PROGRESS
        )
        if entry.when < self._armed_at:
            self._arm(loop, entry.when)
        return entry

    def extend(self, key: int, limit: float) -> None:
        """Restart a deadline's clock (up to its latest). Only ever later, so the armed
        timer may fire early; ``_fire`` then re-arms for what is really due."""
        entry = self._entries.get(key)
        if entry is not None and not entry.expired:
            loop = asyncio.get_running_loop()
            entry.when = min(loop.time() + limit, entry.latest)

    def finish(self, key: int) -> None:
        # The timer stays armed: re-arming it per request is the cost this class avoids.
        # Firing with nothing due is a no-op, at most once per timeout.
        del self._entries[key]

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._armed_at = math.inf

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._armed_at = when
        self._timer = loop.call_at(when, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        # The loop runs a timer up to its clock resolution early: what it armed for is due.
        now = max(loop.time(), self._armed_at)
        self._timer = None
        self._armed_at = math.inf
        earliest = math.inf
        for entry in self._entries.values():
            if entry.expired:
                continue
            if entry.when <= now:
                entry.expired = True
                entry.task.cancel()
            elif entry.when < earliest:
                earliest = entry.when
        if earliest < math.inf:
            self._arm(loop, earliest)


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


def _valid_tool(tool: Any, server: str) -> bool:
    if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"]:
        return True
    logger.warning("%s: skipping a tool without a name: %.200r", server, tool)
    return False


__all__ = [
    "SUPPORTED_VERSIONS",
    "ClientState",
    "ElicitationHandler",
    "McpClient",
    "ProgressHandler",
    "TransportError",
]
