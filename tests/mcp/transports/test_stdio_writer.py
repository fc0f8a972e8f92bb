"""`StdinWriter`: the first message of a loop iteration at once, the rest batched after it.

A real pipe (read back from its other end) stands for the child's stdin.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator

import pytest

from cat_code.mcp.transports.stdio_writer import WRITE_BATCH_BYTES, StdinWriter


class Pipe:
    """A pipe whose write end is an asyncio write transport; ``read`` drains the other end."""

    def __init__(self, transport: asyncio.WriteTransport, read_fd: int) -> None:
        self.transport = transport
        self.read_fd = read_fd

    def read(self) -> bytes:
        chunks = []
        while True:
            try:
                chunks.append(os.read(self.read_fd, 1 << 20))
            except BlockingIOError:
                return b"".join(chunks)


@pytest.fixture
async def pipe() -> AsyncIterator[Pipe]:
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(write_fd, "wb"))
    assert isinstance(transport, asyncio.WriteTransport)
    try:
        yield Pipe(transport, read_fd)
    finally:
        transport.close()
        os.close(read_fd)


async def test_the_first_message_goes_out_at_once_and_the_rest_after_the_iteration(
    pipe: Pipe,
) -> None:
    writer = StdinWriter(pipe.transport, asyncio.get_running_loop())
    for n in range(3):
        writer.write({"id": n})

    assert pipe.read() == b'{"id":0}\n'  # the rest waits for the end of this iteration
    await asyncio.sleep(0)  # one loop iteration: the scheduled flush runs
    assert pipe.read() == b'{"id":1}\n{"id":2}\n'


async def test_a_batch_is_written_as_soon_as_it_is_big_enough(pipe: Pipe) -> None:
    writer = StdinWriter(pipe.transport, asyncio.get_running_loop())
    writer.write({"id": 0})
    pipe.read()
    text = "x" * (WRITE_BATCH_BYTES // 4)
    for n in range(1, 5):
        writer.write({"id": n, "text": text})

    lines = pipe.read().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [1, 2, 3, 4]


async def test_close_writes_what_is_batched_and_then_closes_the_pipe(pipe: Pipe) -> None:
    writer = StdinWriter(pipe.transport, asyncio.get_running_loop())
    writer.write({"id": 0})
    writer.write({"id": 1})
    writer.close()

    assert pipe.read() == b'{"id":0}\n{"id":1}\n'
    assert pipe.transport.is_closing()


async def test_a_paused_pipe_gives_writers_an_event_that_resuming_sets(pipe: Pipe) -> None:
    writer = StdinWriter(pipe.transport, asyncio.get_running_loop())
    assert writer.can_write is None

    writer.pause()
    event = writer.can_write
    assert event is not None and not event.is_set()
    writer.resume()

    assert event.is_set() and writer.can_write is None
