"""The two eras: the probe that picks one, and the stateless (2026-07-28) session at work —
on the fake transport, then against real servers (the `mcp` SDK's, ``mcp-server-time``,
server-everything and the scripted ``tests/servers/era_server.py``)."""

from __future__ import annotations

import asyncio
import base64
import logging
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EVERYTHING_SERVER, node_available
from scripted.fakes import FakeTransport, RpcError, tool

from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import HttpStatusError, McpError, ProtocolError
from cat_code.mcp.session import detect
from cat_code.mcp.session.detect import EraMemory
from cat_code.mcp.session.stateless import header_value, param_headers
from cat_code.mcp.transports.stdio import StdioTransport

MODERN = "2026-07-28"
SERVERS = Path(__file__).resolve().parent.parent / "servers"
DISCOVER = {
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "modern-fake", "version": "1"},
}


def modern_fake(
    handlers: dict[str, Any] | None = None, *, http: bool = False, **kwargs: Any
) -> FakeTransport:
    def refuse(params: dict[str, Any]) -> Any:
        raise RpcError(-32022, "modern only", {"supported": [MODERN]})

    fake = FakeTransport(
        {"server/discover": lambda p: DISCOVER, "initialize": refuse, **(handlers or {})}, **kwargs
    )
    if http:
        fake.kind = "http"
    return fake


async def connected(fake: FakeTransport, **kwargs: Any) -> McpClient:
    client = McpClient(fake, name="fake", **kwargs)
    await client.connect(timeout=5)
    return client


# -- detection ------------------------------------------------------------------------


async def test_a_server_that_answers_discover_is_spoken_to_statelessly() -> None:
    fake = modern_fake(tools=[tool("a")])
    client = await connected(fake)
    assert (client.era, client.protocol_version) == ("modern", MODERN)
    assert client.server_info["name"] == "modern-fake"
    await client.list_tools()
    assert fake.methods() == ["server/discover", "tools/list"]  # no initialize
    meta = fake.requests[-1]["params"]["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN
    # Only the tasks extension, which every 2026-07-28 request declares.
    tasks = {"io.modelcontextprotocol/tasks": {}}
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {"extensions": tasks}
    assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "cat-code"


async def test_a_server_that_refuses_discover_gets_the_handshake() -> None:
    fake = FakeTransport()  # answers server/discover with -32601
    client = await connected(fake)
    assert client.era == "handshake"
    assert fake.methods() == ["server/discover", "initialize"]


async def test_a_silent_server_costs_the_probe_once_then_is_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(detect, "PROBE_TIMEOUT_S", 0.2)
    memory = EraMemory(tmp_path / "eras.json")
    fake = FakeTransport({"server/discover": lambda p: asyncio.Event().wait()})
    client = await connected(fake, era_memory=memory)
    assert client.era == "handshake"
    again = FakeTransport({"server/discover": lambda p: asyncio.Event().wait()})
    assert (await connected(again, era_memory=EraMemory(tmp_path / "eras.json"))).era == (
        "handshake"
    )
    assert again.methods() == ["initialize"]


async def test_the_eras_file_is_private_whether_rewritten_or_only_read(tmp_path: Path) -> None:
    rewritten, read = tmp_path / "rewritten.json", tmp_path / "read.json"
    rewritten.write_text("{}")
    read.write_text('{"k": "handshake"}')
    for path in (rewritten, read):
        path.chmod(0o644)
    EraMemory(rewritten).remember("k", "modern")
    assert EraMemory(read).get("k") == "handshake"
    assert stat.S_IMODE(rewritten.stat().st_mode) == 0o600
    assert stat.S_IMODE(read.stat().st_mode) == 0o600


async def test_a_pinned_version_skips_the_probe_but_still_discovers_the_instructions() -> None:
    fake = modern_fake({"server/discover": lambda p: {**DISCOVER, "instructions": "Be brief."}})
    client = await connected(fake, protocol_version=MODERN)
    await client.list_tools()
    assert client.era == "modern"
    assert client.instructions == "Be brief."
    assert fake.methods() == ["server/discover", "tools/list"]  # one discover, no initialize


async def test_a_pinned_modern_server_that_fails_discover_still_serves_its_tools() -> None:
    def refuse(params: dict[str, Any]) -> Any:
        raise RpcError(-32603, "no discover here")

    fake = modern_fake({"server/discover": refuse}, tools=[tool("a")])
    client = await connected(fake, protocol_version=MODERN)
    assert [t["name"] for t in await client.list_tools()] == ["a"]
    assert client.instructions is None


# -- requests, headers and retries -----------------------------------------------------


def test_header_values_that_are_not_plain_ascii_are_sent_in_base64() -> None:
    assert header_value("us west 1") == "us west 1"
    for raw in ("Hello, 世界", " padded", "tab\there", "line1\nline2", "=?base64?x?="):
        encoded = header_value(raw)
        assert encoded.startswith("=?base64?") and encoded.endswith("?=")
        assert base64.b64decode(encoded[9:-2]).decode() == raw


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "string", "x-mcp-header": ""},
        {"type": "number", "x-mcp-header": "Score"},
        {"type": "object", "x-mcp-header": "Data"},
        {"type": "string", "x-mcp-header": "My Region"},
        {"type": "string", "x-mcp-header": "Région"},
    ],
)
def test_invalid_x_mcp_header_annotations_are_named(spec: dict[str, Any]) -> None:
    assert isinstance(param_headers({"type": "object", "properties": {"p": spec}}), str)


