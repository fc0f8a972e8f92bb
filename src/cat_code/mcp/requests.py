"""Requests of one connection: ids, deadlines, progress, cancellation and session renewal.

`Requests` sends one JSON-RPC request at a time for its `McpClient` (`timed`): a per-request
timeout whose expiry sends ``notifications/cancelled`` and leaves the connection usable
(progress from the server restarts it, up to `MAX_TIMEOUT_WITH_PROGRESS` times it in all;
the timers live in `deadlines`), and a Ctrl-C that tells the server too. A handshake-era
answer that says the session is gone raises `Expired`; `renewed` then starts one renewal
shared by every call that found it gone, and every call issued while it runs waits for it
(`await_renewal`), each bounded by its own timeout. Nothing here knows what a method means.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cat_code.mcp.deadlines import MAX_TIMEOUT_WITH_PROGRESS, Deadlines
from cat_code.mcp.errors import (
    HttpStatusError,
    McpClientError,
    McpError,
    ProtocolError,
    RequestTimeout,
    SessionExpired,
    TransportClosed,
)
from cat_code.mcp.transports.base import JsonObject, RequestContext

if TYPE_CHECKING:
    from cat_code.mcp.client import McpClient

logger = logging.getLogger(__name__)
#: ``-v``'s message traffic keeps the logger it always had (people filter on its name).
traffic_log = logging.getLogger("cat_code.mcp.client")

INTERNAL_ERROR = -32603
#: ``-v`` logs every message, cut to this many characters.
TRACE_CHARS = 2000

#: (progress, total, message) for one request's notifications/progress.
ProgressHandler = Callable[[float, float | None, str | None], None]


class Expired(SessionExpired):
    """A request's answer said its session is gone; ``sent`` is the context it went with."""

    def __init__(self, message: str, sent: RequestContext) -> None:
        super().__init__(message)
        self.sent = sent


