"""Streamable HTTP transport (handshake era, 2025-03-26 … 2025-11-25) on one ``httpx2`` client.

Design: every client message is its own POST; the answer is one JSON body or an SSE stream
read by the requesting task itself until the response with its id arrives, so there is no
shared reader, no waiter table and no task switch on the hot path. Server requests and
notifications met on any stream go to the ``on_message`` handler; replies go back through
`send` (a POST answered 202). After ``notifications/initialized`` a session-holding
transport opens the optional GET stream in one background task. Invariants: every
response is closed by the task that opened it, on every path; header values never reach
a log line, an error or `describe`; the session id is captured only from the initialize
answer and dropped on a 404 (so the client's fresh initialize goes without it); waiting
is bounded everywhere — by the client's request timeout on requests, by named limits on
resumption, reconnects and close; an SSE event's size is capped only by a memory guard.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import httpx2

from cat_code import __version__
from cat_code.mcp.errors import (
    ConnectError,
    HttpStatusError,
    ProtocolError,
    SessionExpired,
    TransportClosed,
    TransportError,
)
from cat_code.mcp.transport import JsonObject, MessageHandler, hand_up, ignore_message

logger = logging.getLogger(__name__)

#: Reaching a server, or handing it a request body, that takes longer than this is a failure.
CONNECT_TIMEOUT_S = 30.0
WRITE_TIMEOUT_S = 30.0
POOL_TIMEOUT_S = 30.0
#: A notification or response POST is answered 202 at once; nothing above us bounds `send`.
SEND_READ_TIMEOUT_S = 60.0
#: The DELETE that ends a session on close must not hold shutdown up.
CLOSE_TIMEOUT_S = 5.0
#: How long `send(initialized)` waits for the GET stream's answer head, so a server's
#: first notifications cannot race the first request (a real server answers at once).
LISTEN_OPEN_WAIT_S = 2.0
#: Memory guard only: a single SSE event larger than this fails the request.
#: (httpx2 defaults to 1 MiB; real tool results and tool lists are far larger.)
MAX_EVENT_BYTES = 512 * 1024 * 1024
#: The reconnect delay when the server gave no SSE ``retry`` field (the spec's default).
DEFAULT_RETRY_S = 1.0
#: Resumption attempts in a row that bring no new event id before a request fails.
MAX_RESUME_ATTEMPTS = 3
#: GET-stream reconnects in a row that bring no new event before we stop listening.
MAX_LISTEN_ATTEMPTS = 3
#: The GET stream never reconnects faster than this, whatever ``retry`` says.
LISTEN_MIN_RECONNECT_S = 0.25
#: After the answer, how long to wait for the server to end an SSE answer stream (see _drain).
DRAIN_S = 0.05
#: Same-origin 307/308 hops followed for one message.
MAX_REDIRECTS = 5
#: How much of an unexpected body an error message quotes.
EXCERPT_CHARS = 200
_EXCERPT_READ_BYTES = 4096

ACCEPT_BOTH = "application/json, text/event-stream"
#: How an event stream is decoded: UTF-8 whatever its charset, a leading BOM dropped.
SSE_ENCODING = "utf-8-sig"
USER_AGENT = f"cat-code/{__version__}"
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"


@dataclass(slots=True)
class _StreamState:
    """What one logical stream remembers across reconnects."""

    last_event_id: str | None = None
    retry_s: float = field(default_factory=lambda: DEFAULT_RETRY_S)
    events: int = 0


def parse_url(url: str) -> httpx2.URL:
    """The entry's URL, or a `ConnectError` naming it when httpx2 cannot use it."""
    try:
        return httpx2.URL(url)
    except httpx2.InvalidURL as exc:
        raise ConnectError(f"invalid URL {url!r}: {exc}") from exc


