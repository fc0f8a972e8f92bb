"""``toolTimeoutMs``: a server's tool calls are bounded by it instead of ``requestTimeoutMs``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cat_code.host.config.load import load_config
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.server import ServerState

OUTPUT_SERVER = Path(__file__).resolve().parents[2] / "servers" / "output_server.py"


def config_with(tmp_path: Path, **fields: Any) -> Path:
    """A real ``mcp.json`` with one entry running the output test server."""
    path = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": [str(OUTPUT_SERVER)], **fields}
    path.write_text(json.dumps({"mcpServers": {"slow": server}}))
    return path


async def test_tool_timeout_ms_bounds_a_tool_call_and_the_error_names_the_limit(
    tmp_path: Path,
) -> None:
    config = load_config([config_with(tmp_path, requestTimeoutMs=30_000, toolTimeoutMs=500)])
    async with McpPool(config) as pool:
        await pool.connect_all()
        tool = pool.find_tool("mcp__slow__sleep")
        assert tool is not None
        late = await tool.execute({"seconds": 60})
        quick = await tool.execute({"seconds": 0})
        state = pool.servers[0].state

    assert late.is_error
    assert late.content.startswith(
        "Error: MCP tool 'mcp__slow__sleep' failed: tools/call timed out"
    )
    assert "after 0.5 s" in late.content and "toolTimeoutMs" in late.content
    # The connection outlives the timeout: the next call is answered.
    assert not quick.is_error and quick.content == "slept 0 s"
    assert state is ServerState.CONNECTED


@pytest.mark.slow
async def test_a_tool_timeout_longer_than_the_request_timeout_lets_a_slow_tool_finish(
    tmp_path: Path,
) -> None:
    short = load_config([config_with(tmp_path, requestTimeoutMs=2000)])
    longer = load_config([config_with(tmp_path, requestTimeoutMs=2000, toolTimeoutMs=30_000)])
    results = []
    for config in (short, longer):
        async with McpPool(config) as pool:
            await pool.connect_all()
            tool = pool.find_tool("mcp__slow__sleep")
            assert tool is not None
            results.append(await tool.execute({"seconds": 3}))

    cut, finished = results
    assert cut.is_error and "timed out after 2 s" in cut.content
    assert not finished.is_error and finished.content == "slept 3 s"
