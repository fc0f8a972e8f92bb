"""Lifecycle workloads: how fast a crashed stdio server is usable again.

``stdio.restart`` times one repetition from the SIGKILL of a connected server to the
answer of the next call on it. cat-code's pool notices the exit by itself and starts
the server again inside that call (its self-healing); the floor does by hand the least
any client must: wait for the exit, spawn, initialize, list the tools, call. The SDK has
no restart of its own, so it has no row. Each repetition uses a new pool, so the
restart budget (3 in 60 s) never gets in the way, and every answer is checked after the
clock stops.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from pathlib import Path

import floor
from workloads import SMALL_TEXT, STDIO_SERVER, Sizes, _check, _clock

# The pool warns on every crash and restart; here they are the workload, not news.
logging.getLogger("cat_code.host.servers.pool").setLevel(logging.ERROR)

#: How often the pool's view of a killed server is looked at (far below a restart's cost).
_NOTICE_POLL_S = 0.001


async def stdio_restart(impl: str, sizes: Sizes) -> dict[str, float]:
    """SIGKILL a connected server, then one call: the time until it answers."""
    if impl == "cat_code":
        return await _cat_code_restart()
    if impl == "floor":
        return await _floor_restart()
    return {}


async def _cat_code_restart() -> dict[str, float]:
    from cat_code.host.config.load import McpConfig, StdioServerConfig
    from cat_code.host.servers.pool import McpPool
    from cat_code.host.servers.server import ServerState
    from cat_code.mcp.transports.stdio import StdioTransport

    command, *args = STDIO_SERVER
    entry = StdioServerConfig(name="bench", source=Path("bench"), command=command, args=tuple(args))
    pool = McpPool(McpConfig(servers=[entry], order=["bench"]))
    try:
        await pool.connect_all()
        (server,) = pool.servers
        tool = pool.find_tool("mcp__bench__echo")
        client = server.client
        _check(tool is not None and client is not None, "cat-code did not connect")
        assert tool is not None and client is not None
        transport = client.transport
        assert isinstance(transport, StdioTransport) and transport.pid is not None
        start = _clock()
        os.kill(transport.pid, signal.SIGKILL)
        while server.state is not ServerState.FAILED:
            await asyncio.sleep(_NOTICE_POLL_S)
        noticed = time.perf_counter()
        result = await tool.execute({"text": SMALL_TEXT})
        answered = time.perf_counter()
        _check(not result.is_error and result.content == SMALL_TEXT, f"wrong answer: {result}")
        _check(server.restarts == 1, f"{server.restarts} restarts, not 1")
    finally:
        await pool.close_all()
    return {"stdio.restart": answered - start, "stdio.restart.noticed": noticed - start}


async def _floor_restart() -> dict[str, float]:
    command, *args = STDIO_SERVER
    crashed, _ = await floor.FloorStdio.connect(command, args)
    start = _clock()
    crashed.process.kill()
    await crashed.process.wait()
    noticed = time.perf_counter()
    client, _ = await floor.FloorStdio.connect(command, args)
    try:
        result = await client.call_tool("echo", {"text": SMALL_TEXT})
        answered = time.perf_counter()
    finally:
        await client.close()
        await crashed.close()
    _check(result["content"][0]["text"] == SMALL_TEXT, f"wrong answer: {result}")
    return {"stdio.restart": answered - start, "stdio.restart.noticed": noticed - start}
