"""The handshake era (2024-11-05 … 2025-11-25), on the client's side.

`HandshakeSession` is the handshake era (2024-11-05 … 2025-11-25): ``initialize`` and
version negotiation; the ``Mcp-Session-Id`` and ``MCP-Protocol-Version`` headers every
later request carries, handed to the client as a `RequestContext`; the server's GET
stream, opened after ``notifications/initialized`` (a failure is one warning per
server: change notifications stop); DELETE on close; telling an expired session from
other failures (404, or a 400 that names the session, on a request that carried one);
and the legacy HTTP+SSE fallback for a ``url`` entry that named no type (initialize
answered 400, 404 or 405). Transports never see any of this meaning. The client asks a
session only for the context of the next request and whether an error means the session
is gone, so the stateless 2026-07-28 session can sit beside this one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from cat_code.mcp.errors import (
    AuthenticationRequired,
    ConnectError,
    HttpStatusError,
    McpClientError,
    ProtocolError,
)
from cat_code.mcp.transports.base import NO_CONTEXT, JsonObject, RequestContext, Transport
from cat_code.mcp.versions import (
    CLIENT_NAME,
    CLIENT_VERSION,
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
)

if TYPE_CHECKING:
    from cat_code.mcp.session.base import Link

logger = logging.getLogger(__name__)

CLIENT_INFO = {"name": CLIENT_NAME, "title": CLIENT_NAME, "version": CLIENT_VERSION}
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
#: The initialize statuses after which a type-less ``url`` entry tries legacy HTTP+SSE.
FALLBACK_STATUSES = frozenset({400, 404, 405})
#: How long opening the GET stream may hold up the end of the handshake, so a server's
#: first notifications cannot race the first request (a real server answers at once).
LISTEN_OPEN_WAIT_S = 2.0


class HandshakeSession:
    """The handshake era's state for one connection (see the module docstring)."""

    era: Literal["handshake"] = "handshake"

    def __init__(
        self,
        *,
        fallback: Callable[[], Transport] | None = None,
        offer: str = LATEST_HANDSHAKE_VERSION,
    ) -> None:
        #: The version initialize asks for (an entry's pinned ``protocolVersion``, else ours).
        self.offer = offer
        self.version: str | None = None
        self.server_info: JsonObject = {}
        self.server_capabilities: JsonObject = {}
        self.instructions: str | None = None
        self.session_id: str | None = None
        #: Every request after the handshake carries this (HTTP: session and version).
        self.context: RequestContext = NO_CONTEXT
        #: A type-less ``url`` entry answered initialize with 400/404/405: legacy SSE now.
        self.fell_back = False
        self._fallback = fallback
        self._listener: asyncio.Task[None] | None = None
        self._stream_warned = False

    # -- the handshake ------------------------------------------------------------------

    async def open(self, link: Link, capabilities: JsonObject) -> None:
        """``initialize`` (falling back to legacy SSE once, if allowed), then ``initialized``
        and, over Streamable HTTP with a session, the server's GET stream."""
        params = {
            "protocolVersion": self.offer,
            "capabilities": capabilities,
            "clientInfo": CLIENT_INFO,
        }
        try:
            result = await self._initialize(link, params)
        except HttpStatusError as exc:
            fallback = self._fallback
            if (
                fallback is None
                or self.fell_back
                or isinstance(exc, AuthenticationRequired)
                or exc.status_code not in FALLBACK_STATUSES
                # A modern server's refusal (its 400 names -32020/-32021/-32022): not a legacy
                # one; era detection takes it from here.
                or _modern_refusal(exc)
            ):
                raise
            logger.info(
                "%s: initialize POST got HTTP %s; trying the legacy HTTP+SSE transport",
                link.name,
                exc.status_code,
            )
            self.fell_back = True
            try:
                await link.switch_transport(fallback())
                result = await self._initialize(link, params)
            except McpClientError as legacy:
                raise ConnectError(
                    f"{exc}; the legacy HTTP+SSE transport failed too: {legacy}"
                ) from legacy
        self._accept(result, link.transport)
        await link.notify("notifications/initialized", self.context)
        logger.debug(
            "%s: connected, protocol %s, server %s", link.name, self.version, self.server_info
        )
        if self.session_id is not None and link.transport.can_listen:
            await self._start_listening(link)

    async def _initialize(self, link: Link, params: JsonObject) -> Any:
        # Not cancellable per the spec, so no cancel notification: the connect timeout
        # (startup timeout) bounds it and fails the whole server instead.
        # The old context stays until a new one is accepted: should this fail, the next
        # request still carries the stale session, is refused, and renews again.
        self.session_id = None
        return await link.exchange(
            "initialize", params, RequestContext(on_headers=self._capture_session)
        )

    def _capture_session(self, headers: Mapping[str, str]) -> None:
        session = headers.get(SESSION_HEADER)
        if session is not None and not (session and all(0x21 <= ord(c) <= 0x7E for c in session)):
            logger.warning("ignoring a malformed Mcp-Session-Id")
            session = None
        self.session_id = session

    def _accept(self, result: Any, transport: Transport) -> None:
        if not isinstance(result, dict):
            raise ProtocolError("initialize result is not an object")
        version = result.get("protocolVersion")
        if version not in HANDSHAKE_VERSIONS:
            raise ProtocolError(f"unsupported protocol version {version}")
        self.version = version
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        caps = result.get("capabilities")
        self.server_capabilities = caps if isinstance(caps, dict) else {}
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        self.context = NO_CONTEXT
        if transport.kind == "http":
            headers = {VERSION_HEADER: version}
            if self.session_id is not None:
                headers[SESSION_HEADER] = self.session_id
            self.context = RequestContext(headers=headers)

    def prepare(
        self, method: str, params: JsonObject | None
    ) -> tuple[JsonObject | None, RequestContext]:
        """The handshake era adds nothing to a request: the session's context goes as is."""
        return params, self.context

    def accept_tools(self, tools: list[JsonObject]) -> list[JsonObject]:
        """Every listed tool is usable in this era."""
        return tools

    # -- expiry and renewal ---------------------------------------------------------------

    def expired(self, exc: HttpStatusError, sent: RequestContext) -> bool:
        """Whether ``exc``, the answer to a request sent with ``sent``, means the server
        forgot that request's session: a 404, or a 400 naming the session (older SDKs)."""
        if SESSION_HEADER not in sent.headers:
            return False
        if exc.status_code == 404:
            return True
        return exc.status_code == 400 and "session" in exc.detail.lower()

    async def renew(self, link: Link, capabilities: JsonObject) -> None:
        """A new session in place of an expired one (never falling back)."""
        await self._stop_listening()
        fallback, self._fallback = self._fallback, None
        try:
            await self.open(link, capabilities)
        finally:
            self._fallback = fallback

    # -- the server's GET stream ---------------------------------------------------------

    async def _start_listening(self, link: Link) -> None:
        opened = asyncio.Event()
        context = RequestContext(
            headers=self.context.headers, long_lived=True, on_headers=lambda _: opened.set()
        )
        listener = self._listener = asyncio.create_task(
            self._listen(link, context), name=f"mcp-listen:{link.name}"
        )
        listener.add_done_callback(lambda _: opened.set())
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LISTEN_OPEN_WAIT_S):
                await opened.wait()

    async def _listen(self, link: Link, context: RequestContext) -> None:
        try:
            await link.transport.listen(context)
        except HttpStatusError as exc:
            if (
                self.expired(exc, context)
                and context.headers.get(SESSION_HEADER) == self.session_id
            ):
                # The server forgot the session while we were idle: renew it now, so
                # change notifications keep coming (the new session listens again).
                logger.info("%s: the session expired while idle (%s)", link.name, exc)
                link.renew_soon()
                return
            self._stream_failed(link, context, exc)
        except Exception as exc:  # a boundary: the stream is optional, the server is not
            self._stream_failed(link, context, exc)

    def _stream_failed(self, link: Link, context: RequestContext, exc: Exception) -> None:
        if context.headers.get(SESSION_HEADER) != self.session_id:
            return  # that session is gone (renewed or closed); it is no news
        level = logging.DEBUG if self._stream_warned else logging.WARNING
        self._stream_warned = True
        logger.log(
            level,
            "%s: the server's message stream failed (%s); tool-list changes and requests "
            "the server makes outside a call will not arrive",
            link.name,
            exc if str(exc) else type(exc).__name__,
        )

    async def _stop_listening(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            # asyncio.wait: the listener's end is not ours to raise, our own cancel is.
            await asyncio.wait([listener])

    # -- the end --------------------------------------------------------------------------

    async def close(self, link: Link) -> None:
        """Stop the GET stream and DELETE the session, if there is one (bounded)."""
        await self._stop_listening()
        session, self.session_id = self.session_id, None
        if session is not None:
            # The id the server gave last, even if the handshake failed after it came, or
            # a renewal was cut short: that is the state the server holds.
            headers = {SESSION_HEADER: session}
            if self.version is not None:
                headers[VERSION_HEADER] = self.version
            await link.transport.release(RequestContext(headers=headers))


def _modern_refusal(exc: HttpStatusError) -> bool:
    error = exc.rpc_error
    return error is not None and error.get("code") in (-32020, -32021, -32022)


__all__ = ["CLIENT_INFO", "HandshakeSession"]
