"""`HttpPipeline`: the one way cat-code's HTTP transports talk to a server.

Streamable HTTP (`http.py`) and legacy HTTP+SSE (`sse.py`) send every request through one
`HttpPipeline.send`: it builds (or borrows) the single ``httpx2`` client, merges the
entry's headers, follows same-origin 307/308 redirects only (another origin would be
handed the entry's API keys), carries cookies, sets explicit timeouts on each request (an
injected client's 5 s default must never apply), runs the ``auth`` slot (an
``httpx2.Auth`` flow: where OAuth plugs in, so transports stay free of it) and turns a
401 into `AuthenticationRequired` with the ``WWW-Authenticate`` challenge kept. Bodies
and SSE events are read through it too, each capped at ``max_message_bytes``. Invariants:
header values never reach a log line, an error or `describe`; a URL's user:password is
never shown; every failure is a `TransportError` naming the URL and what went wrong.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import ssl
from collections.abc import AsyncGenerator, Mapping
from typing import Any, TypedDict, cast

import httpx2

from cat_code.mcp.errors import (
    AuthenticationRequired,
    ConnectError,
    HttpStatusError,
    MessageTooLarge,
    ProtocolError,
    TransportClosed,
    TransportError,
)
from cat_code.mcp.transports.base import MAX_MESSAGE_BYTES, JsonObject, size_text
from cat_code.mcp.versions import CLIENT_NAME, CLIENT_VERSION

logger = logging.getLogger(__name__)

#: Reaching a server, or handing it a request body, that takes longer than this is a failure.
CONNECT_TIMEOUT_S = 30.0
WRITE_TIMEOUT_S = 30.0
POOL_TIMEOUT_S = 30.0
#: A notification or response POST is answered 202 at once; nothing above us bounds it.
SEND_READ_TIMEOUT_S = 60.0
#: A DELETE that ends a session on close must not hold shutdown up.
CLOSE_TIMEOUT_S = 5.0
#: Same-origin 307/308 hops followed for one message.
MAX_REDIRECTS = 5
#: How much of an unexpected body an error message quotes.
EXCERPT_CHARS = 200
_EXCERPT_READ_BYTES = 4096

USER_AGENT = f"{CLIENT_NAME}/{CLIENT_VERSION}"
#: How an event stream is decoded: UTF-8 whatever its charset, a leading BOM dropped
#: (the SSE spec: a byte order mark is not part of the first line).
SSE_ENCODING = "utf-8-sig"


def parse_url(url: str) -> httpx2.URL:
    """The entry's URL, or a `ConnectError` naming it (secrets masked) when httpx2 cannot use it."""
    try:
        return httpx2.URL(url)
    except httpx2.InvalidURL as exc:
        raise ConnectError(f"invalid URL {_masked(url)!r}: {exc}") from exc


def public_url(url: httpx2.URL) -> str:
    """The URL as logs, errors and status may show it: no user:password, no query (both
    may hold a secret a ``${VAR}`` put there)."""
    if url.userinfo:
        url = url.copy_with(username=None, password=None)
    if url.query:
        url = url.copy_with(query=b"...")
    return str(url)


def _masked(url: str) -> str:
    """A URL httpx2 could not parse, with whatever may be a secret masked."""
    url = re.sub(r"//[^/?#@]*@", "//***@", url)
    return re.sub(r"\?[^#]*", "?...", url, count=1)


def same_origin(a: httpx2.URL, b: httpx2.URL) -> bool:
    return (a.scheme, a.host, a.port) == (b.scheme, b.host, b.port)


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


