"""Task-augmented tool calls against a real stdio server (``tests/servers/task_server.py``),
in both shapes: the 2026-07-28 tasks extension and 2025-11-25's experimental tasks."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from cat_code.mcp import tasks
from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import McpError, RequestTimeout
from cat_code.mcp.transports.stdio import StdioTransport

SERVER = Path(__file__).resolve().parents[1] / "servers" / "task_server.py"


@pytest.fixture(params=["extension", "experimental"])
async def connect(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    clients: list[McpClient] = []

    async def connect(**kwargs: Any) -> McpClient:
        transport = StdioTransport(sys.executable, [str(SERVER), request.param], name="tasks")
        client = McpClient(transport, name="tasks", **kwargs)
        clients.append(client)
        await client.connect(timeout=10)
        await client.list_tools()
        return client

    yield connect
    for client in clients:
        await client.close()


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def seen(client: McpClient) -> list[str]:
    return text(await client.call_tool("seen")).split(",")


async def test_a_task_is_polled_to_its_result_and_each_status_is_reported(connect: Any) -> None:
    client = await connect()
    reports: list[str | None] = []
    async with asyncio.timeout(10):
        result = await client.call_tool(
            "count_to", {"n": 3}, progress=lambda done, total, message: reports.append(message)
        )
    assert text(result) == "hello after 3"
    assert reports[:3] == ["task working", "task working: step 1 of 3", "task working: step 2 of 3"]
    assert (await seen(client)).count("tasks/get") == 3


async def test_a_task_outlives_the_request_timeout_each_poll_is_bounded_by_it(
    connect: Any,
) -> None:
    # Four polls, at least 250 ms apart (the floor), take longer than the 0.2 s any one
    # request may take.
    client = await connect(request_timeout=0.2)
    async with asyncio.timeout(20):
        result = await client.call_tool("count_to", {"n": 4})
    assert text(result) == "hello after 4"


async def test_a_status_notification_wakes_the_poll_before_the_servers_interval(
    connect: Any,
) -> None:
    client = await connect()
    async with asyncio.timeout(10):  # the server's interval is 60 s
        assert text(await client.call_tool("ping_back")) == "pinged back"


async def test_a_task_past_its_ttl_is_cancelled_and_the_call_fails_saying_so(
    connect: Any,
) -> None:
    client = await connect()
    with pytest.raises(RequestTimeout, match="did not finish within its TTL"):
        async with asyncio.timeout(10):
            await client.call_tool("forever", {"ttl_ms": 300})
    assert (await seen(client))[-2] == "tasks/cancel"  # before the `seen` call itself


async def test_a_task_past_the_tool_timeout_is_cancelled(connect: Any) -> None:
    client = await connect()
    with pytest.raises(RequestTimeout, match="toolTimeoutMs"):
        async with asyncio.timeout(10):
            await client.call_tool("forever", {}, timeout=0.3)
    assert "tasks/cancel" in await seen(client)


async def test_cancelling_the_call_sends_tasks_cancel(connect: Any) -> None:
    client = await connect()
    reports: list[str | None] = []
    call = asyncio.ensure_future(
        client.call_tool("forever", {}, progress=lambda *report: reports.append(report[2]))
    )
    async with asyncio.timeout(10):
        while "tasks/get" not in await seen(client):
            pass  # each look is a request: the poll has begun once the server saw one
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    async with asyncio.timeout(10):  # the cancel goes out in the background
        while "tasks/cancel" not in await seen(client):
            pass


async def test_a_task_asking_for_input_goes_through_the_elicitation_handler(
    connect: Any,
) -> None:
    asked: list[dict[str, Any]] = []

    async def handler(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"ok": True}}

    client = await connect(elicitation_handler=handler)
    async with asyncio.timeout(10):
        result = await client.call_tool("confirm")
    assert text(result) == 'confirmed accept {"ok": true}'
    assert [p["message"] for p in asked] == ["Go ahead?"]


async def test_a_failed_task_fails_the_call_with_the_servers_error(connect: Any) -> None:
    client = await connect()
    with pytest.raises(McpError, match="disk on fire") as raised:
        async with asyncio.timeout(10):
            await client.call_tool("broken")
    assert raised.value.code == -32603


async def test_finding_11_a_task_asking_for_no_pause_and_a_huge_ttl_is_polled_at_most_every_250_ms(
    connect: Any,
) -> None:
    client = await connect()
    limit = 1.0
    with pytest.raises(RequestTimeout, match="did not finish within toolTimeoutMs"):
        async with asyncio.timeout(10):
            await client.call_tool("forever", {"ttl_ms": 10**12, "poll_ms": 0}, timeout=limit)
    polls = (await seen(client)).count("tasks/get")
    # The floor (250 ms) between polls allows at most limit / floor + 1 in the limit; the
    # server's 0 ms made it 20 (50 ms apart), and 286 in 15 s with no limit.
    assert 1 <= polls <= limit / 0.25 + 1


async def test_finding_11_a_task_with_no_tool_timeout_is_given_up_at_the_default_limit(
    connect: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tasks, "DEFAULT_LIMIT_S", 0.6)
    client = await connect()
    with pytest.raises(
        RequestTimeout,
        match=r"within cat-code's default limit for tasks \(0.6 s\); it was cancelled",
    ):
        async with asyncio.timeout(10):
            await client.call_tool("forever", {"ttl_ms": 10**12, "poll_ms": 0})
    assert "tasks/cancel" in await seen(client)
