"""`StdioTransport` against real child processes (``tests/servers/misbehaving_server.py``)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from scripted.processes import alive
from scripted.procs import kill_quietly, read_pid, server_command, wait_until

from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import ConnectError, MessageTooLarge, ProcessExited, TransportClosed
from cat_code.mcp.transports import stdio
from cat_code.mcp.transports.base import ignore_close, ignore_message
from cat_code.mcp.transports.stdio import INHERITED_ENV_VARS, StdioTransport

Spawn = Callable[..., Awaitable[StdioTransport]]


@pytest.fixture
async def spawn() -> AsyncIterator[Spawn]:
    """A transport for the misbehaving server with flags (or any command), not yet started
    (`connect` starts it); every one is closed after the test."""
    made: list[StdioTransport] = []

    async def make(
        *flags: str,
        command: list[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
    ) -> StdioTransport:
        program, args = server_command(*flags) if command is None else (command[0], command[1:])
        transport = StdioTransport(program, args, env=env, cwd=cwd, name="test")
        made.append(transport)
        return transport

    yield make
    for transport in made:
        await transport.close()


@pytest.fixture
def short_graces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shorter close graces, so tests of a stubborn server do not wait 4 s each."""
    monkeypatch.setattr(stdio, "STDIN_CLOSE_GRACE_S", 0.3)
    monkeypatch.setattr(stdio, "TERMINATE_GRACE_S", 0.3)


async def connect(transport: StdioTransport, request_timeout: float = 60) -> McpClient:
    """Start the transport and run the handshake over it."""
    client = McpClient(transport, name="test", request_timeout=request_timeout)
    await client.connect(timeout=30)
    return client


