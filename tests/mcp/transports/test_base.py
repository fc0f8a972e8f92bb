"""`transport.dispatch`: the message routing shared by the stdio and legacy SSE readers."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from cat_code.mcp.transports.base import JsonObject, dispatch


async def test_a_response_resolves_the_waiter_for_its_id_and_server_messages_go_up() -> None:
    waiter: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
    seen: list[JsonObject] = []
    dispatch({"method": "ping", "id": 9}, {1: waiter}, seen.append, "s")
    dispatch({"id": 1, "result": {}}, {1: waiter}, seen.append, "s")
    assert seen == [{"method": "ping", "id": 9}]
    assert waiter.result() == {"id": 1, "result": {}}


@pytest.mark.parametrize("message", [[1, 2], "text", {"id": [1], "result": {}}, {"id": 7}])
async def test_what_is_not_ours_is_dropped_without_raising(message: Any) -> None:
    waiter: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
    dispatch(message, {1: waiter}, lambda m: None, "s")
    assert not waiter.done()


async def test_a_failing_handler_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    def broken(message: JsonObject) -> None:
        raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR):
        dispatch({"method": "notifications/x"}, {}, broken, "s")
    assert any("handler failed for notifications/x" in r.getMessage() for r in caplog.records)
