"""The deprecated HTTP+SSE transport (2024-11-05), on the shared `HttpPipeline`.

`LegacySseTransport`: one GET opens the event stream; its first ``endpoint`` event names
the URL (same origin only) every client message is POSTed to; every answer and server
message arrives on that one stream. One reader task owns the stream: it resolves the
waiter registered (before the POST) for each response id and hands everything else to
``on_message``. Invariants: a waiter is removed on every path; when the stream ends,
every waiter fails at once, later calls fail at once (the server's state died with it)
and ``on_close`` is told why, once. Whether a type-less ``url`` entry falls back to this
transport is the session's decision (`cat_code.mcp.session`), not a transport's.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Literal, Unpack

import httpx2

from cat_code.mcp.errors import (
    HttpStatusError,
    McpClientError,
    ProtocolError,
    TransportClosed,
    TransportError,
)
from cat_code.mcp.transports.base import (
    NO_CONTEXT,
    CloseHandler,
    JsonObject,
    MessageHandler,
    RequestContext,
    dispatch,
    ignore_close,
    ignore_message,
)
from cat_code.mcp.transports.http_pipeline import (
    SEND_TIMEOUTS,
    HttpOptions,
    HttpPipeline,
    dumps,
    merged,
    mime_type,
    public_url,
    read_excerpt,
    same_origin,
)

logger = logging.getLogger(__name__)


class LegacySseTransport:
    """A `Transport` over the 2024-11-05 HTTP+SSE transport: GET a stream, POST messages."""

    kind: Literal["sse"] = "sse"
    #: The one event stream is the connection itself; there is nothing more to open.
    can_listen = False

    def __init__(self, url: str, **options: Unpack[HttpOptions]) -> None:
        self.url = url
        self._http = HttpPipeline(url, **options)
        self.name = self._http.name
        self.endpoint: httpx2.URL | None = None
        self._on_message: MessageHandler = ignore_message
        self._on_close: CloseHandler = ignore_close
        self._pending: dict[Any, asyncio.Future[JsonObject]] = {}
        self._reader: asyncio.Task[None] | None = None
        #: Why the stream ended (set once); None while it lives.
        self._ended: str | None = None
        self._closing = False
        self._close_task: asyncio.Task[None] | None = None
        base = self._http.base_headers
        self._get_headers = {**base, "accept": "text/event-stream", "cache-control": "no-store"}
        self._post_headers = {
            **base,
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }

    # -- Transport -------------------------------------------------------------------

    @property
    def closed_reason(self) -> str | None:
        return None if self._closing else self._ended

    async def start(self, on_message: MessageHandler, on_close: CloseHandler) -> None:
        self._on_message = on_message
        self._on_close = on_close
        await self._http.open()
        endpoint: asyncio.Future[httpx2.URL] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(
            self._read_stream(endpoint), name=f"mcp-sse-reader:{self.name}"
        )
        self.endpoint = await endpoint
        logger.debug("%s: legacy SSE endpoint %s", self.name, public_url(self.endpoint))

    async def request(
        self, message: JsonObject, context: RequestContext = NO_CONTEXT
    ) -> JsonObject:
        if self._ended is not None:
            raise TransportClosed(self._ended)
        request_id = message["id"]
        future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._post(message, context)
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def send(self, message: JsonObject, context: RequestContext = NO_CONTEXT) -> None:
        if self._ended is not None:
            raise TransportClosed(self._ended)
        await self._post(message, context)

    async def listen(self, context: RequestContext) -> None:
        """Nothing to open: every server message already arrives on the one stream."""

    async def release(self, context: RequestContext) -> None:
        """Nothing to release: closing the stream ends the server's state."""

    async def close(self) -> None:
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._shutdown())
        await asyncio.shield(self._close_task)

    def hurry(self) -> None:
        """Nothing to hurry: closing an HTTP client does not wait on the server."""

    def kill_now(self) -> None:
        """No process to kill."""

    def describe(self) -> str:
        return f"sse: {public_url(self._http.url)}"

    def diagnostics(self) -> list[str]:
        return []

    # -- internals -------------------------------------------------------------------

    async def _post(self, message: JsonObject, context: RequestContext) -> None:
        endpoint = self.endpoint
        assert endpoint is not None, "start() first"
        what = str(message.get("method") or "response")
        headers = merged(self._post_headers, context.headers)
        try:
            response = await self._http.send(
                "POST", headers, dumps(message), url=endpoint, extensions=SEND_TIMEOUTS, what=what
            )
            try:
                if not 200 <= response.status_code < 300:
                    raise await self._http.status_error(response, what)
            finally:
                await response.aclose()
        except TransportError:
            if self._ended is not None:
                raise TransportClosed(self._ended) from None
            raise
        except httpx2.HTTPError as exc:
            if self._ended is not None:
                raise TransportClosed(self._ended) from exc
            raise self._http.translate(exc, endpoint) from exc

    async def _read_stream(self, endpoint: asyncio.Future[httpx2.URL]) -> None:
        """Owner of the event stream: open it, read it to the end, then fail every waiter."""
        reason: McpClientError = TransportClosed("the server closed the event stream")
        try:
            response = await self._http.send("GET", self._get_headers, what="the event-stream GET")
            try:
                if response.status_code != 200 or mime_type(response) != "text/event-stream":
                    excerpt = await read_excerpt(response)
                    reason = HttpStatusError(
                        f"HTTP {response.status_code} to the event-stream GET "
                        f"(content type {mime_type(response) or 'none'!r})"
                        f"{': ' + excerpt if excerpt else ''}",
                        response.status_code,
                        excerpt,
                    )
                    return
                events = self._http.events(response, "the event stream")
                try:
                    async for event in events:
                        if event.event == "endpoint":
                            self._on_endpoint(event.data, endpoint)
                        elif event.event == "message" and event.data:
                            self._on_data(event.data)
                        else:
                            logger.debug("%s: ignoring SSE event %r", self.name, event.event)
                finally:
                    await events.aclose()
            finally:
                await response.aclose()
        except (TransportError, ProtocolError) as exc:
            reason = exc
        except (httpx2.ReadError, httpx2.RemoteProtocolError) as exc:
            reason = TransportClosed(f"the event stream broke: {exc}")
        except httpx2.HTTPError as exc:
            reason = self._http.translate(exc)
        except Exception as exc:  # the reader's boundary: the connection ends, saying why
            logger.debug("%s: event stream reader failed", self.name, exc_info=True)
            reason = TransportError(f"the event stream failed: {type(exc).__name__}: {exc}")
        finally:
            self._end(reason, endpoint)

    def _on_endpoint(self, data: str, endpoint: asyncio.Future[httpx2.URL]) -> None:
        target = self._http.url.join(data.strip())
        if not same_origin(target, self._http.url):
            # POSTing elsewhere would hand the entry's headers to another origin.
            raise ProtocolError(
                f"the server's endpoint {public_url(target)} is not on the origin of "
                f"{self._http.shown}"
            )
        if not endpoint.done():
            endpoint.set_result(target)

    def _on_data(self, data: str) -> None:
        try:
            message = json.loads(data)
        except ValueError:
            logger.warning("%s: skipping an SSE event that is not JSON: %.200s", self.name, data)
            return
        dispatch(message, self._pending, self._on_message, self.name)

    def _end(self, reason: McpClientError, endpoint: asyncio.Future[httpx2.URL]) -> None:
        first = self._ended is None
        if first:
            self._ended = str(reason)
        if not endpoint.done():
            endpoint.set_exception(
                reason if isinstance(reason, TransportError | ProtocolError)
                else TransportClosed(str(reason))
            )  # fmt: skip
        for future in self._pending.values():
            if not future.done():
                future.set_exception(TransportClosed(str(self._ended)))
        started = endpoint.done() and not endpoint.cancelled() and endpoint.exception() is None
        if first and started and not self._closing:
            self._on_close(str(reason))

    async def _shutdown(self) -> None:
        self._closing = True
        if self._ended is None:
            self._ended = "connection closed"
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            await asyncio.wait([reader])
        for future in self._pending.values():
            if not future.done():
                future.set_exception(TransportClosed("connection closed"))
        await self._http.aclose()


__all__ = ["LegacySseTransport"]
