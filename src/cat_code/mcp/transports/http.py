"""Streamable HTTP transport: a POST per message, JSON or SSE answers, on one `HttpPipeline`.

Design: every message is its own POST; the answer is one JSON body or an SSE stream read
by the requesting task itself until the response with its id arrives, so there is no
shared reader, no waiter table and no task switch on the hot path. Server requests and
notifications met on any stream go to ``on_message``; replies go back through `send`.
The transport knows no MCP method: the headers a message needs (session, protocol
version, ``Mcp-Method``) come in its `RequestContext`, the answer's headers go back
through ``context.on_headers``, and the server's own GET stream is opened only when the
client calls `listen`, the session ended only when it calls `release`. Invariants: every
response is closed by the task that opened it, on every path; header values never reach
a log line, an error or `describe`; waiting is bounded everywhere — by the client's
request timeout on requests, by named limits on resumption and reconnects; one SSE event
or JSON body above the pipeline's message cap fails that request, naming the size.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Literal, Unpack

import httpx2

from cat_code.mcp.errors import HttpStatusError, ProtocolError, TransportClosed, TransportError
from cat_code.mcp.transports.base import (
    HEALTHY_STREAM_S,
    NO_CONTEXT,
    CloseHandler,
    JsonObject,
    MessageHandler,
    RequestContext,
    hand_up,
    ignore_message,
)
from cat_code.mcp.transports.http_pipeline import (
    CLOSE_TIMEOUTS,
    SEND_TIMEOUTS,
    HttpOptions,
    HttpPipeline,
    dumps,
    excerpt_text,
    merged,
    mime_type,
    public_url,
)

logger = logging.getLogger(__name__)

#: The reconnect delay when the server gave no SSE ``retry`` field (the spec's default).
DEFAULT_RETRY_S = 1.0
#: Resumption attempts in a row that bring no new event id before a request fails.
MAX_RESUME_ATTEMPTS = 3
#: GET streams in a row that fail fast (no new event, ended before `HEALTHY_STREAM_S`)
#: before we stop listening.
MAX_LISTEN_ATTEMPTS = 3
#: The GET stream never reconnects faster than this, whatever ``retry`` says.
LISTEN_MIN_RECONNECT_S = 0.25
#: After the answer, how long to wait for the server to end an SSE answer stream (see _drain).
DRAIN_S = 0.05

ACCEPT_BOTH = "application/json, text/event-stream"
#: GET answers that mean "this server has no stream of its own" (405 is the spec's;
#: servers without GET support answer 404 or 400 too).
NO_STREAM_STATUSES = frozenset({400, 404, 405})


@dataclass(slots=True)
class _StreamState:
    """What one logical stream remembers across reconnects."""

    last_event_id: str | None = None
    retry_s: float = field(default_factory=lambda: DEFAULT_RETRY_S)
    events: int = 0


class StreamableHttpTransport:
    """A `Transport` over MCP's Streamable HTTP: a POST per message, JSON or SSE answers."""

    kind: Literal["http"] = "http"
    can_listen = True
    #: Nothing lasts between requests, so nothing can end by itself.
    closed_reason: str | None = None

    def __init__(self, url: str, **options: Unpack[HttpOptions]) -> None:
        self.url = url
        self._http = HttpPipeline(url, **options)
        self.name = self._http.name
        self._on_message: MessageHandler = ignore_message
        self._close_task: asyncio.Task[None] | None = None
        self._drain_streams = True
        base = self._http.base_headers
        self._post_headers = {**base, "accept": ACCEPT_BOTH, "content-type": "application/json"}
        self._get_headers = {**base, "accept": "text/event-stream", "cache-control": "no-store"}

    # -- Transport -------------------------------------------------------------------

    async def start(self, on_message: MessageHandler, on_close: CloseHandler) -> None:
        self._on_message = on_message
        await self._http.open()

    async def request(
        self, message: JsonObject, context: RequestContext = NO_CONTEXT
    ) -> JsonObject:
        what = str(message.get("method"))
        headers = merged(self._post_headers, context.headers)
        response = await self._http.send("POST", headers, dumps(message), what=what)
        try:
            if context.on_headers is not None:
                context.on_headers(response.headers)
            status = response.status_code
            if status == 200 or (200 < status < 300 and status != 202):
                return await self._answer(response, message, context)
            raise await self._http.status_error(response, what)
        except httpx2.HTTPError as exc:
            raise self._http.translate(exc) from exc
        finally:
            await response.aclose()

    async def send(self, message: JsonObject, context: RequestContext = NO_CONTEXT) -> None:
        what = str(message.get("method") or "response")
        headers = merged(self._post_headers, context.headers)
        response = await self._http.send(
            "POST", headers, dumps(message), extensions=SEND_TIMEOUTS, what=what
        )
        try:
            if not 200 <= response.status_code < 300:
                raise await self._http.status_error(response, what)
        except httpx2.HTTPError as exc:
            raise self._http.translate(exc) from exc
        finally:
            await response.aclose()

    async def listen(self, context: RequestContext) -> None:
        """Own the server's GET stream: read it, reconnect it (bounded), route what it brings.

        Returns when a GET is answered 405, or the first one shows the server has no
        stream (404 or 400, or a 200 that is not an event stream), or once the transport
        is closed. Raises the `HttpStatusError` of a later 400 or 404 (the layer above may
        know why: an expired session), and a `TransportError` when `MAX_LISTEN_ATTEMPTS`
        attempts in a row failed fast: brought nothing and did not live `HEALTHY_STREAM_S`
        (a quiet stream a proxy's idle timeout ends is reopened for as long as it lasts).
        """
        loop = asyncio.get_running_loop()
        state = _StreamState()
        failures = 0
        problem = "the stream ended"
        first = True
        while True:
            headers = {**self._get_headers, **context.headers}
            if state.last_event_id is not None:
                headers["last-event-id"] = state.last_event_id
            before = state.events
            lived = False
            try:
                response = await self._http.send("GET", headers, what="the server stream GET")
            except TransportError as exc:
                problem = str(exc)
            else:
                try:
                    if context.on_headers is not None:
                        context.on_headers(response.headers)
                    status = response.status_code
                    stream = status == 200 and mime_type(response) == "text/event-stream"
                    if status == 405 or (
                        first and not stream and (status in NO_STREAM_STATUSES or status == 200)
                    ):
                        # The server offers no stream of its own: nothing is wrong.
                        logger.debug(
                            "%s: no server stream (GET answered HTTP %s)", self.name, status
                        )
                        return
                    if stream:
                        opened = loop.time()
                        try:
                            await self._consume(response, None, state, "the server stream")
                        finally:
                            lived = loop.time() - opened >= HEALTHY_STREAM_S
                        problem = "the stream ended"
                    elif status in (400, 404):
                        raise await self._http.status_error(response, "the server stream GET")
                    else:
                        problem = str(await self._http.status_error(response, "the GET"))
                except httpx2.HTTPError as exc:
                    problem = str(self._http.translate(exc))
                finally:
                    await response.aclose()
            first = False
            if self._http.closed:
                return
            # A stream that brought events and ended is a server "polling" us, one that
            # lived a while was cut by an idle timeout: reconnect for as long as they keep
            # doing so; only attempts that fail fast count.
            failures = 0 if state.events > before or lived else failures + 1
            if failures >= MAX_LISTEN_ATTEMPTS:
                raise TransportError(
                    f"the server stream of {self._http.shown} failed {failures} "
                    f"time(s) in a row (last: {problem})"
                )
            await asyncio.sleep(max(state.retry_s, LISTEN_MIN_RECONNECT_S))

    async def release(self, context: RequestContext) -> None:
        """DELETE the endpoint with these headers (ending a session); bounded, never raises."""
        headers = {k: v for k, v in self._post_headers.items() if k != "content-type"}
        headers.update(context.headers)
        try:
            response = await self._http.send(
                "DELETE", headers, extensions=CLOSE_TIMEOUTS, what="DELETE"
            )
            await response.aclose()
            if response.status_code not in (200, 202, 204, 404, 405):
                logger.debug("%s: DELETE answered HTTP %s", self.name, response.status_code)
        except (TransportError, httpx2.HTTPError) as exc:
            logger.debug("%s: DELETE failed: %s", self.name, exc)

    async def close(self) -> None:
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._http.aclose())
        # Shielded: a cancelled caller must not leave the client open.
        await asyncio.shield(self._close_task)

    def hurry(self) -> None:
        """Nothing to hurry: closing an HTTP client does not wait on the server."""

    def kill_now(self) -> None:
        """No process to kill."""

    def describe(self) -> str:
        return f"http: {public_url(self._http.url)}"

    def diagnostics(self) -> list[str]:
        # Every failure is raised with its status and body excerpt; there is no stderr.
        return []

    # -- answers ---------------------------------------------------------------------

    async def _answer(
        self, response: httpx2.Response, message: JsonObject, context: RequestContext
    ) -> JsonObject:
        method = message.get("method")
        mime = mime_type(response)
        if mime == "application/json":
            data = await self._http.read_json(response, str(method))
            answer = self._route(data, message["id"])
            if answer is None:
                raise ProtocolError(
                    f"HTTP {response.status_code} to {method}: the JSON body holds no response "
                    f"to request {message['id']!r}: {excerpt_text(json.dumps(data))}"
                )
            return answer
        if mime == "text/event-stream":
            state = _StreamState()
            answer = await self._consume(
                response, message["id"], state, f"answering {method}", drain=not context.long_lived
            )
            if answer is not None:
                return answer
            await response.aclose()
            return await self._resume(message, state, context)
        excerpt = await self._http.status_error(response, str(method))
        raise HttpStatusError(
            f"HTTP {response.status_code} to {method} with unexpected content type "
            f"{mime or 'none'!r}{': ' + excerpt.detail if excerpt.detail else ''}",
            response.status_code,
            excerpt.detail,
        )

    async def _consume(
        self,
        response: httpx2.Response,
        request_id: Any,
        state: _StreamState,
        what: str,
        *,
        drain: bool = True,
    ) -> JsonObject | None:
        """Read SSE events until the response to ``request_id`` (returned) or the stream ends.

        ``drain``: read on briefly after the answer (not for a long-lived stream, which
        the server keeps open on purpose).
        """
        events = self._http.events(response, what)
        try:
            async for event in events:
                answer = self._on_event(event, request_id, state)
                if answer is not None:
                    if drain and self._drain_streams:
                        await self._drain(events, state)
                    return answer
        except (httpx2.ReadError, httpx2.RemoteProtocolError) as exc:
            # The peer broke the stream: resumable like a clean end, if ids were given.
            logger.debug("%s: SSE stream broke: %s", self.name, exc)
        finally:
            await events.aclose()
        return None

    async def _drain(
        self, events: AsyncGenerator[httpx2.ServerSentEvent], state: _StreamState
    ) -> None:
        """Read an answered stream to its end (briefly) so its connection can be reused.

        Closing a response before its last chunk closes the connection; the next call
        would pay a new TCP (and TLS) handshake. Servers end the stream right after the
        answer; one that does not costs `DRAIN_S` once, then we stop waiting for it.
        """
        try:
            async with asyncio.timeout(DRAIN_S):
                async for event in events:
                    self._on_event(event, None, state)
        except TimeoutError:
            logger.debug("%s: answer streams stay open; closing them at once", self.name)
            self._drain_streams = False

    def _on_event(
        self, event: httpx2.ServerSentEvent, request_id: Any, state: _StreamState
    ) -> JsonObject | None:
        state.events += 1
        if event.id:
            state.last_event_id = event.id
        if event.retry is not None:
            state.retry_s = max(event.retry, 0) / 1000
        if not event.data:
            return None  # a priming event (id and retry only) or a keep-alive
        if event.event != "message":
            logger.debug("%s: ignoring SSE event of type %r", self.name, event.event)
            return None
        try:
            data = json.loads(event.data)
        except ValueError:
            logger.warning(
                "%s: skipping an SSE event that is not JSON: %s",
                self.name,
                excerpt_text(event.data),
            )
            return None
        return self._route(data, request_id)

    def _route(self, data: Any, request_id: Any) -> JsonObject | None:
        """Hand server-originated messages up; return the response to ``request_id``."""
        found: JsonObject | None = None
        for item in data if isinstance(data, list) else (data,):
            if not isinstance(item, dict):
                logger.warning("%s: skipping a message that is not an object", self.name)
            elif "method" in item:
                hand_up(item, self._on_message, self.name)
            elif request_id is not None and item.get("id") == request_id:
                found = item
            else:
                logger.debug("%s: dropping response for unknown id %r", self.name, item.get("id"))
        return found

    async def _resume(
        self, message: JsonObject, state: _StreamState, context: RequestContext
    ) -> JsonObject:
        """GET with Last-Event-ID until the answer arrives, bounded by attempts without progress."""
        method = message.get("method")
        if state.last_event_id is None:
            raise TransportClosed(
                f"the server ended the {method} response stream before the answer "
                "(no event id to resume from)"
            )
        loop = asyncio.get_running_loop()
        failures = 0
        last_problem = "the stream ended again"
        while True:
            if context.deadline is not None and loop.time() + state.retry_s > context.deadline:
                raise TransportError(
                    f"the {method} response stream ended before the answer, and the server's "
                    f"retry interval ({state.retry_s:g} s) runs past the request's deadline"
                )
            # The spec: the client MUST wait the server's retry interval before reconnecting.
            await asyncio.sleep(state.retry_s)
            before = state.last_event_id
            headers = {**self._get_headers, **context.headers}
            headers["last-event-id"] = state.last_event_id
            try:
                response = await self._http.send("GET", headers, what=f"the GET resuming {method}")
            except TransportError as exc:
                last_problem = str(exc)
            else:
                try:
                    if response.status_code == 200 and mime_type(response) == "text/event-stream":
                        answer = await self._consume(
                            response, message["id"], state, f"answering {method}"
                        )
                        if answer is not None:
                            return answer
                    elif response.status_code in (400, 404):
                        # Perhaps the session is gone: the layer above decides.
                        raise await self._http.status_error(response, f"the GET resuming {method}")
                    else:
                        last_problem = f"HTTP {response.status_code} to the GET"
                except httpx2.HTTPError as exc:
                    raise self._http.translate(exc) from exc
                finally:
                    await response.aclose()
            # A new event id means the server still holds the stream (SSE polling):
            # only reconnects that bring none count against the limit.
            failures = 0 if state.last_event_id != before else failures + 1
            if failures >= MAX_RESUME_ATTEMPTS:
                raise TransportError(
                    f"the {method} response stream ended before the answer, and "
                    f"{failures} attempt(s) to resume it with Last-Event-ID failed "
                    f"(last: {last_problem})"
                )
            logger.debug("%s: resuming %s after %s", self.name, method, last_problem)


__all__ = ["StreamableHttpTransport"]
