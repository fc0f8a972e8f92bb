"""`McpPool` lifecycle: servers started again after they stop by themselves (with a
budget), restarted, disabled and enabled by hand, and a reloaded config.

Real child processes (the misbehaving test server's ``crash`` tool) and a real HTTP server
for the transports; fakes above the transport for the bookkeeping (every start gets a
new fake, as every start of a real server gets a new process).
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from scripted.fakes import FakeTransport, tool
from scripted.http_peers import free_port, running, sdk_command
from scripted.processes import alive
from scripted.procs import server_command, wait_until

from cat_code.host.config.load import HttpServerConfig, McpConfig, ServerConfig, StdioServerConfig
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.restarts import RestartPolicy
from cat_code.host.servers.server import ServerState, ServerStatus
from cat_code.mcp.transports.base import Transport
from cat_code.mcp.transports.stdio import StdioTransport
from cat_code.tools.registry import ToolRegistry

SOURCE = Path("test-mcp.json")


class Fakes:
    """A transport factory: a new `FakeTransport` for every start, kept by server name."""

    def __init__(self, tools: list[str] | None = None) -> None:
        self.tools = tools or ["t"]
        self.made: dict[str, list[FakeTransport]] = {}
        #: Per server name: errors the next starts raise, in order.
        self.start_errors: dict[str, list[BaseException]] = {}
        #: Per server name: a gate the next start's initialize waits on.
        self.gates: dict[str, asyncio.Event] = {}

    def __call__(self, config: ServerConfig) -> Transport:
        errors = self.start_errors.get(config.name) or []
        fake = FakeTransport(
            name=config.name,
            tools=[tool(t) for t in self.tools],
            start_error=errors.pop(0) if errors else None,
        )
        answering(fake, "ok")
        gate = self.gates.pop(config.name, None)
        if gate is not None:
            plain = fake.handlers["initialize"]

            async def gated(params: dict[str, Any]) -> Any:
                await gate.wait()
                return plain(params)

            fake.handlers["initialize"] = gated
        self.made.setdefault(config.name, []).append(fake)
        return fake

    def last(self, name: str) -> FakeTransport:
        return self.made[name][-1]


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def entry(name: str, **fields: Any) -> StdioServerConfig:
    return StdioServerConfig(name=name, source=SOURCE, command="x", **fields)


def fake_pool(fakes: Fakes, *names: str, policy: RestartPolicy | None = None) -> McpPool:
    config = McpConfig(servers=[entry(n) for n in names], order=list(names))
    return McpPool(config, transport_factory=fakes, restart_policy=policy)


async def call(pool: McpPool, name: str, arguments: dict[str, Any] | None = None) -> Any:
    tool = pool.find_tool(name)
    assert tool is not None, name
    async with asyncio.timeout(20):
        return await tool.execute(arguments or {})


def answering(fake: FakeTransport, text: str) -> None:
    fake.handlers["tools/call"] = lambda params: {"content": [{"type": "text", "text": text}]}


# -- healing ----------------------------------------------------------------------------------


async def test_the_next_call_after_a_lost_connection_restarts_the_server_and_succeeds() -> None:
    fakes = Fakes()
    registry = ToolRegistry()
    async with fake_pool(fakes, "a") as pool:
        await pool.connect_all()
        pool.register_into(registry)
        first = fakes.last("a")
        first.lose("server process exited with code 1")
        (server,) = pool.servers
        assert server.state is ServerState.FAILED
        assert pool.status()[0].restarts == 0  # nothing restarts until a call asks

        tool = pool.find_tool("mcp__a__t")
        assert tool is not None
        fakes.gates["a"] = gate = asyncio.Event()
        calling = asyncio.ensure_future(tool.execute({}))
        await wait_until(lambda: len(fakes.made["a"]) == 2)
        answering(fakes.last("a"), "back")
        assert server.state is ServerState.CONNECTING
        gate.set()
        async with asyncio.timeout(5):
            result = await calling

        assert not result.is_error and result.content == "back"
        assert first.closed
        (status,) = pool.status()
        assert (status.state, status.restarts, status.error) == ("CONNECTED", 1, None)
        assert status.to_json()["restarts"] == 1
        assert registry.names() == ["mcp__a__t"]  # the same name, registered again
        assert pool.servers[0] is server


async def test_calls_that_find_the_server_gone_share_one_restart() -> None:
    fakes = Fakes()
    async with fake_pool(fakes, "a") as pool:
        await pool.connect_all()
        fakes.last("a").lose("gone")
        results = await asyncio.gather(*(call(pool, "mcp__a__t") for _ in range(5)))
        assert len(fakes.made["a"]) == 2
        assert all(not r.is_error for r in results)
        assert pool.status()[0].restarts == 1


async def test_the_fourth_loss_within_the_window_stays_failed_until_a_restart_by_hand() -> None:
    fakes = Fakes()
    clock = Clock()
    policy = RestartPolicy(max_restarts=3, window_s=60, clock=clock)
    async with fake_pool(fakes, "a", policy=policy) as pool:
        await pool.connect_all()
        for n in range(1, 4):
            fakes.last("a").stderr.append(f"crash {n}")
            fakes.last("a").lose(f"server process exited with code {n}")
            clock.now += 10
            assert not (await call(pool, "mcp__a__t")).is_error
            assert pool.status()[0].restarts == n
        fakes.last("a").stderr.append("crash 4")
        fakes.last("a").lose("server process exited with code 4")
        clock.now += 10  # 30 s after the first restart: the window is full

        result = await call(pool, "mcp__a__t")
        again = await call(pool, "mcp__a__t")

        assert len(fakes.made["a"]) == 4  # no fifth start
        assert result.is_error and again.is_error
        expected = (
            "server process exited with code 4 — not restarted again after 3 restart(s) in 60 s"
        )
        assert expected in result.content and "/mcp" not in result.content  # the model reads it
        (status,) = pool.status()
        assert status.state == "FAILED" and status.error == expected and status.gave_up
        assert status.stderr_tail == ["crash 4"]
        assert status.restarts == 3

        clock.now += 1000  # time alone does not bring it back
        assert (await call(pool, "mcp__a__t")).is_error
        assert len(fakes.made["a"]) == 4

        server = await pool.restart("a")
        assert server.state is ServerState.CONNECTED
        assert not (await call(pool, "mcp__a__t")).is_error
        # A restart by hand empties the window: three more automatic ones are allowed.
        for _ in range(3):
            fakes.last("a").lose("again")
            assert not (await call(pool, "mcp__a__t")).is_error
        assert pool.status()[0].restarts == 6


async def test_the_window_slides_so_old_restarts_stop_counting() -> None:
    fakes = Fakes()
    clock = Clock()
    async with fake_pool(fakes, "a", policy=RestartPolicy(3, 60, clock)) as pool:
        await pool.connect_all()
        for _ in range(3):
            fakes.last("a").lose("gone")
            assert not (await call(pool, "mcp__a__t")).is_error
        clock.now += 59.9
        fakes.last("a").lose("gone")
        assert (await call(pool, "mcp__a__t")).is_error
        # It gave up: a later call does not try again, even once the window has room.
        clock.now += 60
        assert (await call(pool, "mcp__a__t")).is_error

    fakes = Fakes()
    clock = Clock()
    async with fake_pool(fakes, "a", policy=RestartPolicy(3, 60, clock)) as pool:
        await pool.connect_all()
        for _ in range(3):
            fakes.last("a").lose("gone")
            assert not (await call(pool, "mcp__a__t")).is_error
        clock.now += 60
        fakes.last("a").lose("gone")
        assert not (await call(pool, "mcp__a__t")).is_error
        assert pool.status()[0].restarts == 4


async def test_a_restart_that_cannot_start_is_tried_again_by_the_next_call() -> None:
    from cat_code.mcp.errors import ConnectError

    fakes = Fakes()
    async with fake_pool(fakes, "a") as pool:
        await pool.connect_all()
        fakes.start_errors["a"] = [ConnectError("command not found: x")]
        fakes.last("a").lose("gone")

        failed = await call(pool, "mcp__a__t")
        assert failed.is_error and "command not found: x" in failed.content
        assert pool.status()[0].state == "FAILED"
        assert pool.find_tool("mcp__a__t") is not None  # still there for the next call

        assert not (await call(pool, "mcp__a__t")).is_error
        assert len(fakes.made["a"]) == 3
        assert pool.status()[0].restarts == 2


async def test_a_server_that_failed_at_start_is_not_restarted_by_calls() -> None:
    from cat_code.mcp.errors import ConnectError

    fakes = Fakes()
    fakes.start_errors["a"] = [ConnectError("command not found: x")]
    async with fake_pool(fakes, "a", "b") as pool:
        await pool.connect_all()
        a, _ = pool.servers
        assert a.state is ServerState.FAILED and not a.healable
        assert pool.find_tool("mcp__a__t") is None


async def test_closing_while_a_restart_runs_ends_it_and_closes_everything() -> None:
    fakes = Fakes()
    pool = fake_pool(fakes, "a")
    await pool.connect_all()
    fakes.last("a").lose("gone")
    fakes.gates["a"] = asyncio.Event()  # the restart hangs in initialize
    calling = asyncio.ensure_future(call(pool, "mcp__a__t"))
    await wait_until(lambda: len(fakes.made["a"]) == 2)
    async with asyncio.timeout(10):
        await pool.close_all()
        result = await asyncio.gather(calling, return_exceptions=True)
    assert all(f.closed for f in fakes.made["a"])
    assert len(fakes.made["a"]) == 2
    assert isinstance(result[0], asyncio.CancelledError) or result[0].is_error


# -- by hand: restart, disable, enable ---------------------------------------------------


async def test_restart_by_hand_replaces_a_connected_servers_connection() -> None:
    fakes = Fakes()
    registry = ToolRegistry()
    async with fake_pool(fakes, "a") as pool:
        await pool.connect_all()
        pool.register_into(registry)
        first = fakes.last("a")
        server = await pool.restart("a")
        assert first.closed and not fakes.last("a").closed
        assert server.state is ServerState.CONNECTED
        assert pool.status()[0].restarts == 0  # only automatic restarts count
        assert registry.names() == ["mcp__a__t"]
        with pytest.raises(KeyError):
            await pool.restart("nope")


async def test_a_restart_whose_caller_is_cancelled_still_finishes() -> None:
    fakes = Fakes()
    registry = ToolRegistry()
    async with fake_pool(fakes, "a") as pool:
        await pool.connect_all()
        pool.register_into(registry)
        fakes.gates["a"] = gate = asyncio.Event()
        restarting = asyncio.ensure_future(pool.restart("a"))
        await wait_until(lambda: len(fakes.made["a"]) == 2)
        restarting.cancel()  # Ctrl-C in the REPL
        with pytest.raises(asyncio.CancelledError):
            await restarting
        gate.set()
        server = pool.servers[0]
        # It finishes by itself, not abandoned half-way.
        await wait_until(lambda: not server._operations)
        assert server.state is ServerState.CONNECTED and registry.names() == ["mcp__a__t"]
        assert not (await call(pool, "mcp__a__t")).is_error


async def test_disable_stops_a_server_and_drops_its_tools_and_enable_brings_them_back() -> None:
    fakes = Fakes()
    registry = ToolRegistry()
    async with fake_pool(fakes, "a", "b") as pool:
        await pool.connect_all()
        pool.register_into(registry)
        kept = pool.find_tool("mcp__a__t")
        assert kept is not None

        await pool.disable("a")
        assert fakes.last("a").closed
        assert registry.names() == ["mcp__b__t"]
        assert [s.state for s in pool.status()] == ["DISABLED", "CONNECTED"]
        result = await kept.execute({})  # a call the model had already planned
        assert result.is_error and "MCP server 'a' is DISABLED" in result.content
        assert await pool.restart("a") is pool.servers[0]
        assert pool.servers[0].state is ServerState.DISABLED  # restart does not enable
        assert len(fakes.made["a"]) == 1

        await pool.enable("a")
        assert [s.state for s in pool.status()] == ["CONNECTED", "CONNECTED"]
        assert sorted(registry.names()) == ["mcp__a__t", "mcp__b__t"]
        assert len(fakes.made["a"]) == 2
        await pool.enable("a")  # already enabled: nothing happens
        assert len(fakes.made["a"]) == 2


async def test_enable_starts_a_server_its_entry_disables_for_this_session_only() -> None:
    fakes = Fakes()
    config = McpConfig(servers=[entry("off", disabled=True)], order=["off"])
    async with McpPool(config, transport_factory=fakes) as pool:
        await pool.connect_all()
        assert "off" not in fakes.made
        server = await pool.enable("off")
        assert server.state is ServerState.CONNECTED
        assert server.config.disabled  # the entry itself is as it was
        assert [t.name for t in pool.tools()] == ["mcp__off__t"]


# -- reload -------------------------------------------------------------------------------


async def test_reload_starts_new_servers_stops_removed_ones_and_restarts_changed_ones() -> None:
    fakes = Fakes()
    registry = ToolRegistry()
    async with fake_pool(fakes, "same", "changed", "removed") as pool:
        await pool.connect_all()
        pool.register_into(registry)
        same, changed, removed = (fakes.last(n) for n in ("same", "changed", "removed"))
        same_server = pool.servers[0]
        new_config = McpConfig(
            servers=[
                entry("added"),
                dataclasses.replace(entry("same"), source=Path("elsewhere.json")),
                entry("changed", request_timeout_s=5),
            ],
            order=["added", "same", "changed"],
        )

        async with asyncio.timeout(10):
            plan = await pool.reload(new_config)

        assert (plan.added, plan.removed, plan.changed, plan.unchanged) == (
            ["added"],
            ["removed"],
            ["changed"],
            ["same"],
        )
        assert plan.summary() == (
            "1 added (added), 1 removed (removed), 1 restarted (changed), 1 unchanged"
        )
        assert not same.closed and pool.servers[1] is same_server  # untouched
        assert changed.closed and removed.closed
        assert len(fakes.made["changed"]) == 2
        assert [(s.name, s.state) for s in pool.status()] == [
            ("added", "CONNECTED"),
            ("same", "CONNECTED"),
            ("changed", "CONNECTED"),
        ]
        assert sorted(registry.names()) == ["mcp__added__t", "mcp__changed__t", "mcp__same__t"]
        assert pool.server("changed") is not None
        assert pool.server("changed").config.request_timeout_s == 5  # type: ignore[union-attr]

        # Nothing changed: nothing restarts.
        plan = await pool.reload(new_config)
        assert plan.nothing and plan.unchanged == ["added", "same", "changed"]
        assert len(fakes.made["changed"]) == 2


async def test_a_server_the_reload_removed_is_not_started_again_by_a_call_through_its_tool() -> (
    None
):
    fakes = Fakes()
    async with fake_pool(fakes, "a", "b") as pool:
        await pool.connect_all()
        old_tool = pool.find_tool("mcp__a__t")
        assert old_tool is not None
        fakes.last("a").lose("gone")  # it would restart on the next call...
        await pool.reload(McpConfig(servers=[entry("b")], order=["b"]))
        result = await old_tool.execute({})  # ... but it was removed meanwhile
        assert result.is_error and "MCP server 'a' is FAILED: gone" in result.content
        assert len(fakes.made["a"]) == 1
        assert pool.server("a") is None


async def test_reload_keeps_a_server_disabled_for_the_session_when_its_entry_is_unchanged() -> None:
    fakes = Fakes()
    async with fake_pool(fakes, "a") as pool:
        await pool.connect_all()
        await pool.disable("a")
        await pool.reload(McpConfig(servers=[entry("a")], order=["a"]))
        assert pool.servers[0].state is ServerState.DISABLED
        assert len(fakes.made["a"]) == 1


# -- real servers --------------------------------------------------------------------------


def crashing_server(name: str) -> StdioServerConfig:
    command, args = server_command("--tools", "echo,crash")
    return StdioServerConfig(
        name=name, source=SOURCE, command=command, args=tuple(args),
        startup_timeout_s=20, request_timeout_s=20,
    )  # fmt: skip


def pid_of(pool: McpPool, name: str) -> int:
    server = pool.server(name)
    assert server is not None and server.client is not None
    transport = server.client.transport
    assert isinstance(transport, StdioTransport) and transport.pid is not None
    return transport.pid


async def test_a_stdio_server_that_crashes_mid_call_is_started_again_by_the_next_call() -> None:
    async with McpPool(McpConfig(servers=[crashing_server("c")])) as pool:
        await pool.connect_all()
        first = pid_of(pool, "c")

        crash = await call(pool, "mcp__c__crash", {"code": 7, "message": "oh no"})
        assert crash.is_error
        assert "exited with code 7; last stderr: misbehaving server ready | oh no" in crash.content
        assert pool.status()[0].state == "FAILED"

        echo = await call(pool, "mcp__c__echo", {"text": "still here"})

        assert not echo.is_error and echo.content == "still here"
        second = pid_of(pool, "c")
        assert second != first and alive(second) and not alive(first)
        (status,) = pool.status()
        assert (status.state, status.restarts) == ("CONNECTED", 1)
    assert not alive(second)


async def test_a_stdio_server_crashing_a_fourth_time_within_a_minute_stays_failed() -> None:
    async with McpPool(McpConfig(servers=[crashing_server("c")])) as pool:
        await pool.connect_all()
        for n in range(4):
            crash = await call(pool, "mcp__c__crash", {"code": 3, "message": f"crash {n}"})
            assert crash.is_error and f"crash {n}" in crash.content
        pid = pid_of(pool, "c")

        refused = await call(pool, "mcp__c__echo", {"text": "hello?"})

        assert refused.is_error and "not restarted again" in refused.content
        assert "/mcp" not in refused.content and status_of(pool).gave_up
        (status,) = pool.status()
        assert status.state == "FAILED" and status.restarts == 3
        assert status.stderr_tail == ["misbehaving server ready", "crash 3"]
        assert pid_of(pool, "c") == pid  # nothing was started
        from cat_code.host.status import format_status

        line = format_status([status], in_repl=True).splitlines()[1]
        assert line.startswith("  c  FAILED  (stdio: ")
        assert line.endswith("in 60 s  restarted 3× — /mcp restart c starts it")
        shell = format_status([status]).splitlines()[1]
        assert shell.endswith("in 60 s  restarted 3× — the next run starts it")

        await pool.restart("c")
        echo = await call(pool, "mcp__c__echo", {"text": "back"})
        assert not echo.is_error and echo.content == "back"
        assert pool.status()[0].state == "CONNECTED" and not status_of(pool).gave_up


@pytest.mark.slow
async def test_an_http_server_that_went_away_is_reconnected_once_it_is_back_on_its_port() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    config = McpConfig(servers=[HttpServerConfig(name="web", source=SOURCE, url=url, type="http")])
    with running(sdk_command(port, "json"), port):
        pool = McpPool(config)
        await pool.connect_all()
    try:
        assert pool.status()[0].state == "CONNECTED"
        # The server is gone now: the call fails, and says where it could not connect.
        down = await call(pool, "mcp__web__echo", {"text": "anyone?"})
        assert down.is_error
        assert pool.status()[0].state == "FAILED"
        assert pool.status()[0].restarts == 0
        with running(sdk_command(port, "json"), port):
            back = await call(pool, "mcp__web__echo", {"text": "back"})
            assert not back.is_error and back.content == "echo: back"
            (status,) = pool.status()
            assert (status.state, status.restarts) == ("CONNECTED", 1)
            assert status.to_json()["restarts"] == 1
    finally:
        await pool.close_all()


def test_the_status_line_ends_with_the_restart_count_once_there_is_one() -> None:
    from cat_code.host.servers.server import ServerStatus
    from cat_code.host.status import format_status

    def status(name: str, restarts: int) -> ServerStatus:
        return ServerStatus(
            name=name, state=ServerState.CONNECTED, tools=6, transport="stdio",
            target="python3 server.py", restarts=restarts,
        )  # fmt: skip

    assert format_status([status("echo", 1), status("other", 0)]).splitlines() == [
        "MCP servers:",
        "  echo   CONNECTED  6 tool(s)  (stdio: python3 server.py)  restarted 1×",
        "  other  CONNECTED  6 tool(s)  (stdio: python3 server.py)",
    ]


def status_of(pool: McpPool) -> ServerStatus:
    (status,) = pool.status()
    return status
