"""`McpClient` over the in-memory `FakeTransport`: handshake, tools, timeouts, server messages."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from scripted.fakes import FakeTransport, Raw, RpcError, tool

from cat_code import __version__
from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import (
    ConnectError,
    HttpStatusError,
    McpError,
    ProcessExited,
    ProtocolError,
    RequestTimeout,
    TransportClosed,
)

#: These tests are about the handshake era: pinning it skips the era probe.
HANDSHAKE = "2025-11-25"


async def connected(fake: FakeTransport, **kwargs: Any) -> McpClient:
    kwargs.setdefault("protocol_version", HANDSHAKE)
    client = McpClient(fake, name="fake", **kwargs)
    await client.connect(timeout=5)
    return client


def echo(params: dict[str, Any]) -> dict[str, Any]:
    text = params["arguments"].get("text", "")
    return {"content": [{"type": "text", "text": text}]}


# -- handshake ---------------------------------------------------------------------------


async def test_the_handshake_offers_the_latest_version_and_no_capabilities() -> None:
    fake = FakeTransport()
    client = await connected(fake)

    assert fake.methods() == ["initialize"]
    params = fake.requests[0]["params"]
    assert params["protocolVersion"] == "2025-11-25"
    assert params["capabilities"] == {}
    assert params["clientInfo"]["name"] == "cat-code"
    assert params["clientInfo"]["version"] == __version__
    assert fake.sent == [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
    assert client.server_info == {"name": "fake", "version": "1.0"}
    assert client.server_capabilities == {"tools": {"listChanged": True}}


async def test_the_handshake_declares_elicitation_only_when_a_handler_is_given() -> None:
    async def handler(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "decline"}

    fake = FakeTransport()
    await connected(fake, elicitation_handler=handler)

    capabilities = fake.requests[0]["params"]["capabilities"]
    assert capabilities["elicitation"] == {"form": {}, "url": {}}


async def test_initialized_is_sent_only_after_the_initialize_answer() -> None:
    answered = asyncio.Event()

    async def slow_initialize(params: dict[str, Any]) -> dict[str, Any]:
        await answered.wait()
        return {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {}}

    fake = FakeTransport({"initialize": slow_initialize})
    client = McpClient(fake)
    connecting = asyncio.create_task(client.connect(timeout=5))
    await fake.wait_request("initialize")
    assert fake.sent == []
    answered.set()
    await connecting
    assert [m["method"] for m in fake.sent] == ["notifications/initialized"]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_every_handshake_era_version_is_accepted(version: str) -> None:
    fake = FakeTransport(version=version)
    client = await connected(fake)
    assert client.protocol_version == version


async def test_over_http_every_request_after_the_handshake_carries_session_and_version() -> None:
    fake = FakeTransport(sessions=True, version="2025-06-18")
    client = await connected(fake)
    await client.list_tools()

    assert fake.contexts[0].headers == {}  # initialize goes without
    assert fake.contexts[-1].headers == {
        "mcp-protocol-version": "2025-06-18",
        "mcp-session-id": "session-1",
    }
    await client.close()
    assert fake.released is not None  # the session is ended (HTTP DELETE) on close
    assert fake.released.headers["mcp-session-id"] == "session-1"


@pytest.mark.parametrize("version", ["2026-07-28", "2024-10-07", "1.0", None])
async def test_any_other_version_fails_the_server(version: str | None) -> None:
    fake = FakeTransport(version=version)
    client = McpClient(fake)
    with pytest.raises(ProtocolError, match=f"unsupported protocol version {version}"):
        await client.connect(timeout=5)
    assert fake.sent == []  # no notifications/initialized to a server we cannot talk to


async def test_an_initialize_result_that_is_not_an_object_fails_the_server() -> None:
    fake = FakeTransport({"initialize": lambda params: ["not", "an", "object"]})
    client = McpClient(fake)
    with pytest.raises(ProtocolError):
        await client.connect(timeout=5)


async def test_an_initialize_error_fails_the_server_with_the_servers_message() -> None:
    def refuse(params: dict[str, Any]) -> Any:
        raise RpcError(-32602, "Unsupported protocol version", {"supported": ["1999-01-01"]})

    client = McpClient(FakeTransport({"initialize": refuse}))
    with pytest.raises(McpError, match="Unsupported protocol version"):
        await client.connect(timeout=5)


async def test_no_answer_to_initialize_within_the_timeout_fails_the_server() -> None:
    fake = FakeTransport()
    fake.handlers["initialize"] = lambda params: fake.hang()
    client = McpClient(fake)
    with pytest.raises(RequestTimeout, match="initialize"):
        await client.connect(timeout=0.05)


async def test_a_timeout_inside_the_transport_is_raised_as_it_is_without_a_limit() -> None:
    client = McpClient(FakeTransport(start_error=TimeoutError("TLS handshake timed out")))
    with pytest.raises(TimeoutError, match="TLS handshake timed out"):
        await client.connect()  # no limit of our own


async def test_a_transport_that_cannot_start_fails_the_connect_with_its_reason() -> None:
    client = McpClient(FakeTransport(start_error=ConnectError("command not found: nope")))
    with pytest.raises(ConnectError, match="command not found: nope"):
        await client.connect(timeout=5)


# -- the connection's end ----------------------------------------------------------------


async def test_close_closes_the_transport_and_is_idempotent() -> None:
    fake = FakeTransport()
    client = await connected(fake)
    await client.close()
    assert fake.closed
    await client.close()
    assert fake.close_count >= 1


async def test_a_connection_that_ends_by_itself_is_told_to_the_owner_at_once_and_once() -> None:
    lost: list[str] = []
    fake = FakeTransport()
    client = await connected(fake, on_lost=lost.append)

    fake.lose("server process exited with code 1; last stderr: oops")
    fake.lose("again")

    assert lost == ["server process exited with code 1; last stderr: oops"]
    assert client.closed_reason == "server process exited with code 1; last stderr: oops"


async def test_an_end_after_our_own_close_is_not_news() -> None:
    lost: list[str] = []
    fake = FakeTransport()
    client = await connected(fake, on_lost=lost.append)
    await client.close()
    fake.lose("connection closed")
    assert lost == []


async def test_a_server_process_found_dead_under_a_request_fails_the_call() -> None:
    def died(params: dict[str, Any]) -> Any:
        raise ProcessExited("server process exited with code 1; last stderr: oops", 1)

    client = await connected(FakeTransport({"tools/call": died}))
    with pytest.raises(ProcessExited, match="oops"):
        await client.call_tool("x")


async def test_a_request_failed_by_our_own_close_leaves_the_client_closed() -> None:
    fake = FakeTransport()
    fake.handlers["tools/call"] = lambda params: fake.hang()
    client = await connected(fake)
    call = asyncio.create_task(client.call_tool("slow"))
    await fake.wait_request("tools/call")

    await client.close()

    with pytest.raises(TransportClosed):
        await call


async def test_a_request_after_close_fails_with_transport_closed() -> None:
    client = await connected(FakeTransport({"tools/call": echo}))
    await client.close()
    with pytest.raises(TransportClosed):
        await client.call_tool("echo", {"text": "hi"})


# -- tools/list --------------------------------------------------------------------------


async def test_tools_list_follows_next_cursor_through_every_page() -> None:
    pages = {
        None: {"tools": [tool("a"), tool("b")], "nextCursor": "page-2"},
        "page-2": {"tools": [tool("c")], "nextCursor": "page-3"},
        "page-3": {"tools": [tool("d")]},
    }
    fake = FakeTransport({"tools/list": lambda params: pages[params.get("cursor")]})
    client = await connected(fake)

    tools = await client.list_tools()

    assert [t["name"] for t in tools] == ["a", "b", "c", "d"]
    cursors = [m.get("params", {}).get("cursor") for m in fake.requests[1:]]
    assert cursors == [None, "page-2", "page-3"]


async def test_an_empty_string_cursor_is_a_cursor_not_the_end() -> None:
    pages = {
        None: {"tools": [tool("a")], "nextCursor": ""},
        "": {"tools": [tool("b")]},
    }
    fake = FakeTransport({"tools/list": lambda params: pages[params.get("cursor")]})
    client = await connected(fake)

    tools = await client.list_tools()

    assert [t["name"] for t in tools] == ["a", "b"]
    assert fake.methods().count("tools/list") == 2


async def test_a_server_that_never_stops_paging_fails_instead_of_hanging() -> None:
    fake = FakeTransport({"tools/list": lambda params: {"tools": [], "nextCursor": "again"}})
    client = await connected(fake)
    with pytest.raises(ProtocolError, match="did not end"):
        await client.list_tools()


async def test_tools_without_a_name_are_skipped() -> None:
    fake = FakeTransport(tools=[tool("good"), {"description": "no name"}, "junk", tool("")])
    client = await connected(fake)
    assert [t["name"] for t in await client.list_tools()] == ["good"]


async def test_a_tools_list_without_a_tools_array_is_a_protocol_error() -> None:
    client = await connected(FakeTransport({"tools/list": lambda params: {"items": []}}))
    with pytest.raises(ProtocolError):
        await client.list_tools()


async def test_the_tool_list_is_cached_after_the_first_full_listing() -> None:
    fake = FakeTransport(tools=[tool("a")])
    client = await connected(fake)
    first = await client.list_tools()
    requests_before = len(fake.requests)

    second = await client.list_tools()

    assert second == first
    assert len(fake.requests) == requests_before  # nothing sent


async def test_tools_list_changed_invalidates_the_cache_and_tells_the_owner() -> None:
    changes: list[None] = []
    fake = FakeTransport(tools=[tool("a")])
    client = await connected(fake, on_tools_changed=lambda: changes.append(None))
    await client.list_tools()

    fake.tools = [tool("a"), tool("b")]
    fake.push({"method": "notifications/tools/list_changed"})

    assert changes == [None]
    assert [t["name"] for t in await client.list_tools()] == ["a", "b"]
    assert fake.methods().count("tools/list") == 2


async def test_a_list_change_during_a_listing_is_not_lost() -> None:
    release = asyncio.Event()
    calls = 0
    fake = FakeTransport()

    async def listing(params: dict[str, Any]) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        if calls == 1:
            snapshot = [tool("old")]
            await release.wait()  # the list changes while this answer is on its way
            return {"tools": snapshot}
        return {"tools": [tool("new")]}

    fake.handlers["tools/list"] = listing
    client = await connected(fake)
    listing_task = asyncio.create_task(client.list_tools())
    await fake.wait_request("tools/list")
    fake.push({"method": "notifications/tools/list_changed"})
    release.set()
    await listing_task

    assert [t["name"] for t in await client.list_tools()] == ["new"]


# -- tools/call, errors ------------------------------------------------------------------


async def test_call_tool_sends_the_name_and_arguments_and_returns_the_result() -> None:
    fake = FakeTransport({"tools/call": echo})
    client = await connected(fake)

    result = await client.call_tool("echo", {"text": "hi"})

    assert result == {"content": [{"type": "text", "text": "hi"}]}
    assert fake.requests[-1]["params"] == {"name": "echo", "arguments": {"text": "hi"}}


async def test_a_json_rpc_error_becomes_mcp_error_with_code_message_and_data() -> None:
    def fail(params: dict[str, Any]) -> Any:
        raise RpcError(-32602, "Unknown tool: nope", {"tool": "nope"})

    client = await connected(FakeTransport({"tools/call": fail}))
    with pytest.raises(McpError) as info:
        await client.call_tool("nope")
    assert info.value.code == -32602
    assert info.value.message == "Unknown tool: nope"
    assert info.value.data == {"tool": "nope"}


@pytest.mark.parametrize(
    "response",
    [
        {"jsonrpc": "2.0"},  # neither result nor error
        {"jsonrpc": "2.0", "error": "just a string"},
    ],
)
async def test_a_malformed_response_is_a_protocol_error(response: dict[str, Any]) -> None:
    client = await connected(FakeTransport({"tools/call": lambda params: Raw(response)}))
    with pytest.raises(ProtocolError):
        await client.call_tool("x")


async def test_a_tools_call_result_that_is_not_an_object_is_a_protocol_error() -> None:
    client = await connected(FakeTransport({"tools/call": lambda params: "text"}))
    with pytest.raises(ProtocolError):
        await client.call_tool("x")


async def test_a_timed_out_request_is_cancelled_and_the_connection_stays_usable() -> None:
    fake = FakeTransport()
    fake.handlers["tools/call"] = lambda params: (
        fake.hang() if params["name"] == "slow" else echo(params)
    )
    client = await connected(fake, request_timeout=0.05)

    with pytest.raises(RequestTimeout, match="timed out"):
        await client.call_tool("slow")

    slow_id = fake.requests[-1]["id"]
    cancelled = await fake.wait_sent(lambda m: m.get("method") == "notifications/cancelled")
    assert cancelled["params"]["requestId"] == slow_id
    assert "id" not in cancelled
    assert await client.call_tool("echo", {"text": "still here"}, timeout=5) == echo(
        {"arguments": {"text": "still here"}}
    )


async def test_a_per_call_timeout_overrides_the_default() -> None:
    fake = FakeTransport()
    fake.handlers["tools/call"] = lambda params: fake.hang()
    client = await connected(fake, request_timeout=60)
    with pytest.raises(RequestTimeout, match=r"0\.05 s"):
        await client.call_tool("slow", timeout=0.05)


async def test_a_cancelled_call_tells_the_server() -> None:
    fake = FakeTransport()
    fake.handlers["tools/call"] = lambda params: fake.hang()
    client = await connected(fake)
    call = asyncio.create_task(client.call_tool("slow"))
    request = await fake.wait_request("tools/call")

    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call

    cancelled = await fake.wait_sent(lambda m: m.get("method") == "notifications/cancelled")
    assert cancelled["params"]["requestId"] == request["id"]


async def test_request_ids_are_never_reused() -> None:
    fake = FakeTransport({"tools/call": echo})
    client = await connected(fake)
    await asyncio.gather(*(client.call_tool("echo", {"text": str(i)}) for i in range(20)))
    ids = [m["id"] for m in fake.requests]
    assert len(ids) == len(set(ids))


# -- an expired session ------------------------------------------------------------------


def slow_initialize(fake: FakeTransport) -> asyncio.Event:
    """From now on initialize is answered only once the returned event is set."""
    release = asyncio.Event()
    initialize = fake.handlers["initialize"]

    async def slow(params: dict[str, Any]) -> Any:
        await release.wait()
        return initialize(params)

    fake.handlers["initialize"] = slow
    return release


async def test_a_new_session_that_is_never_answered_times_out_like_the_call() -> None:
    fake = FakeTransport({"tools/call": echo}, sessions=True)
    client = await connected(fake, request_timeout=0.05)
    fake.expire()
    fake.handlers["initialize"] = lambda params: fake.hang()

    async with asyncio.timeout(5):  # far beyond the request timeout: only a hang reaches it
        with pytest.raises(RequestTimeout, match="waiting for a new session"):
            await client.call_tool("echo", {"text": "x"})


async def test_calls_that_find_the_session_expired_together_start_one_new_session() -> None:
    fake = FakeTransport({"tools/call": echo}, sessions=True)
    client = await connected(fake)
    fake.expire()
    release = slow_initialize(fake)

    calls = [asyncio.create_task(client.call_tool("echo", {"text": str(i)})) for i in range(5)]
    await fake._wait(fake.requests, lambda m: fake.methods().count("initialize") == 2, 5)
    for _ in range(5):  # every call is under way before the new session is answered
        await asyncio.sleep(0)
    release.set()

    async with asyncio.timeout(5):
        results = await asyncio.gather(*calls)

    assert results == [echo({"arguments": {"text": str(i)}}) for i in range(5)]
    assert fake.methods().count("initialize") == 2  # the first connect, and one renewal


async def test_a_call_started_during_a_slow_renewal_waits_for_it_and_succeeds() -> None:
    fake = FakeTransport({"tools/call": echo}, sessions=True)
    client = await connected(fake)
    fake.expire()
    release = slow_initialize(fake)
    first = asyncio.create_task(client.call_tool("echo", {"text": "a"}))
    await fake._wait(fake.requests, lambda m: fake.methods().count("initialize") == 2, 5)

    second = asyncio.create_task(client.call_tool("echo", {"text": "b"}))
    listing = asyncio.create_task(client.list_tools(refresh=True))
    for _ in range(5):  # give them every chance to go out early, without the new session
        await asyncio.sleep(0)
    release.set()

    async with asyncio.timeout(5):
        assert await second == echo({"arguments": {"text": "b"}})
        assert await first == echo({"arguments": {"text": "a"}})
        await listing
    after_renewal = [
        c.headers.get("mcp-session-id")
        for m, c in zip(fake.requests, fake.contexts, strict=True)
        if m["method"] != "initialize"
    ][2:]  # after the first connect's tools/call that met the expired session
    assert after_renewal and set(after_renewal) == {"session-2"}
    assert fake.methods().count("initialize") == 2


async def test_a_400_that_names_the_session_is_an_expired_session_too() -> None:
    fake = FakeTransport({"tools/call": echo}, sessions=True)
    client = await connected(fake)
    calls = 0

    def refuse_once(params: dict[str, Any]) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise HttpStatusError("HTTP 400", 400, "Bad Request: No valid session ID provided")
        return echo(params)

    fake.handlers["tools/call"] = refuse_once
    assert await client.call_tool("echo", {"text": "x"}) == echo({"arguments": {"text": "x"}})
    assert fake.methods().count("initialize") == 2


async def test_a_400_that_does_not_name_the_session_is_an_error_not_a_renewal() -> None:
    def refuse(params: dict[str, Any]) -> Any:
        raise HttpStatusError("HTTP 400 Bad Request", 400, "invalid arguments")

    fake = FakeTransport({"tools/call": refuse}, sessions=True)
    client = await connected(fake)
    with pytest.raises(HttpStatusError, match="400"):
        await client.call_tool("echo", {"text": "x"})
    assert fake.methods().count("initialize") == 1


async def test_after_a_failed_renewal_the_next_call_renews_again() -> None:
    fake = FakeTransport({"tools/call": echo}, sessions=True)
    client = await connected(fake)
    fake.expire()
    initialize = fake.handlers["initialize"]

    def refuse(params: dict[str, Any]) -> Any:
        raise RpcError(-32603, "busy")

    fake.handlers["initialize"] = refuse
    with pytest.raises(McpError, match="busy"):
        await client.call_tool("echo", {"text": "x"})
    fake.handlers["initialize"] = initialize
    assert await client.call_tool("echo", {"text": "y"}) == echo({"arguments": {"text": "y"}})


async def test_a_call_joining_a_renewal_is_bounded_by_its_own_timeout_not_the_starters() -> None:
    fake = FakeTransport({"tools/call": echo}, sessions=True)
    client = await connected(fake)
    fake.expire()
    release = slow_initialize(fake)
    starter = asyncio.create_task(client.call_tool("echo", {"text": "a"}, timeout=0.05))
    await fake._wait(fake.requests, lambda m: fake.methods().count("initialize") == 2, 5)
    joiner = asyncio.create_task(client.call_tool("echo", {"text": "b"}, timeout=30))

    with pytest.raises(RequestTimeout, match=r"after 0\.05 s waiting for a new session"):
        await starter
    release.set()  # only now, after the starter gave up
    async with asyncio.timeout(5):
        assert await joiner == echo({"arguments": {"text": "b"}})


async def test_closing_during_a_renewal_fails_the_waiting_calls_as_closed_not_cancelled() -> None:
    fake = FakeTransport({"tools/call": echo}, sessions=True)
    client = await connected(fake)
    fake.expire()
    slow_initialize(fake)
    call = asyncio.create_task(client.call_tool("echo", {"text": "a"}))
    await fake._wait(fake.requests, lambda m: fake.methods().count("initialize") == 2, 5)

    await client.close()

    with pytest.raises(TransportClosed):
        await call
    assert not call.cancelled()


async def test_a_handshake_that_fails_after_the_session_was_given_still_ends_it() -> None:
    fake = FakeTransport(sessions=True, version="1999-01-01")
    client = McpClient(fake, protocol_version=HANDSHAKE)
    with pytest.raises(ProtocolError):
        await client.connect(timeout=5)
    await client.close()
    assert fake.released is not None
    assert fake.released.headers["mcp-session-id"] == "session-1"


# -- progress ----------------------------------------------------------------------------


async def test_progress_notifications_reach_the_callers_callback() -> None:
    fake = FakeTransport()
    seen: list[tuple[float, float | None, str | None]] = []

    def reporting(params: dict[str, Any]) -> dict[str, Any]:
        token = params["_meta"]["progressToken"]
        fake.push({"method": "notifications/progress", "params": {
            "progressToken": token, "progress": 1, "total": 2, "message": "half"}})  # fmt: skip
        fake.push({"method": "notifications/progress", "params": {
            "progressToken": token, "progress": 2.5}})  # fmt: skip
        fake.push({"method": "notifications/progress", "params": {
            "progressToken": "someone else's", "progress": 9}})  # fmt: skip
        return {"content": []}

    fake.handlers["tools/call"] = reporting
    client = await connected(fake)

    await client.call_tool("work", {"n": 1}, progress=lambda *a: seen.append(a))

    assert seen == [(1.0, 2.0, "half"), (2.5, None, None)]
    assert fake.requests[-1]["params"]["arguments"] == {"n": 1}


async def test_progress_after_the_call_finished_is_ignored() -> None:
    fake = FakeTransport({"tools/call": lambda params: {"content": []}})
    client = await connected(fake)
    seen: list[Any] = []
    await client.call_tool("work", progress=lambda *a: seen.append(a))
    token = fake.requests[-1]["params"]["_meta"]["progressToken"]

    late = {"progressToken": token, "progress": 1}
    fake.push({"method": "notifications/progress", "params": late})

    assert seen == []


async def test_a_call_without_a_progress_callback_asks_for_no_progress() -> None:
    fake = FakeTransport({"tools/call": echo})
    client = await connected(fake)
    await client.call_tool("echo", {"text": "x"})
    assert "_meta" not in fake.requests[-1]["params"]


# -- server-originated messages ----------------------------------------------------------


async def test_a_server_ping_is_answered_with_an_empty_result() -> None:
    fake = FakeTransport()
    await connected(fake)

    fake.push({"id": "srv-1", "method": "ping"})

    reply = await fake.wait_sent(lambda m: m.get("id") == "srv-1")
    assert reply == {"jsonrpc": "2.0", "id": "srv-1", "result": {}}


@pytest.mark.parametrize(
    "method", ["sampling/createMessage", "roots/list", "elicitation/create", "made/up"]
)
async def test_other_server_requests_are_refused_with_method_not_found(method: str) -> None:
    fake = FakeTransport()
    await connected(fake)

    fake.push({"id": 7, "method": method, "params": {}})

    reply = await fake.wait_sent(lambda m: m.get("id") == 7)
    assert reply["error"]["code"] == -32601
    assert "result" not in reply


async def test_elicitation_goes_to_the_handler_when_one_is_given() -> None:
    asked: list[dict[str, Any]] = []

    async def handler(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "cat"}}

    fake = FakeTransport()
    await connected(fake, elicitation_handler=handler)
    params = {"message": "Your name?", "requestedSchema": {"type": "object"}}

    fake.push({"id": 8, "method": "elicitation/create", "params": params})

    reply = await fake.wait_sent(lambda m: m.get("id") == 8)
    assert reply["result"] == {"action": "accept", "content": {"name": "cat"}}
    assert asked == [params]


async def test_a_failing_elicitation_handler_answers_with_an_error() -> None:
    async def handler(params: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("no terminal")

    fake = FakeTransport()
    await connected(fake, elicitation_handler=handler)

    fake.push({"id": 9, "method": "elicitation/create", "params": {"message": "?"}})

    reply = await fake.wait_sent(lambda m: m.get("id") == 9)
    assert reply["error"]["code"] == -32603
    assert "no terminal" in reply["error"]["message"]


async def test_a_server_ping_during_a_call_is_answered_and_the_call_completes() -> None:
    fake = FakeTransport()

    async def pinging(params: dict[str, Any]) -> dict[str, Any]:
        fake.push({"id": "p", "method": "ping"})
        await fake.wait_sent(lambda m: m.get("id") == "p")
        return {"content": [{"type": "text", "text": "done"}]}

    fake.handlers["tools/call"] = pinging
    client = await connected(fake)
    result = await client.call_tool("x")
    assert result["content"][0]["text"] == "done"


async def test_log_messages_from_the_server_go_to_the_log(caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeTransport()
    await connected(fake)
    caplog.set_level(logging.DEBUG, logger="cat_code.mcp.client")

    fake.push({"method": "notifications/message", "params": {
        "level": "warning", "logger": "db", "data": "disk almost full"}})  # fmt: skip
    fake.push({"method": "notifications/message", "params": {"level": "debug", "data": {"k": 1}}})

    records = [r for r in caplog.records if r.name == "cat_code.mcp.client"]
    records = [r for r in records if " ← " not in r.getMessage()]  # not the -v traffic lines
    warning = next(r for r in records if "disk almost full" in r.getMessage())
    assert warning.levelno == logging.WARNING
    assert "db" in warning.getMessage()
    assert any(r.levelno == logging.DEBUG and "{'k': 1}" in r.getMessage() for r in records)


async def test_unknown_notifications_are_ignored() -> None:
    fake = FakeTransport({"tools/call": echo})
    client = await connected(fake)
    fake.push({"method": "notifications/resources/list_changed"})
    fake.push({"method": "notifications/progress", "params": "not an object"})
    assert await client.call_tool("echo", {"text": "ok"}) == echo({"arguments": {"text": "ok"}})
    assert [m["method"] for m in fake.sent] == ["notifications/initialized"]


# -- -v: the traffic ---------------------------------------------------------------------


async def test_debug_logging_shows_every_message_each_way_and_cuts_long_ones(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="cat_code.mcp.client")
    fake = FakeTransport({"tools/call": lambda params: {"content": [], "long": "x" * 5000}})
    client = await connected(fake)
    await client.call_tool("echo", {"text": "hi"})
    fake.push({"id": "srv-1", "method": "ping"})
    await fake.wait_sent(lambda m: m.get("id") == "srv-1")

    lines = [r.getMessage() for r in caplog.records if r.name == "cat_code.mcp.client"]
    assert any(
        line.startswith('fake → {"jsonrpc":"2.0","id":1,"method":"initialize"') for line in lines
    )
    assert 'fake → {"jsonrpc":"2.0","method":"notifications/initialized"}' in lines
    call = next(line for line in lines if '"method":"tools/call"' in line)
    assert call.startswith("fake → ") and '"arguments":{"text":"hi"}' in call
    answer = next(line for line in lines if line.startswith("fake ← ") and '"long"' in line)
    assert answer.endswith(" characters)") and len(answer) < 2100
    assert 'fake ← {"jsonrpc":"2.0","id":"srv-1","method":"ping"}' in lines
    assert 'fake → {"jsonrpc":"2.0","id":"srv-1","result":{}}' in lines


async def test_without_debug_logging_no_message_is_serialised_for_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="cat_code.mcp.client")
    fake = FakeTransport({"tools/call": echo})
    client = await connected(fake)
    await client.call_tool("echo", {"text": "hi"})
    assert not [r for r in caplog.records if " → " in r.getMessage() or " ← " in r.getMessage()]
