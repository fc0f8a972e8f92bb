"""The pool and project servers awaiting approval: status rows only, started once approved."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from cat_code.host.config.load import load_config
from cat_code.host.config.trust import TrustDecision, decide
from cat_code.host.servers.pool import McpPool, ServerState

ECHO_SERVER = Path(__file__).resolve().parents[3] / "examples" / "echo_server.py"


def mark_config(folder: Path) -> Path:
    """A project file whose one server leaves a mark file when it starts, then serves echo."""
    mark = folder / "MARK"
    command = f"touch '{mark}'; exec '{sys.executable}' '{ECHO_SERVER}'"
    (folder / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"docs": {"command": "sh", "args": ["-c", command]}}})
    )
    return mark


async def test_a_waiting_server_is_a_status_row_that_never_starts(
    tmp_path: Path, cat_code_home: Path
) -> None:
    mark = mark_config(tmp_path)
    async with McpPool(load_config(cwd=tmp_path)) as pool:
        async with asyncio.timeout(20):
            await pool.connect_all()
        [status] = pool.status()
        assert status.state is ServerState.NEEDS_APPROVAL
        assert status.error == "run: cat-code mcp approve docs"
        assert status.to_json()["state"] == "NEEDS_APPROVAL"
        assert not pool.all_connected
        assert pool.servers == []
    assert not mark.exists()


async def test_a_rejected_server_counts_as_disabled(tmp_path: Path, cat_code_home: Path) -> None:
    mark = mark_config(tmp_path)
    decide(["docs"], TrustDecision.REJECTED, cwd=tmp_path)
    async with McpPool(load_config(cwd=tmp_path)) as pool:
        async with asyncio.timeout(20):
            await pool.connect_all()
        assert [s.state for s in pool.status()] == [ServerState.REJECTED]
        assert pool.all_connected
    assert not mark.exists()


async def test_approving_then_reloading_starts_the_server_without_a_restart(
    tmp_path: Path, cat_code_home: Path
) -> None:
    mark = mark_config(tmp_path)
    async with McpPool(load_config(cwd=tmp_path)) as pool:
        async with asyncio.timeout(20):
            await pool.connect_all()
            decide(["docs"], TrustDecision.APPROVED, cwd=tmp_path)
            plan = await pool.reload(load_config(cwd=tmp_path))
        assert plan.added == ["docs"]
        [status] = pool.status()
        assert status.state is ServerState.CONNECTED and status.tools > 0
        assert mark.exists()
        assert pool.all_connected
