"""`prestart` and `Prestarted` with real server processes: spawned early, adopted once, and
never outliving the command, taken or not."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from scripted.processes import alive
from scripted.procs import kill_quietly, read_pid, server_command

from cat_code.host.config.load import McpConfig, StdioServerConfig
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.prestart import Prestarted, prestart
from cat_code.host.servers.server import ServerState
from cat_code.mcp.transports.stdio import StdioTransport

SOURCE = Path("test-mcp.json")


def server(name: str, *flags: str, **fields: Any) -> StdioServerConfig:
    """An entry running the misbehaving test server with ``flags``."""
    command, args = server_command(*flags)
    return StdioServerConfig(
        name=name, source=SOURCE, command=command, args=tuple(args),
        startup_timeout_s=20, request_timeout_s=20, **fields,
    )  # fmt: skip


def pid_of(pool: McpPool, name: str) -> int | None:
    found = pool.server(name)
    assert found is not None and found.client is not None
    transport = found.client.transport
    assert isinstance(transport, StdioTransport)
    return transport.pid


async def test_the_pool_connects_each_server_over_the_child_spawned_for_it() -> None:
    config = McpConfig(servers=[server("a"), server("b")])
    prestarted = Prestarted()
    await prestart(config, prestarted)
    early = {name: t.pid for name, t in prestarted.waiting.items()}
    assert set(early) == {"a", "b"} and all(early.values())
    pool = McpPool(config, prestarted=prestarted)
    try:
        async with asyncio.timeout(30):
            await pool.connect_all()

        assert [s.state for s in pool.servers] == [ServerState.CONNECTED] * 2
        assert {name: pid_of(pool, name) for name in early} == early
        assert prestarted.waiting == {}  # each taken once
    finally:
        async with asyncio.timeout(30):
            await prestarted.close_all()
    assert not any(alive(pid) for pid in early.values() if pid is not None)


async def test_closing_what_was_spawned_before_any_pool_ends_every_child(tmp_path: Path) -> None:
    # A usage error or a signal between the spawn and the pool: the front end closes it.
    pid_file = tmp_path / "grandchild.pid"
    config = McpConfig(
        servers=[server("stubborn", "--ignore-eof", "--grandchild-pid-file", str(pid_file))]
    )
    prestarted = Prestarted()
    await prestart(config, prestarted)
    [transport] = prestarted.waiting.values()
    grandchild = await read_pid(pid_file)
    assert transport.pid is not None and alive(transport.pid)
    try:
        async with asyncio.timeout(30):
            await prestarted.close_all()

        assert not alive(transport.pid) and not alive(grandchild)
    finally:
        kill_quietly(transport.pid, grandchild)


async def test_a_changed_entry_gets_a_fresh_child_and_the_early_one_is_closed() -> None:
    entry = server("s")
    prestarted = Prestarted()
    await prestart(McpConfig(servers=[entry]), prestarted)
    [early] = prestarted.waiting.values()
    changed = dataclasses.replace(entry, env={"CHANGED": "1"})
    pool = McpPool(McpConfig(servers=[changed]), prestarted=prestarted)
    try:
        async with asyncio.timeout(30):
            await pool.connect_all()

        assert pool.servers[0].state is ServerState.CONNECTED
        assert pid_of(pool, "s") != early.pid
    finally:
        async with asyncio.timeout(30):
            await prestarted.close_all()
    assert early.pid is not None and not alive(early.pid)
    assert prestarted.waiting == {}


async def test_disabled_entries_and_commands_that_cannot_start_are_not_spawned() -> None:
    config = McpConfig(
        servers=[
            server("off", disabled=True),
            StdioServerConfig(
                name="missing", source=SOURCE, command="cat-code-no-such-command-xyz"
            ),
        ]
    )
    prestarted = Prestarted()
    await prestart(config, prestarted)
    assert prestarted.waiting == {}
    pool = McpPool(config, prestarted=prestarted)
    try:
        async with asyncio.timeout(30):
            await pool.connect_all()
        # The connect says why, in the words it always used.
        assert "command not found: cat-code-no-such-command-xyz" in (pool.servers[1].error or "")
    finally:
        await prestarted.close_all()
