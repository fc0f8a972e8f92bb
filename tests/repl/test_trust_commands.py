"""``/mcp approve|reject SERVER...`` as the pure command function sees them (the REPL e2e
test in tests/e2e/test_trust.py performs them)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from cat_code.host.config.load import load_config
from cat_code.host.config.trust import TrustDecision, decide
from cat_code.host.servers.pool import McpPool
from cat_code.repl.commands import (
    CommandContext,
    DecideProject,
    Show,
    complete,
    handle_command,
    help_text,
)
from cat_code.tools.registry import ToolRegistry


@pytest.fixture
async def ctx(tmp_path: Path, cat_code_home: Path) -> AsyncIterator[CommandContext]:
    (cat_code_home / "mcp.json").write_text(json.dumps({"mcpServers": {"mine": {"command": "m"}}}))
    servers = {"docs": {"command": "d", "disabled": True}, "wiki": {"command": "w"}}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    decide(["docs"], TrustDecision.APPROVED, cwd=tmp_path)
    async with McpPool(load_config(cwd=tmp_path)) as pool:
        yield CommandContext(registry=ToolRegistry(), pool=pool, statuses=pool.status)


def shown(action: Any) -> str:
    assert isinstance(action, Show) and action.kind == "error", action
    return action.text


def test_approve_and_reject_name_project_servers_waiting_or_approved(
    ctx: CommandContext,
) -> None:
    assert handle_command("/mcp approve wiki", ctx) == DecideProject("approve", ("wiki",))
    assert handle_command("/mcp reject docs wiki docs", ctx) == DecideProject(
        "reject", ("docs", "wiki")
    )


def test_a_name_that_is_not_a_project_server_is_refused_with_the_ones_there_are(
    ctx: CommandContext,
) -> None:
    assert shown(handle_command("/mcp approve mine", ctx)) == (
        "no project server named 'mine' (project servers, from ./.mcp.json: docs, wiki)"
    )
    assert shown(handle_command("/mcp reject", ctx)) == (
        "usage: /mcp reject SERVER... (a server of ./.mcp.json)"
    )


def test_help_and_completion_know_approve_and_reject(ctx: CommandContext) -> None:
    assert "/mcp approve SERVER..." in help_text()
    assert complete("/mcp app", ctx) == ["approve"]
    assert complete("/mcp approve w", ctx) == ["wiki"]
    assert complete("/mcp reject docs ", ctx) == ["docs", "wiki"]
