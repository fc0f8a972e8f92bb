"""`StreamableHttpTransport` against real HTTP servers on 127.0.0.1.

Scripted peers (`http_peers.McpPeer`, in-process) do what real servers will not do on
demand: expire a session, break a stream, answer 500 or a 20 MB event. The official
`mcp` SDK server (SSE answers, JSON answers, stateless) and ``server-everything`` run as
subprocesses; the ``cat-code mcp`` commands run end to end against an HTTP entry.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from scripted.http_peers import (
    ECHO_TOOL,
    HttpPeer,
    McpPeer,
    Reply,
    Seen,
    everything_command,
    free_port,
    node_available,
    sdk_command,
    start_processes,
    stop,
    wait_for_port,
)

from cat_code.host.config.load import McpConfig, parse_entry
from cat_code.host.servers.pool import McpPool
from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import (
    AuthenticationRequired,
    ConnectError,
    HttpStatusError,
    McpError,
    MessageTooLarge,
    ProtocolError,
    RequestTimeout,
    SessionExpired,
    TransportClosed,
    TransportError,
)
from cat_code.mcp.transports import http
from cat_code.mcp.transports.http import StreamableHttpTransport
from cat_code.tools.registry import ToolRegistry

SECRET = "s3cr3t-header-value"
Connect = Callable[..., Awaitable[McpClient]]
#: Tests of the handshake era pin it: no era probe.
HANDSHAKE = "2025-11-25"


@pytest.fixture
async def connect() -> AsyncIterator[Connect]:
    """Connects a client to a URL over a fresh transport; every one is closed afterwards."""
    clients: list[McpClient] = []

    async def make(
        url: str,
        *,
        headers: dict[str, str] | None = None,
        request_timeout: float = 10,
        transport: StreamableHttpTransport | None = None,
        **kwargs: Any,
    ) -> McpClient:
        transport = transport or StreamableHttpTransport(url, headers=headers, name="test")
        client = McpClient(transport, name="test", request_timeout=request_timeout, **kwargs)
        clients.append(client)
        await client.connect(timeout=15)
        return client

    yield make
    for client in clients:
        await client.close()


def text_of(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


# -- the wire: headers, answers, sessions ------------------------------------------------


async def test_requests_carry_the_protocol_headers_session_and_version_after_initialize(
    connect: Connect,
) -> None:
    async with McpPeer() as peer:
        client = await connect(peer.url, headers={"X-Api-Key": SECRET}, protocol_version=HANDSHAKE)
        await client.call_tool("echo", {"text": "hi"})
        await client.close()

    initialize, *later = peer.requests("POST")
    assert initialize.rpc_method == "initialize"
    assert initialize.headers["accept"] == "application/json, text/event-stream"
    assert initialize.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in initialize.headers
    assert "mcp-protocol-version" not in initialize.headers
    assert [s.rpc_method for s in later] == ["notifications/initialized", "tools/call"]
    for seen in later:
        assert seen.headers["mcp-session-id"] == "session-1"
        assert seen.headers["mcp-protocol-version"] == "2025-11-25"
    # The entry's headers go on every request: POSTs, the GET stream and the DELETE.
    assert {s.method for s in peer.seen} == {"POST", "GET", "DELETE"}
    assert all(s.headers["x-api-key"] == SECRET for s in peer.seen)
    (delete,) = peer.requests("DELETE")
    assert delete.headers["mcp-session-id"] == "session-1"


@pytest.mark.parametrize("sse", [True, False], ids=["sse", "json"])
async def test_json_and_sse_answers_both_work(connect: Connect, sse: bool) -> None:
    async with McpPeer(sse=sse) as peer:
        client = await connect(peer.url)
        assert [t["name"] for t in await client.list_tools()] == ["echo"]
        assert text_of(await client.call_tool("echo", {"text": "hi"})) == "echo: hi"


class CrlfPeer(McpPeer):
    """Answers like sse-starlette: CRLF line ends, comment pings, a priming event, a
    notification before the answer, and multi-line data."""

    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        await reply.open_sse()
        await reply.comment("ping - 2026-11-30", eol="\r\n")
        await reply.event(None, id="p-1", retry=3000, eol="\r\n")
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}
        await reply.event(note, event="message", id="p-2", eol="\r\n")
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": self.result_for(message)}
        text = json.dumps(answer, indent=1)  # data split over many `data:` lines
        await reply.event(text, event="message", id="p-3", eol="\r\n")
        await reply.end()


async def test_crlf_streams_with_comments_priming_events_and_multiline_data_are_read(
    connect: Connect,
) -> None:
    async with CrlfPeer() as peer:
        client = await connect(peer.url)
        assert text_of(await client.call_tool("echo", {"text": "crlf"})) == "echo: crlf"


class BomPeer(McpPeer):
    """Answers calls with an SSE stream that starts with a UTF-8 byte order mark and ends
    its lines with a bare CR, both of which the SSE format allows."""

    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        if message["method"] != "tools/call":
            await super().on_request(message, seen, reply)
            return
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": self.result_for(message)}
        await reply.open_sse()
        await reply.chunk("\ufeff".encode())
        await reply.event(answer, eol="\r")  # no event field: the type is "message"
        await reply.end()


async def test_an_sse_answer_starting_with_a_byte_order_mark_is_read(connect: Connect) -> None:
    async with BomPeer() as peer:
        client = await connect(peer.url, request_timeout=5)
        assert text_of(await client.call_tool("echo", {"text": "bom"})) == "echo: bom"


class HugeEventPeer(McpPeer):
    size = 20_000_000

    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        if message["method"] != "tools/call":
            await super().on_request(message, seen, reply)
            return
        text = "".join(chr(0x61 + i % 26) for i in range(26)) * (self.size // 26)
        await self.answer(reply, message, {"content": [{"type": "text", "text": text}]})


async def test_a_20_mb_sse_event_arrives_intact(connect: Connect) -> None:
    async with HugeEventPeer() as peer:
        client = await connect(peer.url)
        text = text_of(await client.call_tool("echo", {}))
    assert len(text) == HugeEventPeer.size // 26 * 26
    assert text[:27] == "abcdefghijklmnopqrstuvwxyza"
    assert text == "abcdefghijklmnopqrstuvwxyz" * (HugeEventPeer.size // 26)


class PingingPeer(McpPeer):
    """Sends a ping inside the tools/call stream and answers only once the reply came."""

    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        if message["method"] != "tools/call":
            await super().on_request(message, seen, reply)
            return
        await reply.open_sse()
        await reply.event({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}, event="message")
        await reply.event({"jsonrpc": "2.0", "id": "srv-2", "method": "roots/list"})
        async with asyncio.timeout(5):
            while len(self.client_responses) < 2:
                self.response_arrived.clear()
                await self.response_arrived.wait()
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": self.result_for(message)}
        await reply.event(answer)
        await reply.end()


async def test_server_requests_inside_an_answer_stream_are_answered_by_post(
    connect: Connect,
) -> None:
    async with PingingPeer() as peer:
        client = await connect(peer.url)
        assert text_of(await client.call_tool("echo", {"text": "x"})) == "echo: x"
    replies = {r["id"]: r for r in peer.client_responses}
    assert replies["srv-1"]["result"] == {}
    assert replies["srv-2"]["error"]["code"] == -32601
    posted = [s for s in peer.requests("POST") if s.json.get("id") in ("srv-1", "srv-2")]
    assert all(s.headers["mcp-session-id"] == "session-1" for s in posted)


async def test_notifications_are_posted_and_answered_202(connect: Connect) -> None:
    async with McpPeer() as peer:
        client = await connect(peer.url)
        note = {"jsonrpc": "2.0", "method": "notifications/roots/changed"}
        await client.transport.send(note, client.session.context)
        assert [n["method"] for n in peer.notifications] == [
            "notifications/initialized",
            "notifications/roots/changed",
        ]


class ExpiringPeer(McpPeer):
    """Forgets every session after its first tools/call."""

    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        await super().on_request(message, seen, reply)
        if message["method"] == "tools/call":
            self.live_sessions.clear()


async def test_an_expired_session_starts_a_new_one_and_retries_the_request_once(
    connect: Connect,
) -> None:
    async with ExpiringPeer() as peer:
        client = await connect(peer.url, protocol_version=HANDSHAKE)
        assert text_of(await client.call_tool("echo", {"text": "1"})) == "echo: 1"
        assert text_of(await client.call_tool("echo", {"text": "2"})) == "echo: 2"
        assert client.session.session_id == "session-2"

    posts = [(s.rpc_method, s.headers.get("mcp-session-id")) for s in peer.requests("POST")]
    assert posts == [
        ("initialize", None),
        ("notifications/initialized", "session-1"),
        ("tools/call", "session-1"),
        ("tools/call", "session-1"),  # 404: the server forgot it
        ("initialize", None),  # the new initialize goes without the old session id
        ("notifications/initialized", "session-2"),
        ("tools/call", "session-2"),
    ]


class SlowRenewalPeer(McpPeer):
    """Forgets the session after the first tools/call, and answers the initialize that
    renews it only once ``release`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.renewing = asyncio.Event()

    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        await super().on_request(message, seen, reply)
        if len(self.requests("POST", "tools/call")) == 1:
            self.live_sessions.clear()

    async def handle(self, seen: Seen, reply: Reply) -> None:
        if (
            seen.method == "POST"
            and seen.rpc_method == "initialize"
            and self.requests("DELETE") == []
        ):
            if len(self.requests("POST", "initialize")) > 1:
                self.renewing.set()
                await self.release.wait()
        await super().handle(seen, reply)


async def test_a_call_started_while_the_session_is_renewed_waits_and_succeeds(
    connect: Connect,
) -> None:
    async with SlowRenewalPeer() as peer:
        client = await connect(peer.url)
        assert text_of(await client.call_tool("echo", {"text": "1"})) == "echo: 1"
        first = asyncio.create_task(client.call_tool("echo", {"text": "2"}))
        async with asyncio.timeout(5):
            await peer.renewing.wait()
        second = asyncio.create_task(client.call_tool("echo", {"text": "3"}))
        # A client that did not wait would send it now, with no or a stale session.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.1):
                while len(peer.requests("POST", "tools/call")) < 3:
                    await asyncio.sleep(0.005)
        assert len(peer.requests("POST", "tools/call")) == 2
        peer.release.set()
        async with asyncio.timeout(5):
            assert text_of(await second) == "echo: 3"
            assert text_of(await first) == "echo: 2"
    calls = [s.headers.get("mcp-session-id") for s in peer.requests("POST", "tools/call")]
    assert calls == ["session-1", "session-1", "session-2", "session-2"]


class UnauthorizedPeer(HttpPeer):
    async def handle(self, seen: Seen, reply: Reply) -> None:
        challenge = (
            'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'
        )
        await reply.send(401, b"sign in first", content_type="text/plain",
                         headers={"www-authenticate": challenge})  # fmt: skip


async def test_a_401_is_its_own_error_keeping_the_challenge(connect: Connect) -> None:
    async with UnauthorizedPeer() as peer:
        with pytest.raises(AuthenticationRequired) as caught:
            await connect(peer.url, headers={"Authorization": f"Bearer {SECRET}"})
    assert caught.value.status_code == 401
    assert caught.value.www_authenticate is not None
    assert caught.value.www_authenticate.startswith('Bearer resource_metadata="http://127')
    assert "needs authorization" in str(caught.value)
    assert SECRET not in str(caught.value)


class HugeAnswerPeer(McpPeer):
    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        if message["method"] != "tools/call":
            await super().on_request(message, seen, reply)
            return
        text = "x" * 3_000_000
        await self.answer(reply, message, {"content": [{"type": "text", "text": text}]})


@pytest.mark.parametrize("sse", [False, True])
async def test_a_message_over_the_cap_fails_that_request_naming_the_size(
    connect: Connect, sse: bool
) -> None:
    async with HugeAnswerPeer(sse=sse) as peer:
        transport = StreamableHttpTransport(peer.url, max_message_bytes=1_000_000)
        client = await connect(peer.url, transport=transport)
        with pytest.raises(MessageTooLarge, match=r"tools/call.* 976.6 KiB"):
            await client.call_tool("echo", {})
        assert [t["name"] for t in await client.list_tools(refresh=True)] == ["echo"]


class BrokenStreamPeer(McpPeer):
    async def on_get(self, seen: Seen, reply: Reply) -> None:
        await reply.send(500, b"stream broken", content_type="text/plain")


async def test_a_server_stream_that_keeps_failing_is_one_warning(
    connect: Connect, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http, "LISTEN_MIN_RECONNECT_S", 0.01)
    caplog.set_level(logging.WARNING, logger="cat_code.mcp.session")
    async with BrokenStreamPeer() as peer:
        client = await connect(peer.url)
        listener = client.session._listener
        assert listener is not None
        async with asyncio.timeout(5):
            await asyncio.wait({listener})
        assert text_of(await client.call_tool("echo", {"text": "ok"})) == "echo: ok"
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "message stream failed" in warnings[0].getMessage()
    assert "will not arrive" in warnings[0].getMessage()


class ForgetfulStreamPeer(McpPeer):
    """Holds the GET stream open; `forget` drops every session and ends the stream, so the
    reconnecting GET meets a 404 (a session that expired while the client was idle)."""

    def __init__(self) -> None:
        super().__init__()
        self.forget = asyncio.Event()

    async def on_get(self, seen: Seen, reply: Reply) -> None:
        if seen.headers.get("mcp-session-id") not in self.live_sessions:
            await reply.send(404, b"unknown session", content_type="text/plain")
            return
        await reply.open_sse()
        await reply.event(None, id=f"{seen.headers['mcp-session-id']}-0", retry=10)
        await self.forget.wait()
        self.forget.clear()
        self.live_sessions.clear()
        await reply.end()


async def test_a_session_that_expires_while_idle_is_renewed_by_its_stream(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http, "LISTEN_MIN_RECONNECT_S", 0.01)
    async with ForgetfulStreamPeer() as peer:
        client = await connect(peer.url)
        assert client.session.session_id == "session-1"
        peer.forget.set()
        async with asyncio.timeout(5):
            while client.session.session_id != "session-2" or len(peer.requests("GET")) < 3:
                await asyncio.sleep(0.01)
        assert text_of(await client.call_tool("echo", {"text": "x"})) == "echo: x"
    gets = [s.headers.get("mcp-session-id") for s in peer.requests("GET")]
    assert gets[:3] == ["session-1", "session-1", "session-2"]  # the 404, then a new stream


class FailingStreamPeer(McpPeer):
    async def on_get(self, seen: Seen, reply: Reply) -> None:
        await reply.send(500, b"no", content_type="text/plain")


async def test_a_failing_server_stream_does_not_hold_up_the_connect(connect: Connect) -> None:
    async with FailingStreamPeer() as peer:
        client = await connect(peer.url)
        # Connected after the first GET's answer, not after every reconnect attempt.
        assert len(peer.requests("GET")) == 1
        listener = client.session._listener
        assert listener is not None and not listener.done()


def test_errors_never_show_a_urls_password_or_query() -> None:
    with pytest.raises(ConnectError) as caught:
        StreamableHttpTransport(f"https://bob:{SECRET}@example.com:abc/mcp?key={SECRET}")
    assert SECRET not in str(caught.value)
    assert "***@example.com" in str(caught.value)
    transport = StreamableHttpTransport(f"https://bob:{SECRET}@example.com/mcp?key={SECRET}")
    assert transport.describe() == "http: https://example.com/mcp?..."


class StatusPeer(McpPeer):
    def __init__(self, status: int, body: bytes, content_type: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.status, self.body, self.content_type = status, body, content_type

    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        if message["method"] == "tools/call":
            await reply.send(self.status, self.body, content_type=self.content_type)
        else:
            await super().on_request(message, seen, reply)


async def test_a_500_fails_the_call_naming_the_status_and_the_body(connect: Connect) -> None:
    async with StatusPeer(500, b"database is on fire\n", "text/plain") as peer:
        client = await connect(peer.url)
        with pytest.raises(HttpStatusError) as caught:
            await client.call_tool("echo", {})
        assert caught.value.status_code == 500
        assert "HTTP 500" in str(caught.value)
        assert "database is on fire" in str(caught.value)
        # The connection stays usable for the next call.
        assert [t["name"] for t in await client.list_tools()] == ["echo"]


async def test_a_json_rpc_error_body_is_quoted_by_its_message(connect: Connect) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad arguments"}}
    ).encode()
    async with StatusPeer(400, body, "application/json") as peer:
        client = await connect(peer.url)
        with pytest.raises(HttpStatusError, match=r"HTTP 400 .*Bad arguments \(JSON-RPC -32000\)"):
            await client.call_tool("echo", {})


async def test_a_400_naming_the_session_renews_it_and_a_second_refusal_is_named() -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad session"}}
    ).encode()
    async with StatusPeer(400, body, "application/json") as peer:
        client = McpClient(StreamableHttpTransport(peer.url), name="test", request_timeout=10)
        try:
            await client.connect(timeout=15)
            with pytest.raises(SessionExpired, match=r"refused the new session too .*Bad session"):
                await client.call_tool("echo", {})
        finally:
            await client.close()
    assert [s.rpc_method for s in peer.requests("POST")].count("initialize") == 2


async def test_a_body_that_is_not_json_fails_clearly(connect: Connect) -> None:
    async with StatusPeer(200, b"<html>oops</html>", "application/json") as peer:
        client = await connect(peer.url)
        with pytest.raises(ProtocolError, match=r"not JSON: <html>oops</html>"):
            await client.call_tool("echo", {})


async def test_an_unexpected_content_type_fails_naming_it(connect: Connect) -> None:
    async with StatusPeer(200, b"<h1>login</h1>", "text/html; charset=utf-8") as peer:
        client = await connect(peer.url)
        with pytest.raises(HttpStatusError, match=r"'text/html'.*<h1>login</h1>"):
            await client.call_tool("echo", {})


async def test_a_202_to_a_request_is_an_error_not_a_hang(connect: Connect) -> None:
    async with StatusPeer(202, b"", "text/plain") as peer:
        client = await connect(peer.url)
        with pytest.raises(HttpStatusError, match="accepted the request but sent no answer"):
            await client.call_tool("echo", {})


class SilentPeer(McpPeer):
    """Never answers the first tools/call (the stream stays open)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        if message["method"] == "tools/call":
            self.calls += 1
            if self.calls == 1:
                await reply.open_sse()
                await asyncio.Event().wait()
        await super().on_request(message, seen, reply)


async def test_a_request_timeout_cancels_the_call_and_the_connection_stays_usable(
    connect: Connect,
) -> None:
    async with SilentPeer() as peer:
        client = await connect(peer.url, request_timeout=0.3)
        with pytest.raises(RequestTimeout):
            await client.call_tool("echo", {})
        assert text_of(await client.call_tool("echo", {"text": "again"})) == "echo: again"
        async with asyncio.timeout(5):
            while not any(n["method"] == "notifications/cancelled" for n in peer.notifications):
                await asyncio.sleep(0.01)


class SlowPeer(McpPeer):
    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        if message["method"] == "tools/call":
            await asyncio.sleep(0.5)
        await super().on_request(message, seen, reply)


async def test_an_injected_clients_short_default_timeout_does_not_cut_long_calls(
    connect: Connect,
) -> None:
    # httpx's default (5 s) would end long tool calls; the transport sets its own per request.
    async with SlowPeer(sse=False) as peer, httpx2.AsyncClient(timeout=0.1) as http_client:
        transport = StreamableHttpTransport(peer.url, http_client=http_client)
        client = await connect(peer.url, transport=transport)
        assert text_of(await client.call_tool("echo", {"text": "slow"})) == "echo: slow"
        await client.close()
        assert not http_client.is_closed  # an injected client is the caller's to close


# -- resumption ------------------------------------------------------------------------


class BreakingPeer(McpPeer):
    """Breaks the tools/call stream after a priming event; the answer comes on the GET
    that carries Last-Event-ID, after ``breaks`` further broken GETs."""

    def __init__(self, *, abort: bool = True, ids: bool = True, breaks: int = 0) -> None:
        super().__init__()
        self.abort, self.ids, self.breaks = abort, ids, breaks
        self.pending: dict[str, Any] | None = None
        self.counter = 0

    def next_id(self) -> str | None:
        self.counter += 1
        return f"ev-{self.counter}" if self.ids else None

    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        if message["method"] != "tools/call":
            await super().on_request(message, seen, reply)
            return
        self.pending = message
        await reply.open_sse()
        await reply.event(None, id=self.next_id(), retry=10)
        await (reply.abort() if self.abort else reply.end())

    async def on_get(self, seen: Seen, reply: Reply) -> None:
        if "last-event-id" not in seen.headers:
            await reply.send(405)  # no standalone stream
            return
        await reply.open_sse()
        await reply.event(None, id=self.next_id(), retry=10)
        if self.breaks > 0:
            self.breaks -= 1
            await reply.end()
            return
        assert self.pending is not None
        result = self.result_for(self.pending)
        answer = {"jsonrpc": "2.0", "id": self.pending["id"], "result": result}
        await reply.event(answer, id=self.next_id())
        await reply.end()


@pytest.mark.parametrize("abort", [True, False], ids=["broken", "ended"])
async def test_a_stream_cut_before_the_answer_is_resumed_with_last_event_id(
    connect: Connect, abort: bool
) -> None:
    async with BreakingPeer(abort=abort, breaks=1) as peer:
        client = await connect(peer.url)
        assert text_of(await client.call_tool("echo", {"text": "back"})) == "echo: back"
    resumed = [s.headers.get("last-event-id") for s in peer.requests("GET")]
    # One GET without it (the optional server stream: 405), then the resumption GETs.
    assert resumed == [None, "ev-1", "ev-2"]
    assert all(s.headers["mcp-session-id"] == "session-1" for s in peer.requests("GET"))


async def test_a_stream_without_event_ids_that_ends_early_fails_at_once(
    connect: Connect,
) -> None:
    async with BreakingPeer(ids=False) as peer:
        client = await connect(peer.url)
        with pytest.raises(TransportClosed, match="before the answer"):
            await client.call_tool("echo", {})
        assert len(peer.requests("GET")) == 1  # only the server-stream probe


class NoResumePeer(BreakingPeer):
    async def on_get(self, seen: Seen, reply: Reply) -> None:
        await reply.send(405)


async def test_resumption_gives_up_after_a_bounded_number_of_attempts(
    connect: Connect,
) -> None:
    async with NoResumePeer() as peer:
        client = await connect(peer.url)
        with pytest.raises(TransportError, match=r"3 attempt\(s\) to resume .*HTTP 405"):
            await client.call_tool("echo", {})
        resumptions = [s for s in peer.requests("GET") if "last-event-id" in s.headers]
        assert len(resumptions) == http.MAX_RESUME_ATTEMPTS


class NoRetryPeer(BreakingPeer):
    """Like BreakingPeer, but never sends a retry field: the default interval applies."""

    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        if message["method"] != "tools/call":
            await McpPeer.on_request(self, message, seen, reply)
            return
        self.pending = message
        await reply.open_sse()
        await reply.event(None, id=self.next_id())
        await reply.end()


async def test_without_a_retry_field_the_default_interval_is_used(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http, "DEFAULT_RETRY_S", 0.01)
    async with NoRetryPeer() as peer:
        client = await connect(peer.url)
        assert text_of(await client.call_tool("echo", {"text": "d"})) == "echo: d"


# -- the server's GET stream -------------------------------------------------------------


async def test_a_get_answered_405_means_no_server_stream_and_is_not_retried(
    connect: Connect,
) -> None:
    async with McpPeer() as peer:
        client = await connect(peer.url)
        for i in range(3):
            await client.call_tool("echo", {"text": str(i)})
        assert len(peer.requests("GET")) == 1


class ChangingPeer(McpPeer):
    """Holds a GET stream open; `change` swaps the tool list and notifies on that stream."""

    def __init__(self) -> None:
        super().__init__()
        self.stream: Reply | None = None
        self.stream_open = asyncio.Event()

    async def on_get(self, seen: Seen, reply: Reply) -> None:
        await reply.open_sse()
        await reply.event(None, id="g-0")
        self.stream = reply
        self.stream_open.set()
        await asyncio.Event().wait()  # held until the client hangs up

    async def change(self, tools: list[dict[str, Any]]) -> None:
        self.tools = tools
        assert self.stream is not None
        note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        await self.stream.event(note, id="g-1")


async def test_tools_list_changed_on_the_get_stream_updates_the_pools_registry() -> None:
    other = {**ECHO_TOOL, "name": "reverse"}
    async with ChangingPeer() as peer:
        entry = parse_entry("peer", {"type": "http", "url": peer.url}, source=Path("x.json"))
        registry = ToolRegistry()
        async with McpPool(McpConfig(servers=[entry])) as pool:
            await pool.connect_all()
            pool.register_into(registry)
            assert registry.names() == ["mcp__peer__echo"]
            await peer.change([ECHO_TOOL, other])
            async with asyncio.timeout(5):
                while "mcp__peer__reverse" not in registry.names():
                    await asyncio.sleep(0.01)
            await peer.change([other])
            async with asyncio.timeout(5):
                while "mcp__peer__echo" in registry.names():
                    await asyncio.sleep(0.01)
            assert registry.names() == ["mcp__peer__reverse"]
            assert pool.status()[0].tools == 1


class PingOnStreamPeer(ChangingPeer):
    async def on_get(self, seen: Seen, reply: Reply) -> None:
        await reply.open_sse()
        await reply.event({"jsonrpc": "2.0", "id": 7, "method": "ping"}, id="g-0")
        await asyncio.Event().wait()


async def test_a_ping_on_the_server_stream_is_answered_by_post(connect: Connect) -> None:
    async with PingOnStreamPeer() as peer:
        await connect(peer.url)
        async with asyncio.timeout(5):
            await peer.response_arrived.wait()
    assert peer.client_responses == [{"jsonrpc": "2.0", "id": 7, "result": {}}]


class EndingStreamPeer(McpPeer):
    """The GET stream delivers one event and ends; the reconnect gets 405."""

    async def on_get(self, seen: Seen, reply: Reply) -> None:
        if len(self.requests("GET")) > 1:
            await reply.send(405)
            return
        await reply.open_sse()
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x"}}
        await reply.event(note, id="g-1", retry=10)
        await reply.end()


async def test_the_server_stream_reconnects_with_last_event_id_and_stops_on_405(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http, "LISTEN_MIN_RECONNECT_S", 0.01)
    async with EndingStreamPeer() as peer:
        client = await connect(peer.url)
        async with asyncio.timeout(5):
            while len(peer.requests("GET")) < 2:
                await asyncio.sleep(0.01)
        assert text_of(await client.call_tool("echo", {"text": "still"})) == "echo: still"
        listener = client.session._listener
        assert listener is not None
        async with asyncio.timeout(5):
            await asyncio.wait({listener})
    gets = peer.requests("GET")
    assert [g.headers.get("last-event-id") for g in gets] == [None, "g-1"]


class IdleTimeoutPeer(McpPeer):
    """Behind a proxy with an idle timeout: each quiet GET stream is cut, cleanly, after
    `lifetime` seconds; the stream after `quiet` such cuts brings a tools/list_changed."""

    def __init__(self, *, quiet: int, lifetime: float) -> None:
        super().__init__()
        self.quiet = quiet
        self.lifetime = lifetime

    async def on_get(self, seen: Seen, reply: Reply) -> None:
        await reply.open_sse()
        if len(self.requests("GET")) <= self.quiet:
            await asyncio.sleep(self.lifetime)  # the stream's life, until the proxy cuts it
            await reply.end()
            return
        await reply.event({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        await asyncio.Event().wait()  # held until the client hangs up


async def test_quiet_server_streams_cut_by_an_idle_timeout_are_reopened_for_as_long_as_they_last(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Scaled down: "healthy" from 0.1 s, streams cut after 0.3 s, reconnects at once.
    monkeypatch.setattr(http, "HEALTHY_STREAM_S", 0.1)
    monkeypatch.setattr(http, "DEFAULT_RETRY_S", 0.01)
    monkeypatch.setattr(http, "LISTEN_MIN_RECONNECT_S", 0.01)
    changed = asyncio.Event()
    async with IdleTimeoutPeer(quiet=5, lifetime=0.3) as peer:
        client = await connect(peer.url, protocol_version=HANDSHAKE, on_tools_changed=changed.set)
        async with asyncio.timeout(10):
            await changed.wait()  # more than MAX_LISTEN_ATTEMPTS clean ends, still listening
        assert len(peer.requests("GET")) == 6
        listener = client.session._listener
        assert listener is not None and not listener.done()


async def test_server_streams_that_end_at_once_are_given_up_after_three(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http, "DEFAULT_RETRY_S", 0.01)
    monkeypatch.setattr(http, "LISTEN_MIN_RECONNECT_S", 0.01)
    async with IdleTimeoutPeer(quiet=5, lifetime=0) as peer:
        client = await connect(peer.url, protocol_version=HANDSHAKE)
        listener = client.session._listener
        assert listener is not None
        async with asyncio.timeout(5):
            await asyncio.wait({listener})
        assert len(peer.requests("GET")) == http.MAX_LISTEN_ATTEMPTS


# -- connection failures ---------------------------------------------------------------


async def test_connection_refused_is_a_connect_error_naming_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    client = McpClient(StreamableHttpTransport(url), name="down")
    with pytest.raises(ConnectError, match=r"connection refused by http://127\.0\.0\.1:\d+/mcp"):
        await client.connect(timeout=10)
    await client.close()


async def test_a_tls_failure_is_named() -> None:
    async def plain_http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
        writer.close()

    server = await asyncio.start_server(plain_http, "127.0.0.1", 0)
    url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/mcp"
    async with server:
        client = McpClient(StreamableHttpTransport(url), name="tls")
        with pytest.raises(ConnectError, match=r"TLS handshake with https://127\.0\.0\.1"):
            await client.connect(timeout=10)
        await client.close()


def dns_answers_quickly() -> bool:
    """Whether the resolver refuses a name under .invalid (RFC 6761) within a second."""
    result: list[bool] = []

    def lookup() -> None:
        try:
            socket.getaddrinfo("no-such-host.invalid", 80)
        except socket.gaierror as exc:
            result.append(exc.errno == socket.EAI_NONAME)

    thread = threading.Thread(target=lookup, daemon=True)
    thread.start()
    thread.join(1.0)
    return result == [True]


@pytest.mark.skipif(not dns_answers_quickly(), reason="no resolver that answers at once")
async def test_a_dns_failure_is_named() -> None:
    client = McpClient(StreamableHttpTransport("http://no-such-host.invalid/mcp"), name="dns")
    with pytest.raises(ConnectError, match="cannot resolve the host of http://no-such-host"):
        await client.connect(timeout=10)
    await client.close()


async def test_a_failing_server_fails_alone_in_the_pool_with_its_reason() -> None:
    down = f"http://127.0.0.1:{free_port()}/mcp"
    async with McpPeer() as peer:
        entries = [
            parse_entry("down", {"type": "http", "url": down}, source=Path("x.json")),
            parse_entry("up", {"url": peer.url}, source=Path("x.json")),
        ]
        async with McpPool(McpConfig(servers=entries)) as pool:
            await pool.connect_all()
            status = {s.name: s for s in pool.status()}
    assert status["down"].state == "FAILED"
    assert "connection refused" in (status["down"].error or "")
    assert status["up"].state == "CONNECTED"
    assert status["up"].tools == 1


# -- redirects and secrecy ---------------------------------------------------------------


class RedirectPeer(McpPeer):
    def __init__(self, location: str) -> None:
        super().__init__()
        self.location = location

    async def handle(self, seen: Seen, reply: Reply) -> None:
        if seen.path == "/mcp":
            await reply.send(307, headers={"location": self.location})
        else:
            await super().handle(seen, reply)


async def test_same_origin_307_is_followed_and_another_origin_is_refused(
    connect: Connect,
) -> None:
    async with RedirectPeer("/mcp/") as peer:
        client = await connect(peer.url)
        assert text_of(await client.call_tool("echo", {"text": "moved"})) == "echo: moved"
    async with RedirectPeer("http://localhost:1/elsewhere") as peer:
        client = McpClient(StreamableHttpTransport(peer.url, headers={"X-Api-Key": SECRET}))
        with pytest.raises(HttpStatusError, match="redirects to another origin"):
            await client.connect(timeout=10)
        await client.close()


async def test_header_values_never_reach_logs_errors_or_describe(
    connect: Connect, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with StatusPeer(500, b"nope", "text/plain") as peer:
        client = await connect(peer.url, headers={"Authorization": f"Bearer {SECRET}"})
        with pytest.raises(HttpStatusError) as caught:
            await client.call_tool("echo", {})
        described = client.transport.describe()
    assert SECRET not in str(caught.value)
    assert SECRET not in described
    assert SECRET not in caplog.text
    assert "Bearer" not in caplog.text


@pytest.mark.parametrize(
    "value",
    [f"Bearer {SECRET}\r", f"Bearer {SECRET}\n", f"Bearer {SECRET}\x00", f"Bearer {SECRET}é"],
)
async def test_a_header_value_http_cannot_carry_fails_naming_the_header_not_the_value(
    value: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A CR left by a CRLF .env file is the usual way a secret gets here.
    caplog.set_level(logging.DEBUG)
    async with McpPeer() as peer:
        raw = {"url": peer.url, "type": "http", "headers": {"Authorization": value}}
        entry = parse_entry("s", raw, source=Path("mcp.json"))
        async with McpPool(McpConfig(servers=[entry])) as pool:
            await pool.connect_all()
            (status,) = pool.status()
    assert status.state == "FAILED"
    assert "Authorization" in (status.error or "")
    assert SECRET not in (status.error or "")
    assert SECRET not in caplog.text


async def test_spaces_around_a_header_value_are_not_part_of_it(connect: Connect) -> None:
    async with McpPeer() as peer:
        await connect(peer.url, headers={"X-Api-Key": f"  {SECRET}\t"})
    assert peer.requests("POST")[0].headers["x-api-key"] == SECRET


def test_describe_hides_credentials_in_the_url() -> None:
    transport = StreamableHttpTransport("https://user:pw@example.com/mcp")
    assert transport.describe() == "http: https://example.com/mcp"


# -- real servers: the official Python SDK's and server-everything --------------------


@pytest.fixture(scope="module")
def sdk_urls() -> Iterator[dict[str, str]]:
    """The `mcp` SDK server in its three Streamable HTTP modes, started in parallel."""
    ports = {mode: free_port() for mode in ("sse", "json", "stateless")}
    processes = start_processes({m: (sdk_command(p, m), {}) for m, p in ports.items()})
    try:
        for mode, port in ports.items():
            wait_for_port(port, processes[mode])
        yield {mode: f"http://127.0.0.1:{port}/mcp" for mode, port in ports.items()}
    finally:
        for process in processes.values():
            stop(process)


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    if not node_available():
        pytest.skip("node or @modelcontextprotocol/server-everything missing (run npm ci)")
    port = free_port()
    processes = start_processes({"e": (everything_command("streamableHttp"), {"PORT": str(port)})})
    try:
        wait_for_port(port, processes["e"])
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(processes["e"])


async def accept_person(params: dict[str, Any]) -> dict[str, Any]:
    assert params["message"] == "Who are you?"
    return {"action": "accept", "content": {"name": "Ada", "age": 36}}


@pytest.mark.parametrize("mode", ["sse", "json", "stateless"])
async def test_the_sdk_server_answers_in_every_mode(
    connect: Connect, sdk_urls: dict[str, str], mode: str
) -> None:
    client = await connect(sdk_urls[mode], headers={"X-Api-Key": SECRET})
    names = {t["name"] for t in await client.list_tools()}
    assert {"echo", "add", "big", "count", "ask"} <= names
    assert text_of(await client.call_tool("echo", {"text": "hi"})) == "echo: hi"
    assert text_of(await client.call_tool("add", {"a": 5, "b": 3})) == "8.0"
    # The SDK server speaks both eras: cat-code picks the stateless one, in every mode.
    assert client.era == "modern"
    assert client.protocol_version == "2026-07-28"
    assert client.server_info.get("name") == "sdk-test-server"


async def test_elicitation_inside_the_sdk_servers_call_stream_is_answered_by_the_handler(
    connect: Connect, sdk_urls: dict[str, str]
) -> None:
    # (In JSON mode the SDK server has no channel for server requests: SSE mode only.)
    client = await connect(
        sdk_urls["sse"], elicitation_handler=accept_person, protocol_version=HANDSHAKE
    )
    assert text_of(await client.call_tool("ask", {})) == "hello Ada, 36"


async def test_without_an_elicitation_handler_the_sdk_servers_request_is_refused(
    connect: Connect, sdk_urls: dict[str, str]
) -> None:
    client = await connect(sdk_urls["sse"], protocol_version=HANDSHAKE)
    # The server relays our -32601 refusal as the call's error.
    with pytest.raises(McpError, match="elicitation/create") as caught:
        await client.call_tool("ask", {})
    assert caught.value.code == -32601


async def test_progress_and_a_5_mb_result_from_the_sdk_server(
    connect: Connect, sdk_urls: dict[str, str]
) -> None:
    client = await connect(sdk_urls["sse"])
    steps: list[tuple[float, float | None, str | None]] = []
    result = await client.call_tool(
        "count", {"n": 3}, progress=lambda done, total, text: steps.append((done, total, text))
    )
    assert text_of(result) == "counted to 3"
    assert steps == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
    assert len(text_of(await client.call_tool("big", {"size": 5_000_000}))) == 5_000_000


async def test_server_everything_over_streamable_http(
    connect: Connect, everything_url: str
) -> None:
    async def accept_defaults(params: dict[str, Any]) -> dict[str, Any]:
        properties = params["requestedSchema"]["properties"]
        content = {k: v["default"] for k, v in properties.items() if "default" in v}
        return {"action": "accept", "content": content}

    client = await connect(everything_url, elicitation_handler=accept_defaults)
    assert client.session.session_id
    names = {t["name"] for t in await client.list_tools()}
    assert {"echo", "get-sum", "trigger-elicitation-request"} <= names
    assert text_of(await client.call_tool("echo", {"message": "hi"})) == "Echo: hi"
    elicited = text_of(await client.call_tool("trigger-elicitation-request", {}))
    assert "User provided the requested information" in elicited
    steps: list[float] = []
    await client.call_tool(
        "trigger-long-running-operation",
        {"duration": 0.2, "steps": 2},
        progress=lambda done, total, text: steps.append(done),
    )
    assert steps == [1.0, 2.0]


# -- cat-code mcp list / tools / call, end to end ------------------------------------------


def cat_code(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cat_code", "mcp", *args, "--mcp-config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
def test_cat_code_mcp_commands_work_against_an_http_entry(
    sdk_urls: dict[str, str], tmp_path: Path
) -> None:
    config = tmp_path / "mcp.json"
    down = f"http://127.0.0.1:{free_port()}/mcp"
    entry = {"url": sdk_urls["sse"], "headers": {"Authorization": f"Bearer {SECRET}"}}
    config.write_text(json.dumps({"mcpServers": {"sdk": entry}}))

    listed = cat_code("list", config=config)
    assert listed.returncode == 0, listed.stderr
    assert "sdk  CONNECTED" in listed.stdout
    assert f"(http: {sdk_urls['sse']})" in listed.stdout
    assert SECRET not in listed.stdout + listed.stderr

    tools = cat_code("tools", config=config)
    assert tools.returncode == 0, tools.stderr
    assert "mcp__sdk__echo" in tools.stdout
    assert "mcp__sdk__add" in tools.stdout

    called = cat_code("call", "mcp__sdk__echo", '{"text": "over http"}', config=config)
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "echo: over http"

    config.write_text(json.dumps({"mcpServers": {"sdk": entry, "down": {"url": down}}}))
    listed = cat_code("list", "--json", config=config)
    assert listed.returncode == 1
    status = {s["name"]: s for s in json.loads(listed.stdout)}
    assert status["sdk"]["state"] == "CONNECTED"
    assert status["down"]["state"] == "FAILED"
    assert "connection refused" in status["down"]["error"]


def test_a_header_value_http_refuses_is_never_quoted_in_the_error() -> None:
    from cat_code.mcp.transports.http_pipeline import translate_error

    error = translate_error(
        httpx2.LocalProtocolError("Illegal header value b'Bearer LEAK\\n'"),
        httpx2.URL("https://example.com/mcp"),
    )
    assert "LEAK" not in str(error) and "header value HTTP cannot carry" in str(error)
