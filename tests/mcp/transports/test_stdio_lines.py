"""How `StdioTransport` cuts stdout into messages, whatever the pipe's chunking.

The reader decodes all complete lines of a chunk at once and parses each where it is;
these tests pin that it still behaves line by line: a message split anywhere (inside a
UTF-8 sequence too) arrives whole, a line that is not UTF-8 costs only itself, CRLF and
spaces around a message are fine, and a line holding more than one value is refused.
The child below writes scripted bytes, with pauses so each piece is its own read.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from cat_code.mcp.transports.base import ignore_close
from cat_code.mcp.transports.stdio import StdioTransport

CHILD = r"""
import json, os, sys, time

def out(*pieces):
    for piece in pieces:
        os.write(1, piece)
        time.sleep(0.03)

def answer(rid, result):
    message = {"jsonrpc": "2.0", "id": rid, "result": result}
    return json.dumps(message, ensure_ascii=False).encode()

for line in sys.stdin.buffer:
    request = json.loads(line)
    rid, method = request["id"], request["method"]
    if method == "split":
        whole = answer(rid, {"text": "caf\u00e9"}) + b"\n"  # \u00e9 is two bytes in UTF-8
        cut = whole.index(b"\xc3") + 1
        out(whole[:9], whole[9:cut], whole[cut:])
    elif method == "mixed":
        out(
            b"\xff\xfe not UTF-8\n"
            + b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"hi"}}\n'
            + answer(rid, {"n": 1}) + b"\r\n"
        )
    elif method == "spaced":
        out(b"  " + answer(rid, {"n": 2}) + b"  \n\n")
    elif method == "two_values":
        out(answer(rid, {"n": 3}) + b' {"x": 1}\n', answer(rid, {"n": 4}) + b"\n")
    elif method == "big":
        whole = answer(rid, {"text": "x" * 3_000_000}) + b"\n"
        out(*(whole[i : i + 65536] for i in range(0, len(whole), 65536)))
"""


@pytest.fixture
async def transport() -> AsyncIterator[tuple[StdioTransport, list[dict[str, Any]]]]:
    received: list[dict[str, Any]] = []
    child = StdioTransport(sys.executable, ["-c", CHILD], name="lines")
    await child.start(received.append, ignore_close)
    try:
        yield child, received
    finally:
        await child.close()


async def ask(child: StdioTransport, request_id: int, method: str) -> Any:
    async with asyncio.timeout(10):
        response = await child.request({"jsonrpc": "2.0", "id": request_id, "method": method})
    return response["result"]


async def test_a_message_cut_anywhere_even_inside_a_utf8_sequence_arrives_whole(
    transport: tuple[StdioTransport, list[dict[str, Any]]],
) -> None:
    child, _ = transport
    assert await ask(child, 1, "split") == {"text": "café"}


async def test_a_line_that_is_not_utf8_costs_only_itself(
    transport: tuple[StdioTransport, list[dict[str, Any]]], caplog: pytest.LogCaptureFixture
) -> None:
    child, received = transport
    caplog.set_level(logging.WARNING, logger="cat_code.mcp.transports.stdio_lines")

    assert await ask(child, 1, "mixed") == {"n": 1}  # its line ended in CRLF

    assert [m["method"] for m in received] == ["notifications/message"]
    assert any("not JSON-RPC" in r.getMessage() for r in caplog.records)


async def test_spaces_around_a_message_and_empty_lines_are_fine(
    transport: tuple[StdioTransport, list[dict[str, Any]]],
) -> None:
    child, _ = transport
    assert await ask(child, 1, "spaced") == {"n": 2}


async def test_a_line_with_two_values_is_refused_whole(
    transport: tuple[StdioTransport, list[dict[str, Any]]], caplog: pytest.LogCaptureFixture
) -> None:
    child, _ = transport
    caplog.set_level(logging.WARNING, logger="cat_code.mcp.transports.stdio_lines")

    # The first line (answer + extra value) is skipped; the clean answer after it counts.
    assert await ask(child, 1, "two_values") == {"n": 4}
    assert any("not JSON-RPC" in r.getMessage() for r in caplog.records)


async def test_a_line_of_megabytes_in_many_reads_arrives_whole_and_leaves_no_buffer(
    transport: tuple[StdioTransport, list[dict[str, Any]]],
) -> None:
    child, _ = transport

    assert len((await ask(child, 1, "big"))["text"]) == 3_000_000
    assert await ask(child, 2, "spaced") == {"n": 2}
    assert not child._stdout.buffer