async def test_over_http_every_request_carries_the_headers_its_body_implies(
    caplog: pytest.LogCaptureFixture,
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"},
            "none": {"type": "string", "x-mcp-header": "None"},
            "q": {"type": "string"},
        },
    }
    bad = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-mcp-header": "A"},
            "b": {"type": "string", "x-mcp-header": "a"},
        },
    }
    fake = modern_fake(
        {"tools/call": lambda p: {"content": []}},
        http=True,
        tools=[tool("good", inputSchema=schema), tool("bad", inputSchema=bad)],
    )
    client = await connected(fake)
    with caplog.at_level(logging.WARNING):
        assert [t["name"] for t in await client.list_tools()] == ["good"]
    assert "'bad'" in caplog.text
    await client.call_tool(
        "good", {"region": "Zürich", "n": 3, "flag": False, "none": None, "q": "x"}
    )
    headers = dict(fake.contexts[-1].headers)
    assert headers["mcp-protocol-version"] == MODERN
    assert headers["mcp-method"] == "tools/call"
    assert headers["mcp-name"] == "good"
    assert headers["mcp-param-region"] == header_value("Zürich")
    assert (headers["mcp-param-n"], headers["mcp-param-flag"]) == ("3", "false")
    assert "mcp-param-none" not in headers and "mcp-param-q" not in headers
    assert "mcp-session-id" not in headers


async def test_unsupported_version_is_retried_once_with_the_version_named() -> None:
    calls = iter([RpcError(-32022, "no", {"supported": [MODERN]}), {"content": []}])

    def call(params: dict[str, Any]) -> Any:
        outcome = next(calls)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    fake = modern_fake({"tools/call": call})
    client = await connected(fake)
    assert await client.call_tool("t") == {"content": []}
    ids = [r["id"] for r in fake.requests if r["method"] == "tools/call"]
    assert len(ids) == 2 and ids[0] != ids[1]


async def test_a_missing_capability_error_names_it() -> None:
    def call(params: dict[str, Any]) -> Any:
        raise RpcError(-32021, "missing capability", {"missing": {"sampling": {}}})

    client = await connected(modern_fake({"tools/call": call}))
    with pytest.raises(McpError, match="sampling"):
        await client.call_tool("t")


async def test_a_header_mismatch_lists_the_tools_again_and_retries_once() -> None:
    def call(params: dict[str, Any]) -> Any:
        raise RpcError(-32020, "header mismatch")

    fake = modern_fake({"tools/call": call}, http=True)
    client = await connected(fake)
    with pytest.raises(McpError):
        await client.call_tool("t")
    assert fake.methods()[1:] == ["tools/call", "tools/list", "tools/call"]


