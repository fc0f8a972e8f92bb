"""Request timeouts share one timer per client (`deadlines.Deadlines`); each still acts alone.

These pin what replacing ``asyncio.timeout`` per request must keep: every request
times out at its own deadline whatever else is in flight, a shorter deadline after a
longer one is not delayed, and a cancellation or an outer timeout that is not ours is
never reported as our timeout.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scripted.fakes import FakeTransport

from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import RequestTimeout


async def connected(fake: FakeTransport, **kwargs: Any) -> McpClient:
    client = McpClient(fake, name="fake", **kwargs)
    await client.connect(timeout=5)
    return client


def slow_or_echo(fake: FakeTransport) -> Any:
    def handler(params: dict[str, Any]) -> Any:
        if params["name"] == "slow":
            return fake.hang()
        return {"content": [{"type": "text", "text": params["arguments"].get("text", "")}]}

    return handler


async def test_each_request_times_out_at_its_own_deadline_with_others_in_flight() -> None:
    fake = FakeTransport()
    fake.handlers["tools/call"] = slow_or_echo(fake)
    client = await connected(fake, request_timeout=60)
    ended: list[str] = []

    async def call(label: str, timeout: float) -> None:
        try:
            await client.call_tool("slow", timeout=timeout)
        except RequestTimeout:
            ended.append(label)

    # The long deadline is armed first; the shorter ones after it must not wait for it.
    # (Order only, no wall-clock window: a stalled loop fires due deadlines in order.)
    long = asyncio.ensure_future(call("long", 60))
    async with asyncio.timeout(10):
        await asyncio.gather(call("short", 0.05), call("middle", 0.25))

    assert ended == ["short", "middle"]
    assert not long.done()
    long.cancel()
    await asyncio.wait([long])


async def test_a_timeout_fails_only_its_own_request_among_many() -> None:
    fake = FakeTransport()
    fake.handlers["tools/call"] = slow_or_echo(fake)
    client = await connected(fake, request_timeout=0.1)

    async with asyncio.timeout(10):
        results = await asyncio.gather(
            client.call_tool("slow"),
            *(client.call_tool("echo", {"text": str(i)}) for i in range(50)),
            return_exceptions=True,
        )

    assert isinstance(results[0], RequestTimeout)
    assert [r["content"][0]["text"] for r in results[1:]] == [str(i) for i in range(50)]


async def test_an_outer_timeout_shorter_than_the_request_timeout_is_the_callers() -> None:
    fake = FakeTransport()
    fake.handlers["tools/call"] = slow_or_echo(fake)
    client = await connected(fake, request_timeout=60)

    with pytest.raises(TimeoutError) as caught:
        async with asyncio.timeout(0.05):
            await client.call_tool("slow")

    assert not isinstance(caught.value, RequestTimeout)
    cancelled = await fake.wait_sent(lambda m: m.get("method") == "notifications/cancelled")
    assert cancelled["params"]["reason"] == "cancelled by the user"


async def test_a_request_timeout_inside_a_longer_outer_timeout_is_ours() -> None:
    fake = FakeTransport()
    fake.handlers["tools/call"] = slow_or_echo(fake)
    client = await connected(fake, request_timeout=60)

    async with asyncio.timeout(5):
        with pytest.raises(RequestTimeout):
            await client.call_tool("slow", timeout=0.05)
        # The outer scope is untouched: the connection and the caller carry on.
        assert await client.call_tool("echo", {"text": "on"}) is not None


async def test_a_closed_client_leaves_no_timer_behind() -> None:
    fake = FakeTransport({"tools/call": lambda params: {"content": []}})
    client = await connected(fake, request_timeout=30)
    await client.call_tool("x")

    await client.close()

    assert client.requests.deadlines._timer is None


def progressing(fake: FakeTransport, notes: int, gap: float) -> Any:
    """A tools/call handler that reports progress ``notes`` times, ``gap`` apart, then answers
    (``notes=0``: reports progress for ever)."""

    async def handler(params: dict[str, Any]) -> Any:
        token = params["_meta"]["progressToken"]
        step = 0
        while notes == 0 or step < notes:
            step += 1
            fake.push(
                {"method": "notifications/progress",
                 "params": {"progressToken": token, "progress": step}}
            )  # fmt: skip
            await asyncio.sleep(gap)  # the server's pace, not synchronisation
        return {"content": [{"type": "text", "text": "done"}]}

    return handler


async def test_progress_from_the_server_restarts_the_request_timeout() -> None:
    fake = FakeTransport()
    # Ten notes 0.05 s apart: the call takes about 0.5 s against a 0.25 s timeout.
    fake.handlers["tools/call"] = progressing(fake, notes=10, gap=0.05)
    client = await connected(fake, request_timeout=0.25)
    seen: list[float] = []

    async with asyncio.timeout(10):
        result = await client.call_tool("work", progress=lambda p, t, m: seen.append(p))

    assert result["content"][0]["text"] == "done"
    assert seen == [float(i) for i in range(1, 11)]


async def test_progress_never_extends_a_request_past_ten_times_its_timeout() -> None:
    fake = FakeTransport()
    fake.handlers["tools/call"] = progressing(fake, notes=0, gap=0.01)
    client = await connected(fake, request_timeout=0.05)

    async with asyncio.timeout(10):
        with pytest.raises(RequestTimeout, match="no answer or progress"):
            await client.call_tool("work", progress=lambda p, t, m: None)
    cancelled = await fake.wait_sent(lambda m: m.get("method") == "notifications/cancelled")
    assert cancelled["params"]["requestId"] == fake.requests[-1]["id"]


async def test_a_progress_note_with_an_unhashable_token_is_ignored() -> None:
    fake = FakeTransport()
    await connected(fake)
    fake.push({"method": "notifications/progress", "params": {"progressToken": [1], "progress": 1}})
