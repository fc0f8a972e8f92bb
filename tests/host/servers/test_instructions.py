"""Server instructions reach the system prompt in both eras and follow a server that
connects again mid-session (the prompt is rebuilt from the pool for every model call)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from cat_code.agent.loop import Agent
from cat_code.agent.providers.base import (
    AssistantMessage,
    Message,
    ModelResponse,
    ToolSpec,
    Usage,
)
from cat_code.agent.system_prompt import build_system_prompt
from cat_code.host.config.load import load_config
from cat_code.host.servers.pool import McpPool
from cat_code.tools.registry import ToolRegistry

SERVERS = Path(__file__).resolve().parents[2] / "servers"
MODERN = "2026-07-28"


class RecordingProvider:
    """Answers every call with "ok" and keeps the system prompt it was given."""

    name = "recording:test"

    def __init__(self) -> None:
        self.systems: list[str] = []

    async def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        on_text: Any = None,
    ) -> ModelResponse:
        self.systems.append(system)
        return ModelResponse(AssistantMessage(text="ok"), "end_turn", Usage())

    async def prepare(self) -> None:
        pass

    async def close(self) -> None:
        pass


def pool_for(tmp_path: Path, notes: Path, **entry: Any) -> McpPool:
    config = tmp_path / "mcp.json"
    server = {
        "command": sys.executable,
        "args": [str(SERVERS / "instructions_server.py"), str(notes)],
        **entry,
    }
    config.write_text(json.dumps({"mcpServers": {"docs": server}}))
    return McpPool(load_config([config]))


@pytest.mark.parametrize(
    ("entry", "era"),
    [
        ({}, "modern"),
        ({"protocolVersion": MODERN}, "modern"),
        ({"protocolVersion": "2025-11-25"}, "handshake"),
    ],
    ids=["probed-2026", "pinned-2026", "handshake"],
)
async def test_an_sdk_servers_instructions_reach_the_system_prompt(
    tmp_path: Path, entry: dict[str, Any], era: str
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Search the docs before answering.")
    async with pool_for(tmp_path, notes, **entry) as pool:
        await pool.connect_all()
        [status] = pool.status()
        assert (status.state, status.era) == ("CONNECTED", era), status.error
        prompt = build_system_prompt(Path.cwd(), pool.instructions())
        assert "Instructions from MCP server 'docs':\nSearch the docs before answering." in prompt


async def test_a_server_that_connects_again_mid_session_brings_its_new_instructions(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("First version.")
    provider = RecordingProvider()
    async with pool_for(tmp_path, notes) as pool:
        await pool.connect_all()
        registry = ToolRegistry([])
        pool.register_into(registry)
        agent = Agent(
            provider,  # type: ignore[arg-type]
            registry,
            system_prompt=lambda: build_system_prompt(Path.cwd(), pool.instructions()),
        )
        assert (await agent.run("hello")).status == "done"
        notes.write_text("Second version.")
        await pool.reconnect("docs")
        assert (await agent.run("again")).status == "done"
    first, second = provider.systems
    assert "First version." in first and "Second version." not in first
    assert "Second version." in second and "First version." not in second