def merged(base: dict[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """``base`` with a message's own headers over it (no copy when it has none)."""
    return {**base, **extra} if extra else base


def dumps(message: JsonObject) -> bytes:
    """Compact UTF-8 JSON for a request body."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def mime_type(response: httpx2.Response) -> str:
    """The response's media type, lowercased, without parameters."""
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()


def timeouts(*, read: float | None, connect: float = CONNECT_TIMEOUT_S) -> dict[str, Any]:
    """Request extensions carrying explicit timeouts (httpx's 5 s default must never apply)."""
    timeout = httpx2.Timeout(connect=connect, read=read, write=WRITE_TIMEOUT_S, pool=POOL_TIMEOUT_S)
    return {"timeout": timeout.as_dict()}


#: Reads on a request's answer are bounded by the client's request timeout instead: a
#: slow tool is not a dead connection.
STREAM_TIMEOUTS = timeouts(read=None)
SEND_TIMEOUTS = timeouts(read=SEND_READ_TIMEOUT_S)
CLOSE_TIMEOUTS = timeouts(read=CLOSE_TIMEOUT_S, connect=CLOSE_TIMEOUT_S)


class HttpOptions(TypedDict, total=False):
    """What both HTTP transports take besides the URL, and hand to their `HttpPipeline`."""

    #: The entry's headers, on every request (their values are never shown).
    headers: Mapping[str, str] | None
    #: The server's name, for log lines.
    name: str
    #: How errors and logs name the URL: the host passes its config entry as written,
    #: masked (a ``${KEY}`` in the path stays a reference); default `public_url`.
    shown_url: str
    #: A client to use instead of building one (the caller closes it).
    http_client: httpx2.AsyncClient | None
    #: The auth slot: an ``httpx2.Auth`` flow run on every request (OAuth plugs in here).
    auth: httpx2.Auth | None
    #: The largest single message (JSON body, SSE event) taken.
    max_message_bytes: int


class HttpPipeline:
    """One server URL's HTTP client, headers, auth and error translation."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        name: str = "",
        shown_url: str = "",
        http_client: httpx2.AsyncClient | None = None,
        auth: httpx2.Auth | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self.url = parse_url(url)
        #: The URL as messages name it (never expanded secrets when the host says so).
        self.shown = shown_url or public_url(self.url)
        self.name = name or self.shown
        self.auth = auth
        self.max_message_bytes = max_message_bytes
        base = httpx2.Headers(sendable_headers(headers or {}))
        base.setdefault("user-agent", USER_AGENT)
        base.setdefault("accept-encoding", "gzip, deflate")
        #: The entry's headers and ours, for every request (a transport adds its own).
        self.base_headers: dict[str, str] = dict(base.multi_items())
        self._client = http_client
        self._owns_client = http_client is None
        self.closed = False

    async def open(self) -> None:
        """Build the HTTP client (unless one was given). Idempotent."""
        if self._client is None:
            # Timeouts are set per request; redirects are followed by `send` alone, so a
            # redirect to another origin never carries the entry's headers there.
            self._client = httpx2.AsyncClient(
                timeout=httpx2.Timeout(CONNECT_TIMEOUT_S), follow_redirects=False
            )

    async def aclose(self) -> None:
        """Close the HTTP client if it is ours. Later sends fail with `TransportClosed`."""
        self.closed = True
        client, self._client = self._client, None
        if client is not None and self._owns_client:
            await client.aclose()

    async def send(
        self,
        method: str,
        headers: Mapping[str, str],
        content: bytes | None = None,
        *,
        url: httpx2.URL | None = None,
        extensions: dict[str, Any] = STREAM_TIMEOUTS,
        what: str = "",
    ) -> httpx2.Response:
        """Send one request, streaming its answer; the caller closes the response.

        Same-origin 307/308 redirects are followed; a 401 raises `AuthenticationRequired`
        (the auth flow, if any, has already had its go); any other status is the caller's.
        """
        client = self._client
        if client is None or self.closed:
            raise TransportClosed("connection closed")
        target = url or self.url
        for _ in range(MAX_REDIRECTS + 1):
            request = httpx2.Request(
                method, target, headers=headers, content=content, extensions=extensions
            )
            if client.cookies:
                client.cookies.set_cookie_header(request)
            try:
                if self.auth is not None:
                    response = await client.send(request, stream=True, auth=self.auth)
                else:
                    response = await client.send(request, stream=True)
            except httpx2.HTTPError as exc:
                raise self.translate(exc, target) from exc
            status = response.status_code
            if status == 401:
                raise await self._unauthorized(response, what or method)
            if status not in (307, 308):
                return response
            await response.aclose()
            try:
                hop = target.join(response.headers.get("location", ""))
            except httpx2.InvalidURL:
                raise HttpStatusError(
                    f"HTTP {status}: {self.where(target)} redirects to a URL that is not valid",
                    status,
                ) from None
            if not same_origin(hop, target):
                raise HttpStatusError(
                    f"HTTP {status}: {self.where(target)} redirects to another origin "
                    f"({public_url(hop)}); cat-code does not follow it with the entry's "
                    "headers — put that URL in the config",
                    status,
                )
            target = hop
        raise HttpStatusError(f"more than {MAX_REDIRECTS} redirects from {self.shown}", 310)

    async def _unauthorized(self, response: httpx2.Response, what: str) -> AuthenticationRequired:
        try:
            detail = await read_excerpt(response)
        finally:
            await response.aclose()
        challenge = response.headers.get("www-authenticate")
        return AuthenticationRequired(
            f"HTTP 401 Unauthorized to {what}: {self.shown} needs authorization"
            f"{': ' + detail if detail else ''}",
            challenge,
            detail,
        )

    async def status_error(self, response: httpx2.Response, what: str) -> HttpStatusError:
        """The error for an answer whose status the caller cannot use (body excerpt kept)."""
        status = response.status_code
        excerpt, rpc_error = await read_excerpt_and_error(response)
        reason = f" {response.reason_phrase}" if response.reason_phrase else ""
        text = f": {excerpt}" if excerpt else ""
        if status in (301, 302, 303):
            text += f" (redirect to {self._location(response)} not followed)"
        if status == 202:
            text = ": the server accepted the request but sent no answer"
        return HttpStatusError(f"HTTP {status}{reason} to {what}{text}", status, excerpt, rpc_error)

    def _location(self, response: httpx2.Response) -> str:
        try:
            return public_url(self.url.join(response.headers.get("location", "")))
        except httpx2.InvalidURL:
            return "an invalid URL"

    async def read_json(self, response: httpx2.Response, what: str) -> Any:
        """The answer's JSON body, read up to the message cap."""
        cap = self.max_message_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise self.too_large(int(declared), what)
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > cap:
                raise self.too_large(len(body), what, at_least=True)
        try:
            return json.loads(body)
        except ValueError:
            raise ProtocolError(
                f"HTTP {response.status_code} to {what}: the body is not JSON: "
                f"{excerpt_text(bytes(body))}"
            ) from None

    async def events(
        self, response: httpx2.Response, what: str
    ) -> AsyncGenerator[httpx2.ServerSentEvent]:
        """The response's SSE events, each capped at the message cap.

        The caller must ``aclose()`` the generator (``contextlib.aclosing``) so it never
        outlives the response.
        """
        # httpx2's EventSource refuses two things, both as a bare SSEError: a content type
        # other than text/event-stream, and an event above ``max_event_size``. The first is
        # told apart here, before it reads, so an SSEError while reading is always the cap.
        if mime_type(response) != "text/event-stream":
            raise ProtocolError(
                f"{self.name}: {what} is not an event stream "
                f"(content type {mime_type(response) or 'none'!r})"
            )
        response.encoding = SSE_ENCODING
        source = httpx2.EventSource(response, max_event_size=self.max_message_bytes)
        # EventSource.__aiter__ is an async generator typed as an iterator.
        events = cast(AsyncGenerator[httpx2.ServerSentEvent], aiter(source))
        try:
            async for event in events:
                yield event
        except httpx2.SSEError as exc:
            raise MessageTooLarge(
                f"an SSE event from {self.shown} ({what}) is larger than "
                f"{size_text(self.max_message_bytes)}, the most a single message may take"
            ) from exc
        finally:
            await events.aclose()

    def too_large(self, size: int, what: str, *, at_least: bool = False) -> MessageTooLarge:
        more = "more than " if at_least else ""
        return MessageTooLarge(
            f"the answer to {what} from {self.shown} is {more}{size_text(size)}, "
            f"above the {size_text(self.max_message_bytes)} a single message may take"
        )

    def translate(self, exc: httpx2.HTTPError, url: httpx2.URL | None = None) -> TransportError:
        """An httpx2 failure as our error (`TransportClosed` once we closed)."""
        if self.closed:
            return TransportClosed("connection closed")
        return translate_error(exc, url or self.url, where=self.where(url or self.url))

    def where(self, url: httpx2.URL) -> str:
        """How a message names ``url``: the shown URL when it is the entry's own."""
        return self.shown if url == self.url else public_url(url)


def translate_error(
    exc: httpx2.HTTPError, url: httpx2.URL, *, where: str | None = None
) -> TransportError:
    """An httpx2 failure as our error, with text a user can act on (never header values);
    ``where`` names the URL (default `public_url`)."""
    where = where or public_url(url)
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
    if isinstance(exc, httpx2.LocalProtocolError):
        # Its text may quote the header it refused — a credential, as likely as not.
        return TransportError(
            f"could not send the request to {where}: a header value HTTP cannot carry"
        )
    if isinstance(exc, httpx2.RemoteProtocolError | httpx2.ReadError | httpx2.WriteError):
        detail = f": {exc}" if str(exc) else f" without an answer ({type(exc).__name__})"
        return TransportClosed(f"{where} closed the connection{detail}")
    return TransportError(f"HTTP request to {where} failed: {str(exc) or type(exc).__name__}")


def excerpt_text(body: bytes | str) -> str:
    """The start of a body for an error message, whitespace folded."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    text = " ".join(text[: EXCERPT_CHARS * 4].split())
    return text[:EXCERPT_CHARS] + "…" if len(text) > EXCERPT_CHARS else text


async def read_excerpt(response: httpx2.Response) -> str:
    """The start of an unexpected body, a JSON-RPC error's message when it is one."""
    return (await read_excerpt_and_error(response))[0]


async def read_excerpt_and_error(response: httpx2.Response) -> tuple[str, dict[str, Any] | None]:
    """`read_excerpt`, and the JSON-RPC error object the body is, if it is one."""
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
        return excerpt_text(body), None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and "message" in error:
        return excerpt_text(f"{error.get('message')} (JSON-RPC {error.get('code')})"), error
    return excerpt_text(body), None


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