class StreamableHttpTransport:
    """A `Transport` over MCP's Streamable HTTP: a POST per message, JSON or SSE answers."""

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
        self._user_headers = sendable_headers(headers or {})
        self._session_id: str | None = None
        self._protocol_version: str | None = None
        self._on_message: MessageHandler = ignore_message
        self._client = http_client
        self._owns_client = http_client is None
        self._listener: asyncio.Task[None] | None = None
        self._close_task: asyncio.Task[None] | None = None
        self._closed = False
        self._drain_streams = True
        # Per-request timeouts travel in the request, so an injected client's 5 s default
        # never applies. Reads on a request stream are bounded by the client's own
        # request timeout instead: a slow tool is not a dead connection.
        self._request_ext = timeouts(read=None)
        self._send_ext = timeouts(read=SEND_READ_TIMEOUT_S)
        self._close_ext = timeouts(read=CLOSE_TIMEOUT_S, connect=CLOSE_TIMEOUT_S)
        self._rebuild_headers()

    # -- Transport -------------------------------------------------------------------

    @property
    def protocol_version(self) -> str | None:
        return self._protocol_version

    @protocol_version.setter
    def protocol_version(self, value: str | None) -> None:
        self._protocol_version = value
        self._rebuild_headers()

    @property
    def session_id(self) -> str | None:
        """The server's ``Mcp-Session-Id`` for this connection, if it gave one."""
        return self._session_id

    async def start(self, on_message: MessageHandler) -> None:
        self._on_message = on_message
        if self._client is None:
            # Timeouts are set per request; follow_redirects stays off because a redirect
            # to another origin would carry the entry's headers (API keys) there.
            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(CONNECT_TIMEOUT_S), follow_redirects=False
            )

    async def request(self, message: JsonObject) -> JsonObject:
        method = message.get("method")
        initialize = method == "initialize"
        body = dumps(message)
        for _ in range(2):
            sent_session = None if initialize else self._session_id
            headers = self._init_headers if initialize else self._post_headers
            response = await self._send("POST", headers, body, self._request_ext)
            try:
                status = response.status_code
                if status == 200 or (200 < status < 300 and status != 202):
                    if initialize:
                        self._capture_session(response)
                    return await self._answer(response, message)
                if (
                    status == 404
                    and sent_session is not None
                    and self._session_id not in (None, sent_session)
                ):
                    # Another request already renewed the session: this one just retries.
                    continue
                raise await self._status_error(response, str(method), sent_session)
            except httpx2.HTTPError as exc:
                raise self._translate(exc) from exc
            finally:
                await response.aclose()
        raise SessionExpired(f"the server rejected two sessions in a row for {method}")

    async def send(self, message: JsonObject) -> None:
        sent_session = self._session_id
        response = await self._send("POST", self._post_headers, dumps(message), self._send_ext)
        try:
            if not 200 <= response.status_code < 300:
                what = str(message.get("method") or "response")
                raise await self._status_error(response, what, sent_session)
        except httpx2.HTTPError as exc:
            raise self._translate(exc) from exc
        finally:
            await response.aclose()
        if message.get("method") == "notifications/initialized" and self._session_id:
            await self._start_listening()

    async def close(self) -> None:
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._shutdown())
        # Shielded: a cancelled caller must not leave the session or the client open.
        await asyncio.shield(self._close_task)

    def describe(self) -> str:
        return f"http: {public_url(self._url)}"

    def diagnostics(self) -> list[str]:
        # Every failure is raised with its status and body excerpt; there is no stderr.
        return []

    # -- answers ---------------------------------------------------------------------

    async def _answer(self, response: httpx2.Response, message: JsonObject) -> JsonObject:
        mime = mime_type(response)
        if mime == "application/json":
            body = await response.aread()
            try:
                data = json.loads(body)
            except ValueError:
                raise ProtocolError(
                    f"HTTP {response.status_code} to {message.get('method')}: the body is not "
                    f"JSON: {_excerpt_text(body)}"
                ) from None
            answer = self._route(data, message["id"])
            if answer is None:
                raise ProtocolError(
                    f"HTTP {response.status_code} to {message.get('method')}: the JSON body holds "
                    f"no response to request {message['id']!r}: {_excerpt_text(body)}"
                )
            return answer
        if mime == "text/event-stream":
            state = _StreamState()
            answer = await self._consume(response, message["id"], state)
            if answer is not None:
                return answer
            await response.aclose()
            return await self._resume(message, state)
        excerpt = await read_excerpt(response)
        raise HttpStatusError(
            f"HTTP {response.status_code} to {message.get('method')} with unexpected content "
            f"type {mime or 'none'!r}{': ' + excerpt if excerpt else ''}",
            response.status_code,
        )

    async def _consume(
        self, response: httpx2.Response, request_id: Any, state: _StreamState
    ) -> JsonObject | None:
        """Read SSE events until the response to ``request_id`` (returned) or the stream ends."""
        # An event stream is always UTF-8, and a leading byte order mark is not part of
        # its first line (the SSE spec); plain utf-8 would keep it and lose that event.
        response.encoding = SSE_ENCODING
        # EventSource.__aiter__ is an async generator (typed as an iterator): close it
        # ourselves, so it never outlives the response.
        events = cast(
            AsyncGenerator[httpx2.ServerSentEvent, None],
            aiter(httpx2.EventSource(response, max_event_size=MAX_EVENT_BYTES)),
        )
        try:
            async for event in events:
                answer = self._on_event(event, request_id, state)
                if answer is not None:
                    if self._drain_streams:
                        await self._drain(events, state)
                    return answer
        except httpx2.SSEError as exc:
            raise ProtocolError(f"{self.name}: bad SSE stream: {exc}") from exc
        except (httpx2.ReadError, httpx2.RemoteProtocolError) as exc:
            # The peer broke the stream: resumable like a clean end, if ids were given.
            logger.debug("%s: SSE stream broke: %s", self.name, exc)
        finally:
            await events.aclose()
        return None

    async def _drain(self, events: AsyncIterator[Any], state: _StreamState) -> None:
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
                _excerpt_text(event.data),
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

    async def _resume(self, message: JsonObject, state: _StreamState) -> JsonObject:
        """GET with Last-Event-ID until the answer arrives, bounded by attempts without progress."""
        method = message.get("method")
        if state.last_event_id is None:
            raise TransportClosed(
                f"the server ended the {method} response stream before the answer "
                "(no event id to resume from)"
            )
        failures = 0
        last_problem = "the stream ended again"
        while True:
            # The spec: the client MUST wait the server's retry interval before reconnecting.
            await asyncio.sleep(state.retry_s)
            before = state.last_event_id
            sent_session = self._session_id
            headers = {**self._get_headers, "last-event-id": state.last_event_id}
            try:
                response = await self._send("GET", headers, None, self._request_ext)
            except TransportError as exc:
                last_problem = str(exc)
            else:
                try:
                    if response.status_code == 200 and mime_type(response) == "text/event-stream":
                        answer = await self._consume(response, message["id"], state)
                        if answer is not None:
                            return answer
                    elif response.status_code == 404 and sent_session is not None:
                        raise await self._status_error(response, "GET", sent_session)
                    else:
                        last_problem = f"HTTP {response.status_code} to the GET"
                except httpx2.HTTPError as exc:
                    raise self._translate(exc) from exc
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

    # -- the server's GET stream ---------------------------------------------------------

    async def _start_listening(self) -> None:
        if self._closed:
            return
        self._stop_listening()
        opened = asyncio.Event()
        self._listener = asyncio.create_task(
            self._listen(opened), name=f"mcp-http-listen:{self.name}"
        )
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LISTEN_OPEN_WAIT_S):
                await opened.wait()

    def _stop_listening(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None

    async def _listen(self, opened: asyncio.Event) -> None:
        """Owner of the GET stream: read it, reconnect it (bounded), route what it brings."""
        state = _StreamState()
        failures = 0
        try:
            while not self._closed:
                headers = self._get_headers
                if state.last_event_id is not None:
                    headers = {**headers, "last-event-id": state.last_event_id}
                before = state.events
                try:
                    response = await self._send("GET", headers, None, self._request_ext)
                except TransportError as exc:
                    logger.debug("%s: GET stream failed: %s", self.name, exc)
                else:
                    try:
                        if (
                            response.status_code != 200
                            or mime_type(response) != "text/event-stream"
                        ):
                            # 405 (or 404/400 from servers without one): no server stream.
                            logger.debug(
                                "%s: no server stream (GET answered HTTP %s)",
                                self.name,
                                response.status_code,
                            )
                            return
                        opened.set()
                        await self._consume(response, None, state)
                    finally:
                        await response.aclose()
                opened.set()
                # A stream that brought events and ended is a server "polling" us: reconnect
                # for as long as it keeps doing so; only empty attempts count.
                failures = 0 if state.events > before else failures + 1
                if failures >= MAX_LISTEN_ATTEMPTS:
                    logger.debug("%s: giving up on the GET stream", self.name)
                    return
                await asyncio.sleep(max(state.retry_s, LISTEN_MIN_RECONNECT_S))
        except (TransportError, ProtocolError, httpx2.HTTPError) as exc:
            logger.debug("%s: GET stream ended: %s", self.name, exc)
        finally:
            opened.set()

    # -- HTTP plumbing -------------------------------------------------------------------

    async def _send(
        self,
        method: str,
        headers: Mapping[str, str],
        content: bytes | None,
        extensions: dict[str, Any],
    ) -> httpx2.Response:
        """Send one request (streaming), following same-origin 307/308 redirects only."""
        client = self._client
        if client is None or self._closed:
            raise TransportClosed("connection closed")
        url = self._url
        for _ in range(MAX_REDIRECTS + 1):
            request = httpx2.Request(
                method, url, headers=headers, content=content, extensions=extensions
            )
            if client.cookies:
                client.cookies.set_cookie_header(request)
            try:
                response = await client.send(request, stream=True)
            except httpx2.HTTPError as exc:
                raise self._translate(exc) from exc
            if response.status_code not in (307, 308):
                return response
            await response.aclose()
            target = url.join(response.headers.get("location", ""))
            if (target.scheme, target.host, target.port) != (url.scheme, url.host, url.port):
                raise HttpStatusError(
                    f"HTTP {response.status_code}: {public_url(url)} redirects to another "
                    f"origin ({public_url(target)}); cat-code does not follow it with the "
                    "entry's headers — put that URL in the config",
                    response.status_code,
                )
            url = target
        raise HttpStatusError(f"more than {MAX_REDIRECTS} redirects from {public_url(url)}", 310)

    async def _status_error(
        self, response: httpx2.Response, what: str, sent_session: str | None
    ) -> TransportError:
        status = response.status_code
        if status == 404 and sent_session is not None:
            if self._session_id == sent_session:
                self._drop_session()
            return SessionExpired(
                f"the server no longer knows this session (HTTP 404 to {what}); "
                "a new session is needed"
            )
        excerpt = await read_excerpt(response)
        reason = f" {response.reason_phrase}" if response.reason_phrase else ""
        detail = f": {excerpt}" if excerpt else ""
        if status in (301, 302, 303):
            detail += f" (redirect to {response.headers.get('location', '?')} not followed)"
        if status == 202:
            detail = ": the server accepted the request but sent no answer"
        return HttpStatusError(f"HTTP {status}{reason} to {what}{detail}", status)

    def _translate(self, exc: httpx2.HTTPError) -> TransportError:
        if self._closed:
            return TransportClosed("connection closed")
        return translate_error(exc, self._url)

    def _capture_session(self, response: httpx2.Response) -> None:
        session = response.headers.get(SESSION_HEADER)
        if session is not None and not (session and all(0x21 <= ord(c) <= 0x7E for c in session)):
            logger.warning("%s: ignoring a malformed Mcp-Session-Id", self.name)
            session = None
        if session != self._session_id:
            self._stop_listening()
            self._session_id = session
            self._rebuild_headers()

    def _drop_session(self) -> None:
        self._stop_listening()
        self._session_id = None
        self._rebuild_headers()

    def _rebuild_headers(self) -> None:
        """Precompute the header sets; called whenever the session or the version changes."""
        base = httpx2.Headers(self._user_headers)
        base.setdefault("user-agent", USER_AGENT)
        base.setdefault("accept-encoding", "gzip, deflate")
        base["accept"] = ACCEPT_BOTH
        base["content-type"] = "application/json"
        self._init_headers = dict(base.multi_items())
        if self._session_id is not None:
            base[SESSION_HEADER] = self._session_id
        if self._protocol_version is not None:
            base[VERSION_HEADER] = self._protocol_version
        self._post_headers = dict(base.multi_items())
        del base["content-type"]
        base["accept"] = "text/event-stream"
        base["cache-control"] = "no-store"
        self._get_headers = dict(base.multi_items())

    async def _shutdown(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await listener
        client = self._client
        try:
            if client is not None and self._session_id is not None:
                headers = {k: v for k, v in self._post_headers.items() if k != "content-type"}
                try:
                    request = httpx2.Request(
                        "DELETE", self._url, headers=headers, extensions=self._close_ext
                    )
                    response = await client.send(request)
                    if response.status_code not in (200, 202, 204, 404, 405):
                        logger.debug(
                            "%s: DELETE of the session answered HTTP %s",
                            self.name,
                            response.status_code,
                        )
                except httpx2.HTTPError as exc:
                    logger.debug("%s: could not DELETE the session: %s", self.name, exc)
        finally:
            self._closed = True
            self._session_id = None
            if client is not None and self._owns_client:
                await client.aclose()


def translate_error(exc: httpx2.HTTPError, url: httpx2.URL) -> TransportError:
    """An httpx2 failure as our error, with text a user can act on (never header values)."""
    where = public_url(url)
    if isinstance(exc, httpx2.ConnectTimeout):
        return ConnectError(f"timed out connecting to {where}")
    if isinstance(exc, httpx2.ConnectError):
        return ConnectError(_connect_failure(exc, where))
    if isinstance(exc, httpx2.UnsupportedProtocol):
        return ConnectError(f"cannot use URL {where}: {exc}")
    if isinstance(exc, httpx2.ReadTimeout):
        return TransportError(f"no data from {where} within the read timeout")
    if isinstance(exc, httpx2.TimeoutException):
        return TransportError(f"timed out talking to {where}: {type(exc).__name__}")
    if isinstance(exc, httpx2.RemoteProtocolError | httpx2.ReadError | httpx2.WriteError):
        detail = f": {exc}" if str(exc) else f" without an answer ({type(exc).__name__})"
        return TransportClosed(f"{where} closed the connection{detail}")
    return TransportError(f"HTTP request to {where} failed: {str(exc) or type(exc).__name__}")


def timeouts(*, read: float | None, connect: float = CONNECT_TIMEOUT_S) -> dict[str, Any]:
    """Request extensions carrying explicit timeouts (httpx's 5 s default must never apply)."""
    timeout = httpx2.Timeout(connect=connect, read=read, write=WRITE_TIMEOUT_S, pool=POOL_TIMEOUT_S)
    return {"timeout": timeout.as_dict()}


def dumps(message: JsonObject) -> bytes:
    """Compact UTF-8 JSON for a request body."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def mime_type(response: httpx2.Response) -> str:
    """The response's media type, lowercased, without parameters."""
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()


def sendable_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The entry's headers as HTTP can carry them; a `ConnectError` naming the header, never
    its value (a secret), for one it cannot (a CR from a CRLF ``.env`` file, non-ASCII)."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        # Spaces and tabs around a value are not part of it (RFC 9110, 5.5).
        value = value.strip(" \t")
        if not all(" " <= c <= "~" or c == "\t" for c in value):
            raise ConnectError(
                f"the value of header {name!r} cannot be sent over HTTP (it holds a control "
                "character such as a line break, or a non-ASCII character); check the entry's "
                "headers and the variables they use"
            )
        out[name] = value
    return out


def public_url(url: httpx2.URL) -> str:
    """The URL without user:password, which must never reach logs or status."""
    return str(url.copy_with(username=None, password=None)) if url.userinfo else str(url)


def _excerpt_text(body: bytes | str) -> str:
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    text = " ".join(text[: EXCERPT_CHARS * 4].split())
    return text[:EXCERPT_CHARS] + "…" if len(text) > EXCERPT_CHARS else text


async def read_excerpt(response: httpx2.Response) -> str:
    """The start of an unexpected body, a JSON-RPC error's message when it is one."""
    chunks = bytearray()
    try:
        async for chunk in response.aiter_bytes():
            chunks += chunk
            if len(chunks) >= _EXCERPT_READ_BYTES:
                break
    except httpx2.HTTPError:
        pass
    body = bytes(chunks)
    try:
        data = json.loads(body)
    except ValueError:
        return _excerpt_text(body)
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and "message" in error:
        return _excerpt_text(f"{error.get('message')} (JSON-RPC {error.get('code')})")
    return _excerpt_text(body)


def _connect_failure(exc: httpx2.ConnectError, where: str) -> str:
    """Name the cause (refused, DNS, TLS) found on the exception chain, else the message."""
    cause: BaseException | None = exc
    for _ in range(10):  # the chain is short; the bound only guards against a cycle
        if cause is None:
            break
        if isinstance(cause, ssl.SSLError):
            reason = getattr(cause, "reason", None) or str(cause)
            return f"TLS handshake with {where} failed: {reason}"
        if isinstance(cause, socket.gaierror):
            return f"cannot resolve the host of {where} (DNS: {cause.strerror or cause})"
        if isinstance(cause, ConnectionRefusedError):
            return f"connection refused by {where} (is the server running?)"
        cause = cause.__cause__ or cause.__context__
    text = str(exc)
    lowered = text.lower()
    if any(hint in lowered for hint in _DNS_HINTS):
        return f"cannot resolve the host of {where} (DNS: {text})"
    if "ssl" in lowered or "tls" in lowered or "certificate" in lowered:
        return f"TLS handshake with {where} failed: {text}"
    return f"cannot connect to {where}: {text or type(exc).__name__}"


_DNS_HINTS = (
    "name or service not known",
    "nodename nor servname",
    "name resolution",
    "no address associated",
    "getaddrinfo",
)
