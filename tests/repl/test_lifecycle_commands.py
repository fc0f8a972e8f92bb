"""``/mcp reload``, ``/mcp restart|disable|enable SERVER``: what each line means, and the
mistakes each names, as the pure command function sees them (the REPL e2e test performs them)."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from cat_code.host.config.load import load_config
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.server import ServerState
from cat_code.repl.commands import (
    CommandContext,
    ManageServer,
    ReloadConfig,
    Show,
    complete,
    handle_command,
    help_text,
)
from cat_code.tools.registry import ToolRegistry

ECHO_SERVER = Path(__file__).resolve().parents[2] / "examples" / "echo_server.py"


@pytest.fixture
async def ctx(tmp_path: Path) -> AsyncIterator[CommandContext]:
    path = tmp_path / "mcp.json"
    echo = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    servers = {"echo": echo, "off": {**echo, "disabled": True}, "broken": {"args": ["x"]}}
    path.write_text(json.dumps({"mcpServers": servers}))
    async with McpPool(load_config([path])) as pool:
        await pool.connect_all()
        yield CommandContext(registry=ToolRegistry(), pool=pool, statuses=pool.status)


def shown(action: Any, kind: str = "error") -> str:
    assert isinstance(action, Show), action
    assert action.kind == kind, action
    return action.text


def test_reload_restart_disable_and_enable_name_their_server(ctx: CommandContext) -> None:
    assert handle_command("/mcp reload", ctx) == ReloadConfig()
    assert handle_command("/mcp restart echo", ctx) == ManageServer("restart", "echo")
    assert handle_command("/mcp disable echo", ctx) == ManageServer("disable", "echo")
    assert handle_command("/mcp enable off", ctx) == ManageServer("enable", "off")
    assert handle_command("  /mcp   restart   echo  ", ctx) == ManageServer("restart", "echo")


def test_each_mistake_says_what_is_wrong_and_what_to_type(ctx: CommandContext) -> None:
    assert shown(handle_command("/mcp reload now", ctx)) == (
        "usage: /mcp reload (it re-reads every config file)"
    )
    for verb in ("restart", "disable", "enable"):
        assert shown(handle_command(f"/mcp {verb}", ctx)) == f"usage: /mcp {verb} SERVER"
        assert shown(handle_command(f"/mcp {verb} nope", ctx)) == (
            "no MCP server named 'nope' (configured: echo, off, broken)"
        )
        broken = shown(handle_command(f"/mcp {verb} broken", ctx))
        assert broken.startswith("MCP server 'broken' cannot be used: ")
        assert broken.endswith(" — fix its entry, then /mcp reload")
    assert shown(handle_command("/mcp restart off", ctx)) == (
        "MCP server 'off' is disabled — /mcp enable off starts it"
    )
    assert shown(handle_command("/mcp disable off", ctx), "info") == (
        "MCP server 'off' is already disabled"
    )
    assert shown(handle_command("/mcp enable echo", ctx), "info") == (
        "MCP server 'echo' is already enabled (CONNECTED)"
    )
    unknown = shown(handle_command("/mcp relaod", ctx))
    assert (
        "/mcp reload, /mcp restart, /mcp disable, /mcp enable, /mcp approve or /mcp reject"
        in unknown
    )


def test_without_a_pool_the_commands_say_no_servers_are_configured() -> None:
    ctx = CommandContext(registry=ToolRegistry())
    assert shown(handle_command("/mcp restart x", ctx)) == "no MCP servers are configured"


def test_the_subcommands_and_server_names_complete(ctx: CommandContext) -> None:
    assert complete("/mcp rel", ctx) == ["reload"]
    assert complete("/mcp rest", ctx) == ["restart"]
    assert complete("/mcp d", ctx) == ["disable"]
    assert complete("/mcp e", ctx) == ["enable"]
    assert complete("/mcp restart e", ctx) == ["echo"]
    assert complete("/mcp enable ", ctx) == ["echo", "off"]
    assert complete("/mcp reload ", ctx) == []


def test_help_lists_the_four_commands() -> None:
    text = help_text()
    for line in (
        "/mcp reload ",
        "/mcp restart SERVER",
        "/mcp disable SERVER",
        "/mcp enable SERVER",
    ):
        assert line in text
    assert "this session only" in text


def test_mcp_names_the_command_that_starts_a_server_that_gave_up(ctx: CommandContext) -> None:
    reason = "server process exited with code 3 — not restarted again after 3 restart(s) in 60 s"
    [echo] = [s for s in ctx.statuses() if s.name == "echo"]
    gave_up = dataclasses.replace(
        echo, state=ServerState.FAILED, error=reason, restarts=3, gave_up=True
    )
    view = dataclasses.replace(ctx, statuses=lambda: [gave_up])

    [_, line] = shown(handle_command("/mcp", view), "info").splitlines()

    assert line.endswith(f"— {reason}  restarted 3× — /mcp restart echo starts it")
