"""``kill -9`` of a running ``cat-code`` leaves its servers behind; the next ``cat-code``
ends them (and only them): the real command, real server processes, a real CAT_CODE_HOME.

The server ignores stdin EOF, as a server stuck in a long job does, so the SIGKILL of
its owner really leaves it running; the next run's reaper must find it through the
record under ``$CAT_CODE_HOME/run/``. An unrelated process whose pid a stale record names
(as if the pid had been reused) must survive that same run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from scripted.processes import REPO, alive

SERVER = REPO / "tests" / "servers" / "misbehaving_server.py"

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.fixture
def pids() -> Iterator[list[int]]:
    """Pids the test must see gone at the end, whatever happened (SIGKILLed if not)."""
    found: list[int] = []
    yield found
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_the_next_cat_code_ends_the_servers_of_one_killed_with_sigkill(
    tmp_path: Path, cat_code_home: Path, pids: list[int]
) -> None:
    log, pidfile = tmp_path / "requests.log", tmp_path / "server.pid"
    server = {
        "command": sys.executable,
        "args": [str(SERVER), "--tools", "echo,block", "--ignore-eof",
                 "--pid-file", str(pidfile), "--log-requests", str(log)],
    }  # fmt: skip
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"slow": server}}))
    empty = tmp_path / "none.json"
    empty.write_text(json.dumps({"mcpServers": {}}))
    command = [sys.executable, "-m", "cat_code"]

    # A cat-code stuck in a tool call that never returns...
    stuck = subprocess.Popen(
        [*command, "--mcp-config", str(config), "mcp", "call", "mcp__slow__block", "{}"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    pids.append(stuck.pid)
    wait_for(lambda: "tools/call block" in _text(log), "the blocking call to reach the server")
    server_pid = int(pidfile.read_text())
    pids.append(server_pid)
    [record] = [json.loads(p.read_text()) for p in (cat_code_home / "run").glob("*.json")]
    assert (record["ownerPid"], record["pid"], record["pgid"]) == (
        stuck.pid,
        server_pid,
        server_pid,
    )
    assert record["cmdline"] == [sys.executable, *server["args"]]

    # ... is killed outright: no close runs, its server lives on.
    stuck.send_signal(signal.SIGKILL)
    assert stuck.wait(10) == -signal.SIGKILL
    assert alive(server_pid)

    # An unrelated process whose pid a stale record names (the pid was reused).
    unrelated = subprocess.Popen(["sleep", "120"], start_new_session=True)
    pids.append(unrelated.pid)
    stale = dict(record, pid=unrelated.pid, pgid=unrelated.pid)
    stale_path = cat_code_home / "run" / f"stdio-{stuck.pid}-{unrelated.pid}.json"
    stale_path.write_text(json.dumps(stale))

    # The next cat-code, whatever it runs, ends the orphan.
    run = subprocess.run(
        [*command, "--mcp-config", str(empty), "mcp", "list"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert run.returncode == 0, run.stderr
    wait_for(lambda: not alive(server_pid), "the orphaned server to be ended", timeout=10)
    assert alive(unrelated.pid) and unrelated.poll() is None
    assert list((cat_code_home / "run").glob("*.json")) == []
    unrelated.kill()
    unrelated.wait(10)


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def test_what_a_server_started_is_ended_even_after_the_server_exited_on_eof(
    tmp_path: Path, cat_code_home: Path, pids: list[int]
) -> None:
    # The server exits when the killed cat-code's pipe closes, as most do; the process it
    # started (a wrapper's real server, a worker) keeps running in its group.
    log, pidfile, grandchild = tmp_path / "requests.log", tmp_path / "server.pid", tmp_path / "gc"
    server = {
        "command": sys.executable,
        "args": [str(SERVER), "--tools", "echo,block", "--pid-file", str(pidfile),
                 "--grandchild-pid-file", str(grandchild), "--log-requests", str(log)],
    }  # fmt: skip
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"wrapper": server}}))
    empty = tmp_path / "none.json"
    empty.write_text(json.dumps({"mcpServers": {}}))
    command = [sys.executable, "-m", "cat_code"]
    stuck = subprocess.Popen(
        [*command, "--mcp-config", str(config), "mcp", "call", "mcp__wrapper__block", "{}"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    pids.append(stuck.pid)
    wait_for(lambda: "tools/call block" in _text(log), "the blocking call to reach the server")
    server_pid, survivor = int(pidfile.read_text()), int(grandchild.read_text())
    pids.extend([server_pid, survivor])

    stuck.send_signal(signal.SIGKILL)
    assert stuck.wait(10) == -signal.SIGKILL
    wait_for(lambda: not alive(server_pid), "the server to exit on EOF", timeout=10)
    assert alive(survivor)

    run = subprocess.run(
        [*command, "--mcp-config", str(empty), "mcp", "list"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert run.returncode == 0, run.stderr
    wait_for(lambda: not alive(survivor), "the survivor to be ended", timeout=10)
    assert list((cat_code_home / "run").glob("*.json")) == []