class Requests:
    """The request machinery of one `McpClient` (which owns the transport and session)."""

    def __init__(self, client: McpClient) -> None:
        self._client = client
        self.ids = itertools.count(1)
        self._progress_tokens = itertools.count(1)
        #: progress token → (the caller's handler, the request id, its timeout)
        self._progress: dict[Any, tuple[ProgressHandler, int, float]] = {}
        self.deadlines = Deadlines()
        #: The handshake that replaces an expired session, shared by every call waiting on it.
        self.renewal: asyncio.Task[None] | None = None

    # -- one request -----------------------------------------------------------------

    async def send(
        self,
        method: str,
        params: JsonObject | None,
        timeout: float | None,
        progress: ProgressHandler | None,
    ) -> Any:
        """A handshake-era request: on timeout or cancellation the server is told with
        ``notifications/cancelled``; issued while the session is being renewed, it waits
        for the new one; finding the session expired, it renews it (once for all) and is
        retried once."""
        if self.renewal is not None:
            await self.await_renewal(method, timeout)
        try:
            return await self.timed(method, params, timeout, progress)
        except Expired as exc:
            return await self.in_new_session(exc, method, params, timeout, progress)

    async def exchange(self, method: str, params: JsonObject, context: RequestContext) -> Any:
        """One request of the session itself (the handshake): no deadline, no retry."""
        client = self._client
        message = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        self.trace("→", message)
        response = await client.transport.request(message, context)
        self.trace("←", response)
        return result_of(response)

    async def notify(self, method: str, context: RequestContext) -> None:
        client = self._client
        message: JsonObject = {"jsonrpc": "2.0", "method": method}
        self.trace("→", message)
        await client.transport.send(message, context)

    async def send_quietly(self, message: JsonObject) -> None:
        """Send a notification or reply; a failure is logged, never raised."""
        client = self._client
        self.trace("→", message)
        try:
            await client.transport.send(message, client.session.context)
        except McpClientError as exc:
            what = message.get("method") or f"the reply to request {message.get('id')!r}"
            logger.debug("%s: could not send %s: %s", client.name, what, exc)

    async def timed(
        self,
        method: str,
        params: JsonObject | None,
        timeout: float | None,
        progress: ProgressHandler | None,
    ) -> Any:
        client = self._client
        limit = client.request_timeout if timeout is None else timeout
        request_id = next(self.ids)
        token = None
        if progress is not None:
            token = next(self._progress_tokens)
            params = dict(params or {})
            params["_meta"] = {**params.get("_meta", {}), "progressToken": token}
            self._progress[token] = (progress, request_id, limit)
        modern = client.modern
        if modern is None:
            context = client.session.context
        else:
            params, context = modern.prepare(method, params)
        message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        deadline = self.deadlines.start(request_id, limit)
        self.trace("→", message)
        try:
            response = await client.transport.request(message, _with_deadline(context, limit))
            self.trace("←", response)
        except asyncio.CancelledError:
            if deadline is not None and deadline.expired_here():
                raise self._timed_out(request_id, method, limit) from None
            self._cancel_remote(request_id, "cancelled by the user")
            raise
        except HttpStatusError as exc:
            error = exc.rpc_error
            if modern is not None and error is not None:
                # A 2026-07-28 server answers protocol errors with a 4xx and the error.
                raise rpc_error(error) from exc
            if client.session.expired(exc, context):
                raise Expired(
                    f"the server no longer knows this session ({exc}); a new session is needed",
                    context,
                ) from exc
            raise
        except TimeoutError:
            raise self._timed_out(request_id, method, limit) from None
        finally:
            if deadline is not None:
                self.deadlines.finish(request_id)
            if token is not None:
                del self._progress[token]
        if modern is not None:
            result = result_of(response)
            modern.observe(result)
            return result
        return result_of(response)

    def trace(self, arrow: str, message: Any) -> None:
        """``-v``: one debug line per message, ``→`` to the server, ``←`` from it."""
        if not traffic_log.isEnabledFor(logging.DEBUG):
            return
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=repr)
        if len(text) > TRACE_CHARS:
            text = f"{text[:TRACE_CHARS]}… ({len(text)} characters)"
        traffic_log.debug("%s %s %s", self._client.name, arrow, text)

    def _timed_out(self, request_id: int, method: str, limit: float) -> RequestTimeout:
        self._cancel_remote(request_id, f"timed out after {limit:g} s")
        return RequestTimeout(
            f"{method} timed out after {limit:g} s (no answer or progress from server "
            f"'{self._client.name}')"
        )

    def _cancel_remote(self, request_id: int, reason: str) -> None:
        client = self._client
        if client.modern is not None and client.transport.kind == "http":
            return  # 2026-07-28 HTTP: abandoning the request closed its stream; that is the cancel
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": reason},
        }
        client.spawn(client.send_quietly(note))

    def progressed(self, params: JsonObject) -> None:
        """A ``notifications/progress``: the request's handler hears it, and a server that
        reports progress is alive, so the request gets its time again."""
        token = params.get("progressToken")
        entry = self._progress.get(token) if isinstance(token, str | int) else None
        if entry is None:
            return
        handler, request_id, limit = entry
        self.deadlines.extend(request_id, limit)
        progress, total = params.get("progress"), params.get("total")
        text = params.get("message")
        handler(
            float(progress) if isinstance(progress, int | float) else 0.0,
            float(total) if isinstance(total, int | float) else None,
            text if isinstance(text, str) else None,
        )

    # -- session renewal (handshake era) ----------------------------------------------

    async def in_new_session(
        self,
        expired: Expired,
        method: str,
        params: JsonObject | None,
        timeout: float | None,
        progress: ProgressHandler | None,
    ) -> Any:
        """Renew the session (or join the renewal under way), then retry once."""
        if expired.sent is self._client.session.context:
            self.renew_soon()
        await self.await_renewal(method, timeout)
        try:
            return await self.timed(method, params, timeout, progress)
        except Expired as again:
            raise SessionExpired(
                f"{method}: the server refused the new session too ({again.__cause__})"
            ) from again

    def renew_soon(self) -> None:
        """Start renewing the session, unless a renewal is already under way: one new
        session for every call that found the old one gone, not one each."""
        client = self._client
        renewal = self.renewal
        if client.closing or (renewal is not None and not renewal.done()):
            return
        logger.info("%s: session expired; starting a new one", client.name)
        renewal = self.renewal = asyncio.create_task(self._renew_session())
        client.keep(renewal)  # close() cancels it
        renewal.add_done_callback(self._renewed)

    async def await_renewal(self, method: str, timeout: float | None) -> None:
        """Wait for the renewal under way, within this caller's own timeout."""
        renewal = self.renewal
        if renewal is None:
            return
        client = self._client
        limit = client.request_timeout if timeout is None else timeout
        waiting = asyncio.timeout(None if limit == math.inf else limit)
        try:
            # Shielded: a caller that gives up must not cancel the others' renewal.
            async with waiting:
                await asyncio.shield(renewal)
        except TimeoutError:
            if waiting.expired():
                raise RequestTimeout(
                    f"{method} timed out after {limit:g} s waiting for a new session "
                    f"(no answer to initialize from server '{client.name}')"
                ) from None
            raise SessionExpired(
                f"{method}: could not renew the session (no answer to initialize from "
                f"server '{client.name}' within {client.request_timeout:g} s)"
            ) from None
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if renewal.cancelled() and task is not None and task.cancelling() == 0:
                # close() ended the renewal; nobody cancelled this caller.
                raise TransportClosed("connection closed") from None
            raise

    async def _renew_session(self) -> None:
        # Bounded by the server's request timeout, which no single caller owns: a renewal
        # nobody waits for any more still ends.
        client = self._client
        limit = client.request_timeout
        async with asyncio.timeout(None if limit == math.inf else limit):
            await client.session.renew(client, client.capabilities())

    def _renewed(self, renewal: asyncio.Task[None]) -> None:
        self._client.forget(renewal)
        if self.renewal is renewal:
            self.renewal = None
        if not renewal.cancelled():
            renewal.exception()  # its waiters have it; none left must not log "never retrieved"


def _with_deadline(context: RequestContext, limit: float) -> RequestContext:
    """The session's context with the latest time the answer can still be wanted (the
    timeout, as far as progress may stretch it). Only a context with headers (HTTP) gets
    one: stdio never waits to reconnect, and its hot path allocates nothing."""
    if not context.headers or limit == math.inf:
        return context
    latest = asyncio.get_running_loop().time() + limit * MAX_TIMEOUT_WITH_PROGRESS
    return replace(context, deadline=latest)


def result_of(response: JsonObject) -> Any:
    """A JSON-RPC response's result; its error as an `McpError`."""
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


def rpc_error(error: JsonObject) -> McpError:
    code = error.get("code")
    return McpError(
        code if isinstance(code, int) else INTERNAL_ERROR,
        str(error.get("message", "unknown error")),
        error.get("data"),
    )


__all__ = ["Expired", "ProgressHandler", "Requests", "result_of", "rpc_error"]