async def test_a_4xx_with_a_modern_error_body_is_that_error() -> None:
    def call(params: dict[str, Any]) -> Any:
        raise HttpStatusError(
            "HTTP 400",
            400,
            "x",
            {"code": -32021, "message": "need roots", "data": {"missing": "roots"}},
        )

    client = await connected(modern_fake({"tools/call": call}, http=True))
    with pytest.raises(McpError, match="roots"):
        await client.call_tool("t")


async def test_input_is_gathered_over_rounds_and_request_state_echoed_byte_for_byte() -> None:
    state = '{"b": 1,  "a": "é"}'

    def call(params: dict[str, Any]) -> Any:
        if "requestState" not in params:
            return {
                "resultType": "input_required",
                "requestState": state,
                "inputRequests": {
                    "q": {"method": "elicitation/create", "params": {"message": "?"}},
                    "r": {"method": "roots/list"},
                    "s": {"method": "sampling/createMessage", "params": {}},
                },
            }
        return {"content": [{"type": "text", "text": "ok"}], "echo": params}

    async def accept(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"x": 1}}

    fake = modern_fake({"tools/call": call})
    client = await connected(fake, elicitation_handler=accept)
    result: Any = await client.call_tool("t", {"k": 1})
    retry = result["echo"]
    assert retry["requestState"] == state
    assert retry["arguments"] == {"k": 1}
    answers = retry["inputResponses"]
    assert answers["q"] == {"action": "accept", "content": {"x": 1}}
    assert answers["r"]["roots"][0]["uri"] == Path.cwd().as_uri()
    assert answers["s"] == {"action": "decline"}
    ids = [r["id"] for r in fake.requests if r["method"] == "tools/call"]
    assert ids[0] != ids[1]


async def test_a_server_that_asks_for_input_for_ever_is_stopped() -> None:
    fake = modern_fake(
        {"tools/call": lambda p: {"resultType": "input_required", "requestState": "again"}}
    )
    client = await connected(fake)
    with pytest.raises(ProtocolError, match="rounds"):
        await client.call_tool("t")


async def test_an_unknown_result_type_breaks_the_protocol_and_a_missing_one_is_complete() -> None:
    fake = modern_fake({"tools/call": lambda p: {"resultType": p["name"], "content": []}})
    client = await connected(fake)
    assert await client.call_tool("complete") == {"resultType": "complete", "content": []}
    with pytest.raises(ProtocolError, match="resultType"):
        await client.call_tool("bogus")
    with pytest.raises(ProtocolError, match="no taskId"):  # declared, but malformed
        await client.call_tool("task")


async def test_modern_http_abandons_a_cancelled_call_without_a_notification() -> None:
    fake = modern_fake({"tools/call": lambda p: asyncio.Event().wait()}, http=True)
    client = await connected(fake)
    call = asyncio.ensure_future(client.call_tool("slow"))
    await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await asyncio.sleep(0.05)
    assert not [m for m in fake.sent if m.get("method") == "notifications/cancelled"]


async def test_modern_stdio_cancels_with_a_notification() -> None:
    fake = modern_fake({"tools/call": lambda p: asyncio.Event().wait()})
    client = await connected(fake)
    call = asyncio.ensure_future(client.call_tool("slow"))
    await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await asyncio.sleep(0.05)
    assert [m for m in fake.sent if m.get("method") == "notifications/cancelled"]


