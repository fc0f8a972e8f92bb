"""The deprecated HTTP+SSE transport (2024-11-05), and the automatic fallback to it.

`LegacySseTransport`: one GET opens the event stream; its first ``endpoint`` event names
the URL (same origin only) every client message is POSTed to; every answer and server
message arrives on that one stream. One reader task owns the stream: it resolves the
waiter registered (before the POST) for each response id and hands everything else to
``on_message``. Invariants: a waiter is removed on every path; when the stream ends,
every waiter fails at once and later calls fail at once (the session died with it).

`FallbackHttpTransport` serves ``url`` entries that named no type: Streamable HTTP first,
and if the initialize POST is answered 400, 404 or 405 (what the spec lists), the legacy
transport on the same URL from then on.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from typing import Any

import httpx2

from cat_code.mcp.errors import (
    ConnectError,
    HttpStatusError,
    McpClientError,
    ProtocolError,
    TransportClosed,
    TransportError,
)
from cat_code.mcp.http import (
    CONNECT_TIMEOUT_S,
    MAX_EVENT_BYTES,
    SEND_READ_TIMEOUT_S,
    SSE_ENCODING,
    USER_AGENT,
    StreamableHttpTransport,
    dumps,
    mime_type,
    parse_url,
    public_url,
    read_excerpt,
    sendable_headers,
    timeouts,
    translate_error,
)
from cat_code.mcp.transport import JsonObject, MessageHandler, dispatch, ignore_message

logger = logging.getLogger(__name__)

#: The initialize statuses after which a type-less ``url`` entry tries the legacy transport.
FALLBACK_STATUSES = frozenset({400, 404, 405})


class LegacySseTransport:
    """A `Transport` over the 2024-11-05 HTTP+SSE transport: GET a stream, POST messages."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        name: str = "",
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self.url = url
        self.name = name or url
        self._url = parse_url(url)
        self.protocol_version: str | None = None
        self.endpoint: httpx2.URL | None = None
        self._on_message: MessageHandler = ignore_message
        self._client = http_client
        self._owns_client = http_client is None
        self._pending: dict[Any, asyncio.Future[JsonObject]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._closed_error: TransportClosed | None = None
        self._close_task: asyncio.Task[None] | None = None
        base = httpx2.Headers(sendable_headers(headers or {}))
        base.setdefault("user-agent", USER_AGENT)
        base["accept"] = "text/event-stream"
        base["cache-control"] = "no-store"
        self._get_headers = dict(base.multi_items())
        del base["cache-control"]
        base["accept"] = "application/json, text/event-stream"
        base["content-type"] = "application/json"
        self._post_headers = dict(base.multi_items())
        self._stream_ext = timeouts(read=None)
        self._post_ext = timeouts(read=SEND_READ_TIMEOUT_S)

    # -- Transport -------------------------------------------------------------------

    async def start(self, on_message: MessageHandler) -> None:
        self._on_message = on_message
        if self._client is None:
            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(CONNECT_TIMEOUT_S), follow_redirects=False
            )
        endpoint: asyncio.Future[httpx2.URL] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(
            self._read_stream(endpoint), name=f"mcp-sse-reader:{self.name}"
        )
        self.endpoint = await endpoint
        logger.debug("%s: legacy SSE endpoint %s", self.name, public_url(self.endpoint))

    async def request(self, message: JsonObject) -> JsonObject:
        if self._closed_error is not None:
            raise TransportClosed(str(self._closed_error))
        request_id = message["id"]
        future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._post(message)
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def send(self, message: JsonObject) -> None:
        if self._closed_error is not None:
            raise TransportClosed(str(self._closed_error))
        await self._post(message)

    async def close(self) -> None:
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._shutdown())
        await asyncio.shield(self._close_task)

    def describe(self) -> str:
        return f"sse: {public_url(self._url)}"

    def diagnostics(self) -> list[str]:
        return []

    # -- internals -------------------------------------------------------------------

    async def _post(self, message: JsonObject) -> None:
        client, endpoint = self._client, self.endpoint
        assert client is not None and endpoint is not None, "start() first"
        request = httpx2.Request(
            "POST",
            endpoint,
            headers=self._post_headers,
            content=dumps(message),
            extensions=self._post_ext,
        )
        what = message.get("method") or "response"
        try:
            response = await client.send(request, stream=True)
            try:
                if not 200 <= response.status_code < 300:
                    excerpt = await read_excerpt(response)
                    raise HttpStatusError(
                        f"HTTP {response.status_code} to {what}{': ' + excerpt if excerpt else ''}",
                        response.status_code,
                    )
            finally:
                await response.aclose()
        except httpx2.HTTPError as exc:
            if self._closed_error is not None:
                raise TransportClosed(str(self._closed_error)) from exc
            raise translate_error(exc, endpoint) from exc

    async def _read_stream(self, endpoint: asyncio.Future[httpx2.URL]) -> None:
        """Owner of the event stream: open it, read it to the end, then fail every waiter."""
        client = self._client
        assert client is not None
        reason: McpClientError = TransportClosed("the server closed the event stream")
        try:
            request = httpx2.Request(
                "GET", self._url, headers=self._get_headers, extensions=self._stream_ext
            )
            response = await client.send(request, stream=True)
            try:
                if response.status_code != 200 or mime_type(response) != "text/event-stream":
                    excerpt = await read_excerpt(response)
                    reason = HttpStatusError(
                        f"HTTP {response.status_code} to the event-stream GET "
                        f"(content type {mime_type(response) or 'none'!r})"
                        f"{': ' + excerpt if excerpt else ''}",
                        response.status_code,
                    )
                    return
                response.encoding = SSE_ENCODING
                async for event in httpx2.EventSource(response, max_event_size=MAX_EVENT_BYTES):
                    if event.event == "endpoint":
                        self._on_endpoint(event.data, endpoint)
                    elif event.event == "message" and event.data:
                        self._on_data(event.data)
                    else:
                        logger.debug("%s: ignoring SSE event of type %r", self.name, event.event)
            finally:
                await response.aclose()
        except ProtocolError as exc:
            reason = exc
        except httpx2.SSEError as exc:
            reason = ProtocolError(f"bad SSE stream: {exc}")
        except (httpx2.ReadError, httpx2.RemoteProtocolError) as exc:
            reason = TransportClosed(f"the event stream broke: {exc}")
        except httpx2.HTTPError as exc:
            reason = translate_error(exc, self._url)
        finally:
            self._fail_all(reason, endpoint)

    def _on_endpoint(self, data: str, endpoint: asyncio.Future[httpx2.URL]) -> None:
        target = self._url.join(data.strip())
        if (target.scheme, target.host, target.port) != (
            self._url.scheme,
            self._url.host,
            self._url.port,
        ):
            # POSTing elsewhere would hand the entry's headers to another origin.
            raise ProtocolError(
                f"the server's endpoint {public_url(target)} is not on the origin of "
                f"{public_url(self._url)}"
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

    def _fail_all(self, reason: McpClientError, endpoint: asyncio.Future[httpx2.URL]) -> None:
        if self._closed_error is None:
            self._closed_error = TransportClosed(str(reason))
        if not endpoint.done():
            if isinstance(reason, TransportError | ProtocolError):
                endpoint.set_exception(reason)
            else:
                endpoint.set_exception(TransportClosed(str(reason)))
        for future in self._pending.values():
            if not future.done():
                future.set_exception(TransportClosed(str(self._closed_error)))

    def exit_reason(self) -> str | None:
        """Why the event stream (and with it the session) is gone, or None while it lives."""
        return None if self._closed_error is None else str(self._closed_error)

    async def _shutdown(self) -> None:
        if self._closed_error is None:
            self._closed_error = TransportClosed("connection closed")
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        for future in self._pending.values():
            if not future.done():
                future.set_exception(TransportClosed("connection closed"))
        if self._client is not None and self._owns_client:
            await self._client.aclose()


class FallbackHttpTransport:
    """Streamable HTTP, or the legacy HTTP+SSE transport if initialize gets 400/404/405."""

    def __init__(
        self, url: str, *, headers: Mapping[str, str] | None = None, name: str = ""
    ) -> None:
        self.url = url
        self.name = name or url
        self._headers = dict(headers or {})
        self._on_message: MessageHandler = ignore_message
        self.active: StreamableHttpTransport | LegacySseTransport = StreamableHttpTransport(
            url, headers=self._headers, name=name
        )
        self.fell_back = False

    @property
    def protocol_version(self) -> str | None:
        return self.active.protocol_version

    @protocol_version.setter
    def protocol_version(self, value: str | None) -> None:
        self.active.protocol_version = value

    async def start(self, on_message: MessageHandler) -> None:
        self._on_message = on_message
        await self.active.start(on_message)

    async def request(self, message: JsonObject) -> JsonObject:
        if self.fell_back or message.get("method") != "initialize":
            return await self.active.request(message)
        try:
            return await self.active.request(message)
        except HttpStatusError as exc:
            if exc.status_code not in FALLBACK_STATUSES:
                raise
            first = exc
        logger.info(
            "%s: initialize POST got HTTP %s; trying the legacy HTTP+SSE transport",
            self.name,
            first.status_code,
        )
        await self.active.close()
        legacy = LegacySseTransport(self.url, headers=self._headers, name=self.name)
        self.active = legacy
        self.fell_back = True
        try:
            await legacy.start(self._on_message)
        except McpClientError as exc:
            raise ConnectError(f"{first}; the legacy HTTP+SSE transport failed too: {exc}") from exc
        return await legacy.request(message)

    async def send(self, message: JsonObject) -> None:
        await self.active.send(message)

    async def close(self) -> None:
        await self.active.close()

    def describe(self) -> str:
        suffix = " (fallback from Streamable HTTP)" if self.fell_back else ""
        return self.active.describe() + suffix

    def diagnostics(self) -> list[str]:
        return self.active.diagnostics()

    def exit_reason(self) -> str | None:
        """The legacy stream's end, once fallen back; Streamable HTTP has no lasting link."""
        return self.active.exit_reason() if isinstance(self.active, LegacySseTransport) else None
