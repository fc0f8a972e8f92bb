"""``includeTools`` / ``excludeTools``: the pure filter, and what a pool registers from servers."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EVERYTHING_SERVER, node_available

from cat_code.host.config.load import McpConfig, StdioServerConfig
from cat_code.host.mcp_tools import tool_filter
from cat_code.host.mcp_tools.tool_filter import filter_tools
from cat_code.host.servers.pool import McpPool
from cat_code.mcp.wire import ToolDefinition
from cat_code.tools.registry import ToolRegistry

OUTPUT_SERVER = Path(__file__).resolve().parents[2] / "servers" / "output_server.py"

needs_everything = pytest.mark.skipif(
    not node_available(),
    reason="node or node_modules/@modelcontextprotocol/server-everything is missing (npm ci)",
)


def tools(*names: str) -> list[ToolDefinition]:
    return [{"name": n, "inputSchema": {"type": "object"}} for n in names]


def kept(
    names: tuple[str, ...], include: list[str] | None, exclude: list[str]
) -> tuple[list[str], list[str]]:
    chosen, unmatched = filter_tools(tools(*names), include, exclude)
    return [t["name"] for t in chosen], unmatched


ALL = ("echo", "get-sum", "get-env", "Get-Upper", "toggle-logging", "read.file")


def test_without_patterns_every_tool_is_kept() -> None:
    assert kept(ALL, None, []) == (list(ALL), [])


def test_include_keeps_only_matching_names_and_globs_case_sensitively() -> None:
    assert kept(ALL, ["echo", "get-*"], []) == (["echo", "get-sum", "get-env"], [])
    assert kept(ALL, ["read.file", "get-s?m"], []) == (["get-sum", "read.file"], [])
    assert kept(ALL, ["[eG]*"], []) == (["echo", "Get-Upper"], [])


def test_exclude_wins_over_include() -> None:
    assert kept(ALL, ["get-*", "echo"], ["get-env", "echo"]) == (["get-sum"], [])
    assert kept(ALL, None, ["*-*"]) == (["echo", "read.file"], [])


def test_an_empty_include_list_registers_nothing() -> None:
    assert kept(ALL, [], []) == ([], [])


def test_patterns_that_match_no_tool_are_reported_once_each() -> None:
    assert kept(ALL, ["echo", "nope*", "nope*"], ["missing"]) == (["echo"], ["nope*", "missing"])


def test_a_pattern_matches_the_server_s_own_names_not_the_registered_ones() -> None:
    assert kept(ALL, ["mcp__*"], []) == ([], ["mcp__*"])


def entry(name: str, args: list[str], command: str = sys.executable, **fields: Any) -> Any:
    return StdioServerConfig(
        name=name, source=Path("test.json"), command=command, args=tuple(args),
        startup_timeout_s=30, request_timeout_s=20, **fields,
    )  # fmt: skip


async def test_a_pattern_matching_nothing_warns_once_naming_server_field_and_pattern(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(tool_filter, "_warned", set())
    server = entry(
        "out", [str(OUTPUT_SERVER)], include_tools=("text", "imgae"), exclude_tools=("nothing",)
    )
    with caplog.at_level(logging.WARNING, logger="cat_code.host.mcp_tools.tool_filter"):
        async with McpPool(McpConfig(servers=[server])) as pool:
            await pool.connect_all()
            await pool.servers[0].refresh_tools()  # publishes again: no second warning
            names = [t.name for t in pool.tools()]

    assert names == ["mcp__out__text"]
    messages = sorted(r.getMessage() for r in caplog.records)
    assert messages == [
        "MCP server 'out': excludeTools pattern 'nothing' matches none of its 5 tool(s)",
        "MCP server 'out': includeTools pattern 'imgae' matches none of its 5 tool(s)",
    ]


@needs_everything
async def test_only_the_filtered_tools_of_server_everything_are_registered_and_counted() -> None:
    everything = entry(
        "every",
        [str(EVERYTHING_SERVER), "stdio"],
        command="node",
        include_tools=("echo", "get-*"),
        exclude_tools=("get-env",),
    )
    registry = ToolRegistry()
    async with McpPool(McpConfig(servers=[everything])) as pool:
        await pool.connect_all()
        pool.register_into(registry)
        [server] = pool.servers
        offered = {t["name"] for t in server.wire_tools}
        registered = {t.tool_name for t in pool.tools()}
        status = pool.status()[0]
        excluded = pool.find_tool("mcp__every__get-env")
        echo = pool.find_tool("mcp__every__echo")
        assert echo is not None
        answer = await echo.execute({"message": "hi"})

    assert {"echo", "get-env", "get-sum", "get-tiny-image", "toggle-simulated-logging"} <= offered
    expected = {n for n in offered if n == "echo" or n.startswith("get-")} - {"get-env"}
    assert registered == expected and {"echo", "get-sum", "get-tiny-image"} <= registered
    assert status.tools == len(expected) < len(offered)
    assert sorted(registry.names()) == sorted(f"mcp__every__{n}" for n in expected)
    assert excluded is None
    assert answer.content == "Echo: hi"