def text_of(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


# -- traffic -----------------------------------------------------------------------------


async def test_many_concurrent_calls_answered_out_of_order_each_get_their_own_answer(
    spawn: Spawn,
) -> None:
    count = 200
    client = await connect(await spawn("--reverse-batch", str(count)))

    async with asyncio.timeout(60):
        results = await asyncio.gather(
            *(client.call_tool("echo", {"text": f"call {i}"}) for i in range(count))
        )

    assert [text_of(r) for r in results] == [f"call {i}" for i in range(count)]


async def test_a_20_mb_response_line_arrives_intact(spawn: Spawn) -> None:
    size = 20 * 1024 * 1024
    client = await connect(await spawn())

    async with asyncio.timeout(60):
        result = await client.call_tool("big", {"size": size})

    text = text_of(result)
    assert len(text) == size
    assert text.endswith("END")
    assert text.count("x") == size - 3
    async with asyncio.timeout(10):  # and the connection goes on
        assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"


async def test_large_requests_are_written_whole_while_the_pipe_is_full(spawn: Spawn) -> None:
    client = await connect(await spawn())
    texts = [str(i) * (5 * 1024 * 1024) for i in range(4)]  # far beyond any pipe buffer

    async with asyncio.timeout(60):
        results = await asyncio.gather(*(client.call_tool("echo", {"text": t}) for t in texts))

    assert [text_of(r) for r in results] == texts


async def test_lines_on_stdout_that_are_not_json_rpc_are_skipped_and_the_connection_survives(
    spawn: Spawn, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="cat_code.mcp.transports.stdio")
    client = await connect(await spawn("--noise"))

    async with asyncio.timeout(30):
        for i in range(10):
            assert text_of(await client.call_tool("echo", {"text": str(i)})) == str(i)
        assert len(await client.list_tools()) == 1

    assert any("not JSON" in r.getMessage() for r in caplog.records)


async def test_ten_megabytes_of_stderr_while_serving_neither_blocks_nor_grows_the_tail(
    spawn: Spawn,
) -> None:
    transport = await spawn()
    client = await connect(transport)

    async with asyncio.timeout(60):
        spewed, *echoes = await asyncio.gather(
            client.call_tool("spew", {"bytes": 10 * 1024 * 1024}),
            *(client.call_tool("echo", {"text": str(i)}) for i in range(20)),
        )

    assert text_of(spewed) == "spewed"
    assert [text_of(e) for e in echoes] == [str(i) for i in range(20)]
    tail = transport.diagnostics()
    assert 0 < len(tail) <= stdio.STDERR_TAIL_LINES
    assert all(len(line) <= stdio.STDERR_LINE_MAX for line in tail)
    assert tail[-1] == "last stderr line"
    assert tail[-2] == "L" * stdio.STDERR_LINE_MAX  # a 100 kB line, cut
    assert sum(line.startswith("L") for line in tail) == 1  # once, not in 50 pieces


# -- a dying server ----------------------------------------------------------------------


async def test_a_server_that_dies_mid_call_fails_the_call_at_once(spawn: Spawn) -> None:
    transport = await spawn("--reverse-batch", "2")  # holds the first call's answer
    client = await connect(transport, request_timeout=600)
    held = asyncio.create_task(client.call_tool("echo", {"text": "never answered"}))

    # Bounded far below the 600 s request timeout: only the exit can end these calls.
    async with asyncio.timeout(20):
        with pytest.raises(ProcessExited) as info:
            await client.call_tool("crash", {"code": 3, "message": "boom: disk on fire"})
        with pytest.raises(ProcessExited):
            await held

    message = str(info.value)
    assert "exited with code 3" in message
    assert "boom: disk on fire" in message
    assert info.value.returncode == 3
    assert transport.returncode == 3
    with pytest.raises(TransportClosed):  # and later requests fail at once, too
        await client.call_tool("echo", {"text": "anyone?"})


async def test_a_dead_server_whose_grandchild_keeps_stdout_open_still_fails_the_call(
    spawn: Spawn, tmp_path: Path
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    transport = await spawn("--grandchild-pid-file", str(pid_file))
    client = await connect(transport, request_timeout=600)
    grandchild = await read_pid(pid_file)
    try:
        async with asyncio.timeout(20):
            with pytest.raises(ProcessExited, match="exited with code 5"):
                await client.call_tool("crash", {"code": 5, "message": "bye"})
        await transport.close()
        assert not alive(grandchild)
    finally:
        kill_quietly(grandchild)


async def test_a_server_that_exits_at_start_fails_with_its_exit_code_and_stderr(
    spawn: Spawn,
) -> None:
    transport = await spawn("--exit-at-start", "7")
    client = McpClient(transport, name="test")

    async with asyncio.timeout(20):
        with pytest.raises(ProcessExited) as info:
            await client.connect()

    assert "exited with code 7" in str(info.value)
    assert "fatal: cannot start" in str(info.value)
    assert transport.diagnostics() == ["fatal: cannot start (exit 7)"]


async def test_a_command_that_does_not_exist_fails_with_command_not_found() -> None:
    transport = StdioTransport("cat-code-no-such-command-xyz", ["--flag"])
    with pytest.raises(ConnectError, match="command not found: cat-code-no-such-command-xyz"):
        await transport.start(ignore_message, ignore_close)
    await transport.close()  # nothing to close, and no error


async def test_starting_a_transport_twice_is_refused(spawn: Spawn) -> None:
    transport = await spawn()
    await connect(transport)
    with pytest.raises(RuntimeError, match="already started"):
        await transport.start(ignore_message, ignore_close)


async def test_a_working_directory_that_does_not_exist_fails_to_connect(tmp_path: Path) -> None:
    program, args = server_command()
    transport = StdioTransport(program, args, cwd=str(tmp_path / "missing"))
    with pytest.raises(ConnectError, match="working directory does not exist"):
        await transport.start(ignore_message, ignore_close)


async def test_spawn_errors_name_the_program_and_folder_in_their_shown_form(
    tmp_path: Path,
) -> None:
    missing = StdioTransport("/no/tok-SECRET", shown_command="/no/${TOK}")
    with pytest.raises(ConnectError) as caught:
        await missing.start(ignore_message, ignore_close)
    assert str(caught.value) == "command not found: /no/${TOK}"

    program, args = server_command()
    away = StdioTransport(
        program, args, cwd=str(tmp_path / "tok-SECRET"), shown_cwd="${WORK}/${TOK}"
    )
    with pytest.raises(ConnectError) as caught:
        await away.start(ignore_message, ignore_close)
    assert str(caught.value) == "working directory does not exist: ${WORK}/${TOK}"


async def test_a_server_that_closes_its_stderr_keeps_serving(
    spawn: Spawn, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No grace at all: were stderr EOF taken for the end of the server, every call after
    # it would fail at once.
    monkeypatch.setattr(stdio, "EXIT_FLUSH_GRACE_S", 0.0)
    program, args = server_command()
    transport = await spawn(
        command=["sh", "-c", f"exec {shlex.join([program, *args])} 2>/dev/null"]
    )
    client = await connect(transport)
    await wait_until(lambda: transport._stderr_eof)

    async with asyncio.timeout(20):
        for i in range(3):
            assert text_of(await client.call_tool("echo", {"text": str(i)})) == str(i)
    assert transport.closed_reason is None


# -- what the child sees -----------------------------------------------------------------


async def test_the_child_sees_only_the_allow_listed_environment_plus_its_own_env(
    spawn: Spawn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAT_CODE_TEST_SECRET", "hunter2")
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("LANG", "C.UTF-8")
    client = await connect(
        await spawn(env={"SERVER_TOKEN": "abc", "LANG": "en_GB.UTF-8"}),
    )

    seen = json.loads(text_of(await client.call_tool("environ")))

    assert "CAT_CODE_TEST_SECRET" not in seen
    assert set(seen) <= {*INHERITED_ENV_VARS, "SERVER_TOKEN"}
    assert seen["SERVER_TOKEN"] == "abc"
    assert seen["TZ"] == "UTC"  # inherited, on the allow-list
    assert seen["LANG"] == "en_GB.UTF-8"  # the entry's env wins over ours
    assert seen["PATH"] == os.environ["PATH"]


async def test_the_working_directory_is_honoured(spawn: Spawn, tmp_path: Path) -> None:
    client = await connect(await spawn(cwd=str(tmp_path)))
    assert text_of(await client.call_tool("cwd")) == str(tmp_path.resolve())


# -- closing -----------------------------------------------------------------------------


async def test_close_ends_a_server_that_exits_on_stdin_eof(spawn: Spawn) -> None:
    transport = await spawn()
    await connect(transport)
    assert transport.pid is not None

    await transport.close()

    assert not alive(transport.pid)
    assert transport.returncode == 0  # it left by itself: no signal needed


async def test_close_ends_a_grandchild_the_server_started(spawn: Spawn, tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    transport = await spawn("--grandchild-pid-file", str(pid_file))
    await connect(transport)
    grandchild = await read_pid(pid_file)
    assert alive(grandchild)
    try:
        await transport.close()
        assert transport.pid is not None and not alive(transport.pid)
        assert not alive(grandchild)
    finally:
        kill_quietly(grandchild)


async def test_close_sends_sigterm_to_a_server_that_ignores_stdin_eof_and_it_ends(
    spawn: Spawn,
) -> None:
    transport = await spawn("--ignore-eof")
    await connect(transport)
    assert transport.pid is not None
    try:
        await transport.close()
        assert not alive(transport.pid)
        assert transport.returncode == -signal.SIGTERM  # after the EOF grace, not SIGKILL
    finally:
        kill_quietly(transport.pid)


@pytest.mark.usefixtures("short_graces")
async def test_close_kills_a_server_that_ignores_stdin_eof_and_sigterm(spawn: Spawn) -> None:
    transport = await spawn("--ignore-eof", "--ignore-term")
    await connect(transport)
    assert transport.pid is not None
    try:
        await transport.close()
        assert not alive(transport.pid)
        assert transport.returncode == -9  # SIGKILL was needed
    finally:
        kill_quietly(transport.pid)


@pytest.mark.usefixtures("short_graces")
async def test_close_ends_every_process_of_a_shell_wrapper(spawn: Spawn, tmp_path: Path) -> None:
    pid_file = tmp_path / "server.pid"
    grandchild_file = tmp_path / "grandchild.pid"
    program, args = server_command(
        "--ignore-eof", "--ignore-term",
        "--pid-file", str(pid_file), "--grandchild-pid-file", str(grandchild_file),
    )  # fmt: skip
    # The shell stays the parent (the "; true" keeps it from exec-ing the server).
    wrapper = ["sh", "-c", f"{shlex.join([program, *args])}; true"]
    transport = await spawn(command=wrapper)
    await connect(transport)
    server, grandchild = await read_pid(pid_file), await read_pid(grandchild_file)
    assert transport.pid not in (server, grandchild)
    try:
        await transport.close()
        assert transport.pid is not None and not alive(transport.pid)
        assert not alive(server)
        assert not alive(grandchild)
    finally:
        kill_quietly(server, grandchild)


async def test_a_start_cancelled_as_the_child_appears_still_closes_cleanly(
    spawn: Spawn, monkeypatch: pytest.MonkeyPatch
) -> None:
    transport = await spawn()
    starting = asyncio.create_task(transport.start(ignore_message, ignore_close))
    made = stdio._ChildProtocol.connection_made

    def cancel_the_start(self: stdio._ChildProtocol, pipe: asyncio.BaseTransport) -> None:
        made(self, pipe)
        starting.cancel()  # a startup timeout or close_all striking at this very moment

    monkeypatch.setattr(stdio._ChildProtocol, "connection_made", cancel_the_start)
    with pytest.raises(asyncio.CancelledError):
        await starting

    async with asyncio.timeout(20):
        await transport.close()
    assert transport.pid is not None
    assert not alive(transport.pid)


async def test_requests_after_close_fail_and_close_is_idempotent(spawn: Spawn) -> None:
    transport = await spawn()
    await connect(transport)
    await transport.close()
    await transport.close()
    with pytest.raises(TransportClosed):
        await transport.request({"jsonrpc": "2.0", "id": 99, "method": "ping"})
    with pytest.raises(TransportClosed):
        await transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def test_close_fails_a_pending_request_at_once(spawn: Spawn) -> None:
    transport = await spawn("--reverse-batch", "2")
    client = await connect(transport, request_timeout=600)
    held = asyncio.create_task(client.call_tool("echo", {"text": "held"}))
    await wait_until(lambda: bool(transport._pending))  # the request is on its way
    async with asyncio.timeout(20):
        await transport.close()
        with pytest.raises(TransportClosed):
            await held


def test_the_description_names_the_command_line() -> None:
    transport = StdioTransport("python3", ["server.py", "--x"])
    assert transport.describe() == "stdio: python3 server.py --x"


# -- ending by itself --------------------------------------------------------------------


class CloseRecorder:
    """An ``on_close`` handler that keeps every reason it is told."""

    def __init__(self) -> None:
        self.reasons: list[str] = []
        self.called = asyncio.Event()

    def __call__(self, reason: str) -> None:
        self.reasons.append(reason)
        self.called.set()


def call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def test_on_close_hears_once_why_a_server_died_while_idle(spawn: Spawn) -> None:
    transport = await spawn()
    on_close = CloseRecorder()
    await transport.start(ignore_message, on_close)
    # Sent as a message nobody waits for: the transport is idle when the server dies.
    await transport.send(call(1, "crash", {"code": 4, "message": "gone for good"}))

    async with asyncio.timeout(20):
        await on_close.called.wait()
    await transport.close()

    [reason] = on_close.reasons
    assert "exited with code 4" in reason and "gone for good" in reason
    assert transport.closed_reason == reason
    with pytest.raises(ProcessExited, match="exited with code 4"):
        await transport.request({"jsonrpc": "2.0", "id": 2, "method": "ping"})


async def test_our_own_close_is_no_reason_on_close_hears_of(spawn: Spawn) -> None:
    transport = await spawn()
    on_close = CloseRecorder()
    await transport.start(ignore_message, on_close)
    async with asyncio.timeout(20):
        answer = await transport.request(call(1, "echo", {"text": "hi"}))
    assert text_of(answer["result"]) == "hi"

    await transport.close()

    assert transport.returncode == 0  # it exited, on the stdin EOF we sent
    assert on_close.reasons == []
    assert transport.closed_reason is None


@pytest.mark.usefixtures("short_graces")
async def test_a_stdout_line_over_the_cap_fails_every_waiter_naming_the_size_and_ends_the_server(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    program, args = server_command("--reverse-batch", "2", "--grandchild-pid-file", str(pid_file))
    transport = StdioTransport(program, args, name="test", max_message_bytes=1_000_000)
    on_close = CloseRecorder()
    await transport.start(ignore_message, on_close)
    grandchild = await read_pid(pid_file)
    try:
        held = asyncio.create_task(transport.request(call(1, "echo", {"text": "held"})))
        await wait_until(lambda: 1 in transport._pending)
        async with asyncio.timeout(20):
            with pytest.raises(MessageTooLarge) as info:
                await transport.request(call(2, "flood", {"bytes": 2_000_000}))
            with pytest.raises(MessageTooLarge):
                await held
            await on_close.called.wait()
            # Nothing asked for it: the transport closes the child (and its group) by itself.
            # The group dies member by member: wait for each, never assume an order.
            assert transport.pid is not None
            pid = transport.pid
            await wait_until(lambda: not alive(grandchild) and not alive(pid), timeout=20)
        message = str(info.value)
        assert message.startswith("server sent a single message larger than 976.6 KiB (")
        assert on_close.reasons == [message]
        assert transport.closed_reason == message
        assert len(transport._buffer) == 0  # the megabytes are not kept
    finally:
        await transport.close()
        kill_quietly(grandchild)


# -- hurrying and killing ----------------------------------------------------------------


@pytest.fixture
def signals_sent(monkeypatch: pytest.MonkeyPatch) -> list[signal.Signals]:
    """Every signal the transport sends a process group, in order."""
    sent: list[signal.Signals] = []
    send = stdio._signal_group

    def record(pgid: int, sig: signal.Signals) -> None:
        sent.append(sig)
        send(pgid, sig)

    monkeypatch.setattr(stdio, "_signal_group", record)
    return sent


@pytest.fixture
def endless_graces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Graces no test could wait out: a close that finishes must have skipped them."""
    monkeypatch.setattr(stdio, "STDIN_CLOSE_GRACE_S", 3600.0)
    monkeypatch.setattr(stdio, "TERMINATE_GRACE_S", 3600.0)


@pytest.mark.usefixtures("endless_graces")
async def test_hurry_during_the_terminate_grace_kills_a_server_that_ignores_sigterm(
    spawn: Spawn, signals_sent: list[signal.Signals], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stdio, "STDIN_CLOSE_GRACE_S", 0.1)
    transport = await spawn("--ignore-eof", "--ignore-term")
    await transport.start(ignore_message, ignore_close)
    assert transport.pid is not None
    try:
        # It says so once it ignores SIGTERM (a SIGTERM before that would end it).
        await wait_until(lambda: "misbehaving server ready" in transport.diagnostics(), 20)
        closing = asyncio.create_task(transport.close())
        await wait_until(lambda: signal.SIGTERM in signals_sent, timeout=20)
        assert alive(transport.pid)  # SIGTERM ignored: the close waits out its grace

        transport.hurry()

        async with asyncio.timeout(20):  # far below the grace it would otherwise wait
            await closing
        assert not alive(transport.pid)
        assert transport.returncode == -signal.SIGKILL
    finally:
        kill_quietly(transport.pid)


@pytest.mark.usefixtures("endless_graces")
async def test_hurry_before_close_makes_the_close_kill_at_once(
    spawn: Spawn, signals_sent: list[signal.Signals]
) -> None:
    transport = await spawn("--ignore-eof", "--ignore-term")
    await transport.start(ignore_message, ignore_close)
    assert transport.pid is not None
    try:
        transport.hurry()
        assert alive(transport.pid)  # no close yet: nothing to hurry

        async with asyncio.timeout(20):
            await transport.close()

        assert not alive(transport.pid)
        assert signals_sent[0] == signal.SIGKILL  # no SIGTERM and no grace first
    finally:
        kill_quietly(transport.pid)


async def test_kill_now_kills_the_whole_group_at_once(spawn: Spawn, tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    transport = await spawn("--ignore-term", "--grandchild-pid-file", str(pid_file))
    await transport.start(ignore_message, ignore_close)
    grandchild = await read_pid(pid_file)
    assert transport.pid is not None
    try:
        transport.kill_now()

        await wait_until(lambda: not alive(grandchild) and not alive(transport.pid or 0), 20)
    finally:
        kill_quietly(transport.pid, grandchild)


@pytest.mark.usefixtures("endless_graces")
async def test_a_close_whose_own_task_is_cancelled_still_kills_the_group(
    spawn: Spawn, tmp_path: Path
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    transport = await spawn("--ignore-eof", "--ignore-term", "--grandchild-pid-file", str(pid_file))
    await transport.start(ignore_message, ignore_close)
    grandchild = await read_pid(pid_file)
    try:
        closing = asyncio.create_task(transport.close())
        await wait_until(lambda: transport._grace is not None)  # in the stdin grace
        assert transport._close_task is not None
        transport._close_task.cancel()  # as asyncio.run does to every task as it ends
        with pytest.raises(asyncio.CancelledError):
            await closing

        await wait_until(lambda: not alive(grandchild) and not alive(transport.pid or 0), 20)
        async with asyncio.timeout(20):
            await transport.close()  # a later close finishes the job, without the graces
        assert transport.returncode == -signal.SIGKILL
    finally:
        kill_quietly(grandchild)


ABANDONING = r"""
import asyncio, sys
from cat_code.mcp.transports.stdio import StdioTransport
from cat_code.mcp.transports.base import ignore_close, ignore_message

async def main():
    transport = StdioTransport(sys.argv[2], sys.argv[3:])
    await transport.start(ignore_message, ignore_close)
    while True:  # both pids written: the group is complete
        try:
            if all(open(p).read().strip() for p in sys.argv[-3::2]):
                break
        except OSError:
            pass
        await asyncio.sleep(0.01)
    if sys.argv[1] == "close-left-running":
        asyncio.ensure_future(transport.close())
        await asyncio.sleep(0)  # the close has begun: its grace is ahead of it

asyncio.run(main())
"""


@pytest.mark.parametrize("how", ["never-closed", "close-left-running"])
async def test_a_program_that_ends_without_finishing_a_close_leaves_no_process_behind(
    tmp_path: Path, how: str
) -> None:
    server_file, grandchild_file = tmp_path / "server.pid", tmp_path / "grandchild.pid"
    program, args = server_command(
        "--ignore-eof", "--ignore-term",
        "--pid-file", str(server_file), "--grandchild-pid-file", str(grandchild_file),
    )  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", ABANDONING, how, program, *args, env=env
    )
    try:
        async with asyncio.timeout(30):
            assert await process.wait() == 0
        server, grandchild = await read_pid(server_file), await read_pid(grandchild_file)
        await wait_until(lambda: not alive(server) and not alive(grandchild), 20)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        for path in (server_file, grandchild_file):
            if path.exists() and path.read_text().strip():
                kill_quietly(int(path.read_text()))


# -- spawned before anyone listens ---------------------------------------------------------

#: Says two things at once, unasked, then serves nothing and exits on stdin EOF.
_CHATTY = (
    "import sys\n"
    'note = \'{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d}}\\n\'\n'
    "sys.stdout.write(note % 1 + note % 2)\n"
    "sys.stdout.flush()\n"
    "sys.stdin.read()\n"
)


class SpeakingObserver:
    """A `ProcessGroupObserver` that says when the child first wrote to stdout."""

    def __init__(self) -> None:
        self.spoke = asyncio.Event()

    def started(self, pgid: int) -> None:
        pass

    def settled(self, pgid: int) -> None:
        self.spoke.set()

    def ended(self, pgid: int) -> None:
        pass


async def test_what_a_spawned_child_says_before_start_is_delivered_in_order_at_start() -> None:
    observer = SpeakingObserver()
    transport = StdioTransport(sys.executable, ["-c", _CHATTY], name="test", observer=observer)
    try:
        await transport.spawn()
        assert transport.spawned and transport.pid is not None
        async with asyncio.timeout(20):
            await observer.spoke.wait()  # both lines were read (one write) and held
        received: list[dict[str, Any]] = []

        await transport.start(received.append, ignore_close)

        assert not transport.spawned
        assert [m["params"]["n"] for m in received] == [1, 2]
    finally:
        await transport.close()
    assert transport.returncode == 0  # it exited on the stdin EOF the close sent


async def test_a_spawned_child_that_exits_before_start_is_reported_at_start(
    spawn: Spawn,
) -> None:
    transport = await spawn("--exit-at-start", "7")
    await transport.spawn()
    await wait_until(lambda: transport.closed_reason is not None, timeout=20)
    on_close = CloseRecorder()

    await transport.start(ignore_message, on_close)

    [reason] = on_close.reasons
    assert "exited with code 7" in reason and "fatal: cannot start" in reason
    with pytest.raises(ProcessExited, match="exited with code 7"):
        await transport.request({"jsonrpc": "2.0", "id": 1, "method": "ping"})


async def test_a_spawned_transport_then_started_serves_a_whole_session(spawn: Spawn) -> None:
    transport = await spawn()
    await transport.spawn()

    client = await connect(transport)

    async with asyncio.timeout(20):
        assert text_of(await client.call_tool("echo", {"text": "early"})) == "early"
    with pytest.raises(RuntimeError, match="already started"):
        await transport.start(ignore_message, ignore_close)


async def test_closing_a_spawned_transport_never_started_ends_its_whole_group(
    spawn: Spawn, tmp_path: Path
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    transport = await spawn("--ignore-eof", "--grandchild-pid-file", str(pid_file))
    await transport.spawn()
    grandchild = await read_pid(pid_file)
    assert transport.pid is not None and alive(transport.pid) and alive(grandchild)
    try:
        await transport.close()

        assert not alive(transport.pid)
        assert not alive(grandchild)
    finally:
        kill_quietly(transport.pid, grandchild)


async def test_a_command_that_cannot_be_spawned_is_not_left_spawned() -> None:
    transport = StdioTransport("cat-code-no-such-command-xyz", [], name="test")
    with pytest.raises(ConnectError, match="command not found"):
        await transport.spawn()
    assert not transport.spawned
    await transport.close()


class _Remembered:
    """An in-memory `EofMemory`: what it says, and what it was told."""

    def __init__(self, ignores: bool) -> None:
        self.ignores = ignores
        self.told: list[bool] = []

    def ignores_eof(self, command: Sequence[str], cwd: str | None) -> bool:
        return self.ignores

    def remember(self, command: Sequence[str], cwd: str | None, ignores: bool) -> None:
        self.told.append(ignores)


async def _closed_with(memory: _Remembered, *flags: str) -> StdioTransport:
    program, args = server_command(*flags)
    transport = StdioTransport(program, args, name="test", eof_memory=memory)
    await connect(transport)
    assert transport.pid is not None
    try:
        await transport.close()
        assert not alive(transport.pid)
    finally:
        kill_quietly(transport.pid)
    return transport


async def test_a_server_seen_ignoring_eof_is_remembered_and_the_next_close_waits_less() -> None:
    first = _Remembered(ignores=False)
    transport = await _closed_with(first, "--ignore-eof")
    assert first.told == [True]
    assert transport.eof_grace_used == stdio.STDIN_CLOSE_GRACE_S

    again = _Remembered(ignores=True)
    transport = await _closed_with(again, "--ignore-eof")
    assert again.told == []  # the same verdict: nothing to write
    assert transport.eof_grace_used == stdio.REMEMBERED_EOF_GRACE_S
    assert transport.returncode == -signal.SIGTERM  # EOF first, then SIGTERM as before


async def test_a_server_that_now_exits_on_eof_is_remembered_so_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The shortened grace is 10 ms: on a loaded machine a Python child may need longer to
    # be scheduled at all. What is tested is the verdict, not the 10 ms, so the grace is
    # widened (the close still returns the moment the child exits).
    monkeypatch.setattr(stdio, "REMEMBERED_EOF_GRACE_S", 5.0)
    memory = _Remembered(ignores=True)
    transport = await _closed_with(memory)
    assert transport.returncode == 0  # it still had its chance to leave by itself
    assert memory.told == [False]
