"""`McpPool` with real server processes: parallel connect, isolation of failures, registration."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ECHO_SERVER
from scripted.fakes import FakeTransport, tool
from scripted.processes import alive
from scripted.procs import kill_quietly, read_pid, server_command, wait_until

from cat_code.host.config.load import (
    BrokenServer,
    McpConfig,
    ServerConfig,
    StdioServerConfig,
    load_config,
)
from cat_code.host.servers.connect import default_transport
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.server import ServerState
from cat_code.mcp.transports.base import Transport
from cat_code.mcp.transports.stdio import StdioTransport
from cat_code.tools.builtin import builtin_tools
from cat_code.tools.registry import ToolRegistry

SOURCE = Path("test-mcp.json")


def server(name: str, *flags: str, startup: float = 20, **fields: Any) -> StdioServerConfig:
    """An entry running the misbehaving test server with ``flags``."""
    command, args = server_command(*flags)
    return StdioServerConfig(
        name=name, source=SOURCE, command=command, args=tuple(args),
        startup_timeout_s=startup, request_timeout_s=20, **fields,
    )  # fmt: skip


def echo_example(name: str) -> StdioServerConfig:
    """An entry running the bundled example server."""
    return StdioServerConfig(
        name=name, source=SOURCE, command=sys.executable, args=(str(ECHO_SERVER),)
    )


def pids_of(pool: McpPool) -> list[int]:
    """The pid of every server process the pool started."""
    return [
        s.client.transport.pid
        for s in pool.servers
        if s.client is not None
        and isinstance(s.client.transport, StdioTransport)
        and s.client.transport.pid is not None
    ]


async def test_servers_connect_in_parallel(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    # Each server answers nothing until all three processes exist: connecting one after
    # another would leave the first waiting until its startup timeout.
    names = ["one", "two", "three"]
    config = McpConfig(servers=[server(n, "--gate", str(gate), "3") for n in names])

    async with McpPool(config) as pool:
        async with asyncio.timeout(60):
            await pool.connect_all()
        statuses = {s.name: s for s in pool.status()}
        pids = pids_of(pool)

    assert {n: statuses[n].state for n in names} == dict.fromkeys(names, "CONNECTED")
    assert len(os.listdir(gate)) == 3
    assert pids and not any(alive(p) for p in pids)


async def test_one_bad_server_among_good_ones_fails_alone(tmp_path: Path) -> None:
    def factory(config: ServerConfig) -> Transport:
        if config.name == "exploding":
            raise RuntimeError("factory exploded")
        return default_transport(config)

    hang_pid = tmp_path / "hang.pid"
    config = McpConfig(
        servers=[
            server("good", "--tools", "echo,cwd"),
            server("crashing", "--exit-at-start", "3"),
            server("hanging", "--hang-initialize", "--pid-file", str(hang_pid), startup=0.5),
            server("exploding"),
            echo_example("example"),
        ],
        broken=[BrokenServer(name="misconfigured", source=SOURCE, error="needs a 'command'")],
    )
    registry = ToolRegistry(builtin_tools())
    pool = McpPool(config, transport_factory=factory)
    try:
        async with asyncio.timeout(60):
            await pool.connect_all()
        pool.register_into(registry)
        statuses = {s.name: s for s in pool.status()}
        pids = pids_of(pool)

        good, example = statuses["good"], statuses["example"]
        assert (good.state, good.tools, good.error) == ("CONNECTED", 2, None)
        assert good.protocol_version == "2025-11-25"
        assert (example.state, example.tools) == ("CONNECTED", 6)
        assert {"mcp__good__echo", "mcp__good__cwd", "mcp__example__echo"} <= set(registry.names())
        assert {"shell", "read_file"} <= set(registry.names())
        echo = registry.get("mcp__example__echo")
        assert echo is not None
        assert (await echo.execute({"text": "still works"})).content == "still works"

        crashing = statuses["crashing"]
        assert crashing.state == "FAILED"
        assert "exited with code 3" in (crashing.error or "")
        assert crashing.stderr_tail == ["fatal: cannot start (exit 3)"]
        assert statuses["hanging"].state == "FAILED"
        assert statuses["hanging"].error == "did not finish starting within 0.5 s"
        assert statuses["exploding"].state == "FAILED"
        assert statuses["exploding"].error == "RuntimeError: factory exploded"
        assert statuses["misconfigured"].state == "FAILED"
        assert statuses["misconfigured"].error == "needs a 'command'"
        assert not pool.all_connected
        assert not any(n.startswith(("mcp__crashing", "mcp__hanging")) for n in registry.names())
    finally:
        await pool.close_all()
    assert pids and not any(alive(p) for p in pids)
    assert not alive(int(hang_pid.read_text()))


async def test_status_reports_every_field_of_a_connected_server() -> None:
    entry = echo_example("echo")
    async with McpPool(McpConfig(servers=[entry])) as pool:
        await pool.connect_all()
        (status,) = pool.status()
        assert pool.all_connected

    assert status.to_json() == {
        "name": "echo",
        "state": "CONNECTED",
        "tools": 6,
        "transport": "stdio",
        "target": f"{sys.executable} {ECHO_SERVER}",
        "error": None,
        "protocolVersion": "2025-11-25",
        "era": "handshake",
        "stderrTail": [],
        "serverInfo": {"name": "cat-code-example-echo", "version": "1.0.0"},
        "restarts": 0,
    }


async def test_a_disabled_server_is_not_started() -> None:
    config = McpConfig(servers=[server("off", disabled=True), echo_example("on")])
    async with McpPool(config) as pool:
        await pool.connect_all()
        states = {s.name: s.state for s in pool.status()}
        assert pool.servers[0].client is None
        assert pool.all_connected
    assert states == {"off": "DISABLED", "on": "CONNECTED"}


async def test_a_pool_without_servers_connects_and_closes() -> None:
    async with McpPool(McpConfig()) as pool:
        await pool.connect_all()
        assert pool.status() == [] and pool.tools() == [] and pool.all_connected


async def test_tool_list_changes_update_the_registry() -> None:
    config = McpConfig(servers=[server("live", "--tools", "echo,add_tool,remove_tool")])
    registry = ToolRegistry(builtin_tools())
    async with McpPool(config) as pool:
        await pool.connect_all()
        pool.register_into(registry)
        assert "mcp__live__echo" in registry

        add = registry.get("mcp__live__add_tool")
        assert add is not None
        assert (await add.execute({"name": "fresh"})).content == "added"
        await wait_until(lambda: "mcp__live__fresh" in registry)

        remove = registry.get("mcp__live__remove_tool")
        assert remove is not None
        assert (await remove.execute({"name": "echo"})).content == "removed"
        await wait_until(lambda: "mcp__live__echo" not in registry)

        assert [t.name for t in pool.tools("live")] == [
            "mcp__live__add_tool", "mcp__live__fresh", "mcp__live__remove_tool",
        ]  # fmt: skip
        assert {"shell", "read_file"} <= set(registry.names())
        assert pool.status()[0].tools == 3


async def test_closing_while_servers_are_still_starting_leaves_no_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    config = McpConfig(servers=[server("slow", "--hang-initialize", "--pid-file", str(pid_file))])
    pool = McpPool(config)
    connecting = asyncio.create_task(pool.connect_all())
    pid = await read_pid(pid_file)
    try:
        async with asyncio.timeout(20):
            await pool.close_all()
            await connecting
        assert not alive(pid)
        assert pool.status()[0].state == "FAILED"
    finally:
        kill_quietly(pid)


async def test_a_tool_of_a_server_that_died_returns_an_error_and_status_shows_why() -> None:
    async with McpPool(McpConfig(servers=[server("doomed")])) as pool:
        await pool.connect_all()
        (pid,) = pids_of(pool)
        os.kill(pid, signal.SIGKILL)
        echo = pool.find_tool("mcp__doomed__echo")
        assert echo is not None

        async with asyncio.timeout(20):
            result = await echo.execute({"text": "hello?"})

        assert result.is_error
        assert result.content.startswith("Error: MCP tool 'mcp__doomed__echo' failed: ")
        assert "killed by signal 9" in result.content
        (status,) = pool.status()
        assert status.state == "FAILED"
        assert "killed by signal 9" in (status.error or "")
        assert status.stderr_tail == ["misbehaving server ready"]


async def test_colliding_names_across_servers_are_resolved_in_config_order(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # "a.b" and "a_b" both sanitise to "a_b", so both servers' tool "t" wants "mcp__a_b__t".
    # The first server in the config finishes connecting last; it still gets the plain name.
    second_connected = asyncio.Event()
    fakes: dict[str, FakeTransport] = {}

    def factory(config: ServerConfig) -> Transport:
        fake = FakeTransport(tools=[tool("t")], name=config.name)
        if config.name == "a.b":
            default_initialize = fake.handlers["initialize"]

            async def late_initialize(params: dict[str, Any]) -> Any:
                await second_connected.wait()
                return default_initialize(params)

            fake.handlers["initialize"] = late_initialize
        else:
            fake.handlers["tools/list"] = lambda params: (
                second_connected.set() or {"tools": [tool("t")]}
            )
        fakes[config.name] = fake
        return fake

    entries: list[ServerConfig] = [
        StdioServerConfig(name=n, source=SOURCE, command="x") for n in ("a.b", "a_b")
    ]
    caplog.set_level(logging.WARNING, logger="cat_code.host.mcp_tools.tool_adapter")
    async with McpPool(McpConfig(servers=entries), transport_factory=factory) as pool:
        async with asyncio.timeout(10):
            await pool.connect_all()
        first, second = pool.tools("a.b"), pool.tools("a_b")

    assert [t.name for t in first] == ["mcp__a_b__t"]
    assert second[0].name != "mcp__a_b__t" and second[0].name.startswith("mcp__a_b__t_")
    assert any("mcp__a_b__t" in r.getMessage() for r in caplog.records)
    assert all(f.closed for f in fakes.values())


async def test_a_stdio_server_that_dies_while_idle_shows_failed_with_its_exit_code(
    tmp_path: Path,
) -> None:
    config_path = tmp_path / "mcp.json"
    config_path.write_text(
        json.dumps(
            {"mcpServers": {"echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]}}}
        )
    )
    pool = McpPool(load_config([config_path]))
    try:
        await pool.connect_all()
        server = pool.servers[0]
        assert server.state == "CONNECTED"
        assert server.client is not None
        transport = server.client.transport
        assert isinstance(transport, StdioTransport) and transport.pid is not None
        os.kill(transport.pid, signal.SIGKILL)
        await wait_until(lambda: transport.returncode is not None)
        status = pool.status()[0]
        assert status.state == "FAILED"
        assert "killed by signal 9" in (status.error or "")
    finally:
        await pool.close_all()


async def test_a_server_still_starting_shows_as_connecting() -> None:
    release = asyncio.Event()

    class SlowTransport(FakeTransport):
        async def start(self, on_message: Any, on_close: Any) -> None:
            await release.wait()
            await super().start(on_message, on_close)

    entry = StdioServerConfig(name="slow", source=Path("mcp.json"), command="x")
    pool = McpPool(McpConfig(servers=[entry]), transport_factory=lambda c: SlowTransport())
    connecting = asyncio.ensure_future(pool.connect_all())
    try:
        await wait_until(lambda: pool.servers[0].task is not None)
        assert pool.status()[0].state == "CONNECTING"
        release.set()
        await connecting
        assert pool.status()[0].state == "CONNECTED"
    finally:
        release.set()
        await pool.close_all()


async def test_a_tool_list_change_announced_while_closing_starts_no_refresh(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class ChangesOnClose(FakeTransport):
        """Like a server that reports a changed tool list as stdin closes."""

        async def close(self) -> None:
            self.push({"method": "notifications/tools/list_changed"})
            await super().close()

    fake = ChangesOnClose(tools=[tool("echo")])
    entry = StdioServerConfig(name="s", source=Path("mcp.json"), command="x")
    registry = ToolRegistry()
    pool = McpPool(McpConfig(servers=[entry]), transport_factory=lambda c: fake)
    await pool.connect_all()
    pool.register_into(registry)

    await pool.close_all()

    # Nothing of the pool outlives close_all: no refresh left to run against a closed server.
    leftovers = [t for t in asyncio.all_tasks() if "refresh_tools" in repr(t.get_coro())]
    assert leftovers == []
    assert fake.methods().count("tools/list") == 1
    assert "mcp__s__echo" in registry
    assert not any("could not re-list" in r.getMessage() for r in caplog.records)


async def test_status_lists_servers_in_the_config_files_order_broken_ones_included(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mcp.json"
    servers = {
        "first": {"command": "definitely-not-a-command-here"},
        "broken": {"type": "carrier-pigeon"},
        "last": {"command": "x", "disabled": True},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    pool = McpPool(load_config([path]))
    try:
        await pool.connect_all()
        assert [s.name for s in pool.status()] == ["first", "broken", "last"]
    finally:
        await pool.close_all()


# -- servers own their state and tools (fakes: the layer above a transport) ----------------


def fake_pool(*fakes: FakeTransport) -> McpPool:
    """A pool of one entry per fake, each served by its fake."""
    entries = [StdioServerConfig(name=f.name, source=SOURCE, command="x") for f in fakes]
    by_name = {f.name: f for f in fakes}
    return McpPool(McpConfig(servers=entries), transport_factory=lambda c: by_name[c.name])


async def test_a_connection_that_ends_by_itself_fails_its_server_at_once() -> None:
    fake = FakeTransport(name="a", tools=[tool("t")])
    async with fake_pool(fake) as pool:
        await pool.connect_all()
        (server,) = pool.servers
        assert server.state is ServerState.CONNECTED
        fake.lose("server process exited with code 1")
        assert server.state is ServerState.FAILED  # no status read needed to notice
        assert server.error == "server process exited with code 1"
        # (The next call starts it again: tests/mcp/test_pool_lifecycle.py.)
    assert server.state is ServerState.FAILED  # closing keeps the reason


async def test_the_states_run_new_connecting_connected_closed() -> None:
    release = asyncio.Event()
    fake = FakeTransport(name="a", handlers={"tools/list": lambda p: release_then(release)})
    pool = fake_pool(fake)
    (server,) = pool.servers
    assert server.state is ServerState.NEW
    connecting = asyncio.ensure_future(pool.connect_all())
    await fake.wait_request("tools/list")
    assert server.state is ServerState.CONNECTING
    release.set()
    await connecting
    assert server.state is ServerState.CONNECTED
    await pool.close_all()
    assert server.state is ServerState.CLOSED
    assert [s.value for s in ServerState] == [
        "NEW", "CONNECTING", "CONNECTED", "FAILED", "DISABLED", "CLOSED", "NEEDS_LOGIN",
        "NEEDS_APPROVAL", "REJECTED",
    ]  # fmt: skip


async def release_then(release: asyncio.Event) -> dict[str, Any]:
    await release.wait()
    return {"tools": []}


async def test_registered_names_are_pinned_across_tool_list_changes() -> None:
    # "b.x" sanitises to the name "b_x" would take; while "b_x" is absent, "b.x" gets it.
    fake = FakeTransport(
        {"tools/call": lambda p: {"content": [{"type": "text", "text": "ok"}]}},
        name="s",
        tools=[tool("b.x"), tool("keep")],
    )
    registry = ToolRegistry()
    async with fake_pool(fake) as pool:
        await pool.connect_all()
        pool.register_into(registry)
        before = {t.tool_name: t.name for t in pool.tools()}
        assert before == {"b.x": "mcp__s__b_x", "keep": "mcp__s__keep"}
        keep = registry.get("mcp__s__keep")

        fake.tools = [tool("b_x"), tool("keep"), tool("b.x")]
        fake.push({"method": "notifications/tools/list_changed"})
        await wait_until(lambda: len(pool.tools()) == 3)

        after = {t.tool_name: t.name for t in pool.tools()}
        assert after["b.x"] == "mcp__s__b_x"  # pinned: the model has seen it
        assert after["keep"] == "mcp__s__keep"
        assert after["b_x"].startswith("mcp__s__b_x_")  # the newcomer gets the hashed form
        assert sorted(registry.names()) == sorted(after.values())
        assert keep is not None and (await keep.execute({})).content == "ok"  # still works


async def test_a_failed_refresh_keeps_the_old_list_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = FakeTransport(name="s", tools=[tool("one")])
    async with fake_pool(fake) as pool:
        await pool.connect_all()
        (server,) = pool.servers

        def broken(params: dict[str, Any]) -> Any:
            return {"tools": "not a list"}

        fake.handlers["tools/list"] = broken
        fake.push({"method": "notifications/tools/list_changed"})
        await wait_until(lambda: "could not re-list" in caplog.text)
        assert [t.name for t in pool.tools()] == ["mcp__s__one"]
        assert server.state is ServerState.CONNECTED


async def test_the_pool_gives_the_instructions_of_connected_servers() -> None:
    with_note = FakeTransport(name="a")
    with_note.handlers["initialize"] = lambda p: {
        "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {},
        "instructions": "use a",
    }  # fmt: skip
    without = FakeTransport(name="b")
    async with fake_pool(with_note, without) as pool:
        await pool.connect_all()
        assert pool.instructions() == {"a": "use a"}
        with_note.lose("gone")
        assert pool.instructions() == {}


async def test_closing_when_the_caller_is_cancelled_still_closes_every_server() -> None:
    release = asyncio.Event()

    class SlowClose(FakeTransport):
        async def close(self) -> None:
            await release.wait()
            await super().close()

    fake = SlowClose(name="a")
    pool = fake_pool(fake)
    await pool.connect_all()
    closing = asyncio.ensure_future(pool.close_all())
    await wait_until(lambda: pool.servers[0].task is not None)
    for _ in range(3):
        await asyncio.sleep(0)
    closing.cancel()
    await wait_until(lambda: fake.hurried > 0)  # the cancel hurried the close
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert fake.closed


async def test_close_all_finishes_closing_when_its_caller_is_cancelled_and_hurries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cat_code.mcp.transports import stdio

    monkeypatch.setattr(stdio, "STDIN_CLOSE_GRACE_S", 3600.0)  # only a hurry can end the close
    pool = McpPool(McpConfig(servers=[server("stubborn", "--ignore-eof", "--ignore-term")]))
    await pool.connect_all()
    [pid] = pids_of(pool)
    try:
        closing = asyncio.create_task(pool.close_all())
        await wait_until(lambda: pool.servers[0]._stopping)
        closing.cancel()  # the caller gives up: the close goes on, hurried

        with pytest.raises(asyncio.CancelledError):  # the cancellation, once the close is done
            async with asyncio.timeout(20):
                await closing
        assert not alive(pid)
    finally:
        kill_quietly(pid)


async def test_kill_now_kills_every_server_process_at_once() -> None:
    pool = McpPool(McpConfig(servers=[server("a", "--ignore-term"), server("b")]))
    await pool.connect_all()
    pids = pids_of(pool)
    try:
        pool.kill_now()
        await wait_until(lambda: not any(alive(pid) for pid in pids), 20)
    finally:
        await pool.close_all()
        kill_quietly(*pids)