async def test_the_tool_list_is_cached_for_its_ttl_and_a_change_invalidates_it() -> None:
    listed = 0

    def tools(params: dict[str, Any]) -> Any:
        nonlocal listed
        listed += 1
        return {"tools": [tool("a")], "ttlMs": 60_000, "cacheScope": "public"}

    fake = modern_fake({"tools/list": tools})
    client = await connected(fake)
    await client.list_tools()
    await client.list_tools()
    assert listed == 1
    fake.push({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    await client.list_tools()
    assert listed == 2


async def test_subscriptions_listen_delivers_tool_list_changes() -> None:
    changed = asyncio.Event()
    listening = asyncio.Event()

    async def listen(params: dict[str, Any]) -> Any:
        assert params["notifications"] == {"toolsListChanged": True}
        listening.set()
        await asyncio.Event().wait()

    discover = {**DISCOVER, "capabilities": {"tools": {"listChanged": True}}}
    fake = modern_fake({"server/discover": lambda p: discover, "subscriptions/listen": listen})
    client = await connected(fake)
    client.on_tools_changed = changed.set
    async with asyncio.timeout(5):
        await listening.wait()
        fake.push({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        await changed.wait()
    await client.close()


async def test_a_dropped_subscriptions_listen_is_opened_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cat_code.mcp.session import stateless

    monkeypatch.setattr(stateless, "LISTEN_BACKOFF_S", (0.01, 0.05))
    attempts: list[int] = []
    second = asyncio.Event()

    async def listen(params: dict[str, Any]) -> Any:
        attempts.append(1)
        if len(attempts) == 1:
            raise RpcError(-32603, "stream dropped")
        second.set()
        await asyncio.Event().wait()

    discover = {**DISCOVER, "capabilities": {"tools": {"listChanged": True}}}
    fake = modern_fake({"server/discover": lambda p: discover, "subscriptions/listen": listen})
    client = await connected(fake)
    async with asyncio.timeout(5):
        await second.wait()
    assert len(attempts) == 2
    await client.close()


# -- real servers ------------------------------------------------------------------------


async def stdio_client(command: str, *args: str, **kwargs: Any) -> McpClient:
    client = McpClient(StdioTransport(command, args, name="real"), name="real", **kwargs)
    await client.connect(timeout=20)
    return client


async def test_mcp_server_time_is_modern_over_stdio() -> None:
    exe = Path(sys.executable).parent / "mcp-server-time"
    if not exe.exists():
        pytest.skip("mcp-server-time is not installed in this environment")
    client = await stdio_client(str(exe))
    try:
        assert (client.era, client.protocol_version) == ("modern", MODERN)
        names = {t["name"] for t in await client.list_tools()}
        assert "get_current_time" in names
        result = await client.call_tool("get_current_time", {"timezone": "UTC"})
        assert not result.get("isError")
    finally:
        await client.close()


@pytest.mark.skipif(not node_available(), reason="server-everything is not installed")
async def test_server_everything_is_spoken_to_with_the_handshake() -> None:
    client = await stdio_client(shutil.which("node") or "node", str(EVERYTHING_SERVER), "stdio")
    try:
        assert client.era == "handshake"
        assert any(t["name"] == "echo" for t in await client.list_tools())
    finally:
        await client.close()


async def test_a_modern_only_server_with_version_refusals_and_rounds_of_input() -> None:
    async def who(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    client = await stdio_client(
        sys.executable, str(SERVERS / "era_server.py"), "modern", elicitation_handler=who
    )
    try:
        assert client.era == "modern"
        assert [t["name"] for t in await client.list_tools()] == ["ask"]  # after -32022
        assert client.server_info["name"] == "era-modern"
        result = await client.call_tool("ask", {})
        text = result["content"][0]["text"]
        assert text == f"accept {{'name': 'Ada'}} {Path.cwd().as_uri()}"
    finally:
        await client.close()


async def test_a_server_silent_on_unknown_methods_falls_back_after_the_probe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(detect, "PROBE_TIMEOUT_S", 0.5)
    client = await stdio_client(sys.executable, str(SERVERS / "era_server.py"), "silent")
    try:
        assert client.era == "handshake"
        assert [t["name"] for t in await client.list_tools()] == ["t"]
    finally:
        await client.close()


async def connect_era_server(mode: str, memory: EraMemory) -> McpClient:
    """The same command line (and folder) each time; ``mode`` picks the era it speaks."""
    transport = StdioTransport(
        sys.executable,
        [str(SERVERS / "era_server.py"), "env"],
        env={"ERA_SERVER_MODE": mode},
        name="era",
    )
    client = McpClient(transport, name="era", era_memory=memory)
    try:
        await client.connect(timeout=20)
    except BaseException:
        await client.close()
        raise
    return client


@pytest.mark.parametrize(("before", "after"), [("modern", "silent"), ("silent", "modern")])
async def test_a_server_that_changed_era_since_it_was_remembered_is_probed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: str, after: str
) -> None:
    monkeypatch.setattr(detect, "PROBE_TIMEOUT_S", 0.5)
    eras = tmp_path / "eras.json"
    first = await connect_era_server(before, EraMemory(eras))
    remembered = first.era
    await first.close()
    # A later run: same command, same folder, the other era (a silent handshake server
    # never answers server/discover, a modern one refuses initialize).
    client = await connect_era_server(after, EraMemory(eras))
    try:
        assert client.era != remembered
        assert await client.list_tools()
    finally:
        await client.close()
    third = await connect_era_server(after, EraMemory(eras))  # the new verdict holds
    try:
        assert third.era == client.era
    finally:
        await third.close()


# -- a real HTTP server that insists on the 2026-07-28 headers --------------------------


class HeaderCheckingPeer:
    """A scripted modern-only Streamable HTTP server on 127.0.0.1 that refuses (400 with
    -32020) any request whose ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` or
    ``Mcp-Param-*`` headers do not match its body; `rename` changes the tool's header."""

    def __init__(self) -> None:
        from scripted.http_peers import HttpPeer

        outer = self

        class Peer(HttpPeer):
            async def handle(self, seen: Any, reply: Any) -> None:
                await outer.handle(seen, reply)

        self.peer = Peer()
        self.header = "Region"
        self.refusals = 0

    def tools(self) -> list[dict[str, Any]]:
        schema = {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": self.header}},
        }
        return [tool("search", inputSchema=schema)]

    async def handle(self, seen: Any, reply: Any) -> None:
        if seen.method != "POST":
            await reply.send(405)
            return
        message = seen.json
        method, params = message.get("method"), message.get("params") or {}
        if "id" not in message:
            await reply.send(202)
            return
        wanted = {"mcp-protocol-version": MODERN, "mcp-method": method}
        if method == "tools/call":
            wanted["mcp-name"] = params.get("name")
            region = (params.get("arguments") or {}).get("region")
            if region is not None:
                wanted[f"mcp-param-{self.header.lower()}"] = region
        if any(seen.headers.get(k) != v for k, v in wanted.items()):
            self.refusals += 1
            error = {"code": -32020, "message": "Header mismatch"}
            await reply.json({"jsonrpc": "2.0", "id": message["id"], "error": error}, 400)
            return
        if method == "server/discover":
            result: Any = {**DISCOVER, "capabilities": {"tools": {}}}
        elif method == "tools/list":
            result = {"tools": self.tools()}
        elif method == "tools/call":
            region = (params.get("arguments") or {}).get("region")
            result = {"content": [{"type": "text", "text": f"found in {region}"}]}
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            await reply.json({"jsonrpc": "2.0", "id": message["id"], "error": error}, 404)
            return
        await reply.json({"jsonrpc": "2.0", "id": message["id"], "result": result})


async def test_a_server_that_insists_on_the_mcp_headers_gets_them_and_a_renamed_one_too() -> None:
    from cat_code.mcp.transports.http import StreamableHttpTransport

    server = HeaderCheckingPeer()
    async with server.peer:
        client = McpClient(StreamableHttpTransport(server.peer.url), name="strict")
        try:
            await client.connect(timeout=10)
            assert client.session.era == "modern"
            await client.list_tools()
            result = await client.call_tool("search", {"region": "eu-west"})
            assert result["content"][0]["text"] == "found in eu-west"
            assert server.refusals == 0

            # The server now wants the argument under another header: one -32020, the tool
            # list read again, and the call retried with the new header.
            server.header = "Zone"
            result = await client.call_tool("search", {"region": "us-east"})
            assert result["content"][0]["text"] == "found in us-east"
            assert server.refusals == 1
        finally:
            await client.close()
    calls = server.peer.requests("POST", "tools/call")
    assert calls[-1].headers["mcp-param-zone"] == "us-east"
    assert all("mcp-session-id" not in s.headers for s in server.peer.seen)


# -- from the review of the era work ----------------------------------------------------


async def test_over_http_the_probe_waits_as_long_as_the_request_may(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A sign-in in the browser can run inside the first request: no 3 s probe limit on HTTP.
    monkeypatch.setattr(detect, "PROBE_TIMEOUT_S", 0.01)

    async def slow_discover(params: dict[str, Any]) -> Any:
        await asyncio.sleep(0.2)
        return DISCOVER

    client = await connected(modern_fake({"server/discover": slow_discover}, http=True))
    assert client.session.era == "modern"
    await client.close()


async def test_a_modern_stdio_server_that_answers_the_probe_late_is_asked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(detect, "PROBE_TIMEOUT_S", 0.05)
    probes = 0

    async def discover(params: dict[str, Any]) -> Any:
        nonlocal probes
        probes += 1
        if probes == 1:
            await asyncio.Event().wait()  # starting slowly: the first probe goes unanswered
        return DISCOVER

    # ... and initialize is then refused with -32022, as a connection locked to modern does.
    client = await connected(modern_fake({"server/discover": discover}))
    assert client.session.era == "modern" and probes == 2
    await client.close()


async def test_a_typeless_url_refused_by_a_modern_server_is_not_taken_for_legacy_sse() -> None:
    from cat_code.mcp.session.handshake import HandshakeSession

    def refuse(params: dict[str, Any]) -> Any:
        error = {"code": -32022, "message": "modern only", "data": {"supported": [MODERN]}}
        raise HttpStatusError("HTTP 400 to initialize", 400, "modern only", error)

    fake = FakeTransport({"initialize": refuse})
    fake.kind = "http"
    switched: list[Any] = []
    session = HandshakeSession(fallback=lambda: switched.append(1) or FakeTransport())
    client = McpClient(fake, name="x")
    await fake.start(client._on_message, client._on_close)
    with pytest.raises(HttpStatusError):
        await session.open(client, {})
    assert switched == []  # era detection takes it from here, not the legacy fallback


async def test_remembered_verdicts_never_hold_a_command_line(tmp_path: Path) -> None:
    memory = EraMemory(tmp_path / "eras.json")
    fake = FakeTransport(name="secret-holder")
    fake.describe = lambda: "stdio: server --token s3cr3t"  # type: ignore[method-assign]
    client = McpClient(fake, name="x")
    await fake.start(client._on_message, client._on_close)
    await detect.open_session(client, {}, memory=memory)
    text = (tmp_path / "eras.json").read_text()
    assert "s3cr3t" not in text and "handshake" in text


async def test_a_server_without_subscriptions_listen_is_not_asked_again() -> None:
    attempts = 0

    def listen(params: dict[str, Any]) -> Any:
        nonlocal attempts
        attempts += 1
        raise RpcError(-32601, "Method not found")

    discover = {**DISCOVER, "capabilities": {"tools": {"listChanged": True}}}
    fake = modern_fake({"server/discover": lambda p: discover, "subscriptions/listen": listen})
    client = await connected(fake)
    listener = client.session._listener  # type: ignore[attr-defined]
    assert listener is not None
    async with asyncio.timeout(5):
        await asyncio.wait([listener])
    assert attempts == 1
    await client.close()


async def test_a_tool_that_loses_its_x_mcp_header_loses_the_header() -> None:
    with_header = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    }
    fake = modern_fake(
        {"tools/call": lambda p: {"content": []}},
        http=True,
        tools=[tool("search", inputSchema=with_header)],
    )
    client = await connected(fake)
    await client.list_tools()
    fake.tools = [tool("search", inputSchema={"type": "object"})]
    await client.list_tools(refresh=True)
    await client.call_tool("search", {"region": "eu"})
    assert "mcp-param-region" not in fake.contexts[-1].headers
    await client.close()
