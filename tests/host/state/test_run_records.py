"""Run records and reaping, with real processes: what is recorded, what is ended, and that a
pid now running something else is never signalled.

A record "left by a killed cat-code" is written here by hand, naming an owner that is
gone (the pid of a process that has exited); the groups are real processes the test
starts in sessions of their own and ends itself if the reaper did not.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.processes import alive
from scripted.procs import kill_quietly, server_command, wait_until

from cat_code.host.state import run_records
from cat_code.host.state.run_records import command_line, reap, run_dir, start_time
from cat_code.mcp.transports.stdio import StdioTransport

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")

SLEEPER = "import sys, time; print('ready', flush=True); time.sleep(120)"
STUBBORN = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ready', flush=True); time.sleep(120)"
)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes the test starts (each in its own session); every one is ended after."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        kill_quietly(process.pid)
        process.wait(10)
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()


def start_group(processes: list[subprocess.Popen[str]], code: str) -> subprocess.Popen[str]:
    """A process group led by a Python process running ``code``, once it said ``ready``."""
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    processes.append(process)
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return process


#: A wrapper that starts the server as a member of its group, then exits on a line of stdin
#: (as ``npx`` or a shell without ``exec`` does on EOF), leaving the server running.
WRAPPER = (
    "import subprocess, sys; "
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
    "print(child.pid, flush=True); print('ready', flush=True); sys.stdin.readline()"
)


def start_wrapper(processes: list[subprocess.Popen[str]]) -> tuple[subprocess.Popen[str], int]:
    """A group led by `WRAPPER`, once ready, and the pid of the member it started."""
    process = subprocess.Popen(
        [sys.executable, "-c", WRAPPER],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    processes.append(process)
    assert process.stdout is not None and process.stdin is not None
    child = int(process.stdout.readline())
    assert process.stdout.readline() == "ready\n"
    return process, child


def leave_orphaned(wrapper: subprocess.Popen[str]) -> None:
    """The wrapper exits (its member lives on) and its record names an owner that is gone."""
    assert wrapper.stdin is not None
    wrapper.stdin.write("eof\n")
    wrapper.stdin.close()
    assert wrapper.wait(10) == 0
    (path,) = run_dir().glob(f"stdio-*-{wrapper.pid}.json")
    path.write_text(json.dumps(dict(json.loads(path.read_text()), ownerPid=dead_pid())))


def dead_pid() -> int:
    """The pid of a process that has exited (an owner that is gone)."""
    process = subprocess.Popen(["true"])
    process.wait(10)
    return process.pid


def write_record(pid: int, **changes: Any) -> Path:
    """A record as a killed cat-code would have left it for the group ``pid`` leads."""
    start, cmdline = start_time(pid), command_line(pid)
    assert start is not None and cmdline is not None
    me = run_records._host()
    assert me is not None
    record = {
        "version": 1,
        "ownerPid": dead_pid(),
        "ownerStart": 12345,
        "pgid": pid,
        "pid": pid,
        "cmdline": cmdline,
        "start": start,
        "boot": me.boot,
        "pidNamespace": me.pid_namespace,
        **changes,
    }
    path = run_dir() / f"stdio-{record['ownerPid']}-{pid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return path


def records() -> list[dict[str, Any]]:
    folder = run_dir()
    if not folder.exists():
        return []
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


async def test_a_stdio_server_is_recorded_while_it_runs_and_forgotten_when_closed(
    cat_code_home: Path,
) -> None:
    command, args = server_command()
    # The wrapper execs the server after it started: the record follows the exec.
    script = f"sleep 0.2; exec {shlex.join([command, *args])}"
    transport = StdioTransport("sh", ["-c", script], observer=run_records.GROUP_RECORDS)
    from cat_code.mcp.client import McpClient

    client = McpClient(transport, name="wrapped")
    try:
        await client.connect()
        # Rewritten off the event loop once the server first spoke: soon, not at once.
        await wait_until(
            lambda: [r["cmdline"] for r in records()] == [[command, *args]], timeout=10
        )
        (record,) = records()
        pid = transport.pid
        assert pid is not None
        assert record["ownerPid"] == os.getpid()
        assert record["ownerStart"] == start_time(os.getpid())
        assert (record["pgid"], record["pid"], record["start"]) == (pid, pid, start_time(pid))
        assert record["cmdline"] == [command, *args] == command_line(pid)
        assert (cat_code_home / "run").stat().st_mode & 0o777 == 0o700
        (path,) = (cat_code_home / "run").glob("*.json")
        assert path.stat().st_mode & 0o777 == 0o600  # a command line may hold a secret
    finally:
        await client.close()
    assert records() == []


def test_an_orphaned_group_whose_owner_is_gone_is_ended_and_its_record_removed(
    processes: list[subprocess.Popen[str]],
) -> None:
    orphan = start_group(processes, SLEEPER)
    path = write_record(orphan.pid)

    report = reap()

    assert report.ended == [orphan.pid]
    assert orphan.wait(10) == -15  # SIGTERM first
    assert not path.exists()


def test_a_group_that_ignores_sigterm_is_killed_after_the_grace(
    processes: list[subprocess.Popen[str]],
) -> None:
    stubborn = start_group(processes, STUBBORN)
    write_record(stubborn.pid)

    report = reap()

    assert report.ended == [stubborn.pid]
    assert stubborn.wait(10) == -9
    assert records() == []


def test_a_pid_now_running_another_command_or_started_at_another_time_is_left_alone(
    processes: list[subprocess.Popen[str]],
) -> None:
    unrelated = start_group(processes, SLEEPER)
    other_command = write_record(unrelated.pid, cmdline=["python", "my_mcp_server.py"])
    also = start_group(processes, SLEEPER)
    other_start = write_record(also.pid, start=(start_time(also.pid) or 0) - 100)

    report = reap()

    assert report.ended == []
    assert sorted(report.stale) == sorted([unrelated.pid, also.pid])
    assert alive(unrelated.pid) and alive(also.pid)
    assert unrelated.poll() is None and also.poll() is None
    assert not other_command.exists() and not other_start.exists()  # stale records go


def test_records_of_a_live_owner_and_of_another_pid_namespace_are_kept(
    processes: list[subprocess.Popen[str]],
) -> None:
    mine = start_group(processes, SLEEPER)
    me = run_records._host()
    assert me is not None
    live_owner = write_record(mine.pid, ownerPid=os.getpid(), ownerStart=me.start)
    theirs = start_group(processes, SLEEPER)
    elsewhere = write_record(theirs.pid, pidNamespace="pid:[1]")

    report = reap()

    assert report.ended == [] and sorted(report.kept) == sorted([mine.pid, theirs.pid])
    assert alive(mine.pid) and alive(theirs.pid)
    assert live_owner.exists() and elsewhere.exists()


def test_records_of_an_earlier_boot_and_unreadable_records_are_deleted(
    processes: list[subprocess.Popen[str]],
) -> None:
    group = start_group(processes, SLEEPER)
    earlier = write_record(group.pid, boot="another-boot")
    broken = run_dir() / "written-by-hand.json"
    broken.write_text("{not json")

    report = reap()

    assert report.ended == [] and alive(group.pid)
    assert not earlier.exists() and not broken.exists()


async def test_creating_a_pool_reaps_nothing_the_front_end_reaps_on_a_thread(
    processes: list[subprocess.Popen[str]],
) -> None:
    from cat_code.host.config.load import McpConfig
    from cat_code.host.servers.pool import McpPool

    orphan = start_group(processes, SLEEPER)
    write_record(orphan.pid)

    async with McpPool(McpConfig()) as pool:
        await pool.connect_all()
        assert alive(orphan.pid) and len(records()) == 1  # no side effect of a pool
        thread = run_records.reap_orphans()  # what each front end does once, at its start
        assert thread is not None
        await wait_until(lambda: not alive(orphan.pid) and records() == [], timeout=10)
    thread.join(10)
    assert run_records.reap_orphans() is None  # nothing left: not even a thread starts


def test_what_a_wrapper_started_is_ended_after_the_wrapper_itself_exited(
    processes: list[subprocess.Popen[str]],
) -> None:
    wrapper, server = start_wrapper(processes)
    try:
        run_records.record_group(wrapper.pid)
        run_records.refresh_group(wrapper.pid)  # as when it first speaks
        (record,) = records()
        assert [server, start_time(server)] in record["members"]
        leave_orphaned(wrapper)
        assert alive(server)

        report = reap()

        assert report.ended == [wrapper.pid]
        wait_for(lambda: not alive(server), "the wrapper's server to be ended")
        assert records() == []
    finally:
        kill_quietly(server)


def test_survivors_of_a_gone_leader_are_left_alone_without_proof_they_are_the_group(
    processes: list[subprocess.Popen[str]],
) -> None:
    # A member the record does not name: the number may have been reused since (a daemon
    # whose session leader exited looks just like this).
    unnamed, unnamed_server = start_wrapper(processes)
    # A member that started before the recorded leader did: not its descendant.
    older, older_server = start_wrapper(processes)
    try:
        run_records.record_group(unnamed.pid)
        run_records.refresh_group(unnamed.pid)
        run_records.record_group(older.pid)
        run_records.refresh_group(older.pid)
        for path in run_dir().glob("*.json"):
            record = json.loads(path.read_text())
            if record["pgid"] == unnamed.pid:
                record["members"] = [[unnamed.pid, record["start"]]]
            else:
                record["start"] = (start_time(older_server) or 0) + 1
            path.write_text(json.dumps(record))
        leave_orphaned(unnamed)
        leave_orphaned(older)

        report = reap()

        assert report.ended == []
        assert sorted(report.stale) == sorted([unnamed.pid, older.pid])
        assert alive(unnamed_server) and alive(older_server)
        assert records() == []
    finally:
        kill_quietly(unnamed_server, older_server)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
