"""Background jobs through the real ``cat-code`` and the scripted model API.

The model starts a command in the background, keeps working, and is told when the job
ends (before its next request); ``-p`` finishing ends a job still running and says so;
the REPL shows the end at once without breaking what the user is typing, and ``/exit``
ends what runs; a ``cat-code`` killed with SIGKILL leaves its job to the next start,
which ends it. Each job's whole process group is checked gone in /proc.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use, tool_results
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def environment(tmp_path: Path, api: ScriptedModelApi) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    return env


def wait_for(condition: Callable[[], object], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def group_alive(pgid: int) -> bool:
    """Whether a live (non-zombie) process is in group ``pgid``, from /proc."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                raw = Path(f"/proc/{entry}/stat").read_bytes()
            except OSError:
                continue
            fields = raw[raw.rfind(b")") + 2 :].split()
            if fields[0] != b"Z" and int(fields[2]) == pgid:
                return True
    return False


def gone(pgid: int, timeout: float = 10.0) -> bool:
    """Whether group ``pgid`` is gone within a bounded wait (a killed process needs the
    scheduler to finish dying; on a loaded machine that is not at once)."""
    deadline = time.monotonic() + timeout
    while group_alive(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def records(home: Path) -> list[dict[str, Any]]:
    found = []
    for path in (home / "jobs").glob("*.json"):
        text = path.read_text()
        if text:
            found.append(json.loads(text))
    return found


def job_id_of(request: dict[str, Any]) -> str:
    [result] = tool_results(request)
    text = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    found = re.search(r"background job ([0-9a-f]{6})", text)
    assert found, text
    return found.group(1)


@pytest.fixture
def groups() -> Iterator[list[int]]:
    """Process groups the test must see gone at the end (SIGKILLed if not)."""
    found: list[int] = []
    yield found
    for pgid in found:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def test_the_model_starts_a_server_keeps_working_and_is_told_when_the_job_ends(
    tmp_path: Path, cat_code_home: Path, groups: list[int]
) -> None:
    gate = tmp_path / "gate"
    server = f"echo serving on 8080; while [ ! -e {gate} ]; do sleep 0.02; done; echo bye; exit 4"
    seen: dict[str, str] = {}

    def keep_working(request: dict[str, Any]) -> dict[str, Any]:
        seen["id"] = job_id_of(request)
        [record] = records(cat_code_home)
        groups.append(record["pgid"])
        assert record["state"] == "running" and group_alive(record["pgid"])
        gate.touch()  # the server stops by itself while the model works on
        wait_for(lambda: records(cat_code_home)[0]["state"] == "exited", "the job to end")
        return anthropic_tool_use("read_file", {"path": "notes.txt"})

    def told(request: dict[str, Any]) -> dict[str, Any]:
        last = request["messages"][-1]["content"]
        text = "\n".join(b.get("text", "") for b in last if b.get("type") == "text")
        assert "<system-notification>" in text
        assert f"Background job {seen['id']} ended: exited with code 4" in text
        assert "serving on 8080" in text and "bye" in text
        return anthropic_text("The server stopped with code 4.")

    (tmp_path / "notes.txt").write_text("todo\n")
    start = {"command": server, "run_in_background": True}
    with ScriptedModelApi([anthropic_tool_use("shell", start), keep_working, told]) as api:
        run = subprocess.run(
            [CAT_CODE, "-p", "start the server", "--yes", "--output-format", "stream-json",
             "--mcp-config", str(tmp_path / "none.json")],
            cwd=tmp_path, env=environment(tmp_path, api), capture_output=True, text=True,
            timeout=90, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    assert f"cat-code: background job {seen['id']} exited with code 4" in run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    [note] = [line for line in lines if line.get("subtype") == "notification"]
    assert (note["type"], note["kind"], note["job_id"], note["exit_code"]) == (
        "system",
        "job_ended",
        seen["id"],
        4,
    )
    assert gone(groups[0])


def test_a_job_still_running_when_p_finishes_is_ended_and_named(
    tmp_path: Path, cat_code_home: Path, groups: list[int]
) -> None:
    pidfile = tmp_path / "child.pid"
    command = f"sh -c 'trap \"\" TERM; echo $$ > {pidfile}; exec sleep 300' & wait"
    start = {"command": command, "run_in_background": True}

    def finish(request: dict[str, Any]) -> dict[str, Any]:
        wait_for(pidfile.exists, "the job's child")
        groups.append(records(cat_code_home)[0]["pgid"])
        return anthropic_text("started")

    with ScriptedModelApi([anthropic_tool_use("shell", start), finish]) as api:
        run = subprocess.run(
            [CAT_CODE, "-p", "start it", "--yes", "--mcp-config", str(tmp_path / "none.json")],
            cwd=tmp_path, env=environment(tmp_path, api), capture_output=True, text=True,
            timeout=90, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    [record] = records(cat_code_home)
    assert f"cat-code: ended background job {record['id']}: sh -c" in run.stderr
    assert record["state"] == "ended_at_exit"
    assert gone(groups[0])  # the child that ignored SIGTERM too


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_p_ends_its_running_job_and_names_it(
    tmp_path: Path, cat_code_home: Path, groups: list[int], sig: signal.Signals
) -> None:
    start = {"command": "sleep 300", "run_in_background": True}
    release = threading.Event()

    def stuck(request: dict[str, Any]) -> dict[str, Any]:
        release.wait(30)  # cat-code is signalled while it waits for this answer
        return anthropic_text("never seen")

    with ScriptedModelApi([anthropic_tool_use("shell", start), stuck]) as api:
        run = subprocess.Popen(
            [CAT_CODE, "-p", "start it", "--yes", "--mcp-config", str(tmp_path / "none.json")],
            cwd=tmp_path, env=environment(tmp_path, api), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            wait_for(lambda: len(api.requests) == 2, "the second request")
            [record] = records(cat_code_home)
            groups.append(record["pgid"])
            run.send_signal(sig)
            _, stderr = run.communicate(timeout=30)
        finally:
            release.set()
            if run.poll() is None:
                run.kill()
                run.wait(10)
    assert run.returncode == 128 + sig.value, stderr
    assert f"ended background job {record['id']}: sleep 300" in stderr
    assert gone(record["pgid"])
    assert records(cat_code_home)[0]["state"] == "ended_at_exit"


def test_the_next_cat_code_ends_the_job_of_one_killed_with_sigkill(
    tmp_path: Path, cat_code_home: Path, groups: list[int]
) -> None:
    pidfile = tmp_path / "child.pid"
    start = {"command": f"echo $$ > {pidfile}; sleep 300; echo never", "run_in_background": True}

    def stuck(request: dict[str, Any]) -> dict[str, Any]:
        killed.wait(30)  # cat-code is killed while it waits for this answer
        return anthropic_text("never seen")

    killed = threading.Event()
    with ScriptedModelApi([anthropic_tool_use("shell", start), stuck]) as api:
        owner = subprocess.Popen(
            [CAT_CODE, "-p", "start it", "--yes", "--mcp-config", str(tmp_path / "none.json")],
            cwd=tmp_path, env=environment(tmp_path, api), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            wait_for(lambda: len(api.requests) == 2, "the second request")
            [record] = records(cat_code_home)
            groups.append(record["pgid"])
            assert record["ownerPid"] == owner.pid and group_alive(record["pgid"])
            owner.send_signal(signal.SIGKILL)
            assert owner.wait(10) == -signal.SIGKILL
        finally:
            killed.set()
            if owner.poll() is None:
                owner.kill()
                owner.wait(10)
    assert group_alive(record["pgid"])  # nothing ended it: its owner died at once

    # The next cat-code to start, whatever it runs, ends the job's group...
    (tmp_path / "none.json").write_text('{"mcpServers": {}}')
    start_up = subprocess.run(
        [CAT_CODE, "--mcp-config", str(tmp_path / "none.json"), "mcp", "list"], cwd=tmp_path,
        env=environment(tmp_path, api), capture_output=True, text=True, timeout=60,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert start_up.returncode == 0, start_up.stderr
    assert gone(record["pgid"])
    # ... and the registry says so.
    listing = subprocess.run(
        [CAT_CODE, "jobs", "--json"], cwd=tmp_path, env=environment(tmp_path, api),
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip

    assert listing.returncode == 0, listing.stderr
    [shown] = json.loads(listing.stdout)
    assert shown["id"] == record["id"] and shown["state"] == "orphan_ended"
    assert f"its cat-code (pid {owner.pid}) was killed" in shown["reason"]
    assert gone(record["pgid"])
    assert list((cat_code_home / "run").glob("*.json")) == []


def test_the_repl_shows_the_end_at_once_keeps_the_typed_line_and_exit_ends_the_rest(
    tmp_path: Path, cat_code_home: Path, groups: list[int]
) -> None:
    gate = tmp_path / "gate"
    quick = f"while [ ! -e {gate} ]; do sleep 0.02; done; echo finished"
    starts = [
        anthropic_tool_use("shell", {"command": quick, "run_in_background": True}),
        anthropic_tool_use("shell", {"command": "sleep 300", "run_in_background": True}),
        anthropic_text("both started"),
    ]

    def told(request: dict[str, Any]) -> dict[str, Any]:
        last = request["messages"][-1]["content"]
        text = last if isinstance(last, str) else "\n".join(b.get("text", "") for b in last)
        assert text.startswith("hello world")
        assert "exited with code 0" in text and "finished" in text
        return anthropic_text("noted")

    project = tmp_path / "project"
    project.mkdir()
    (project / "none.json").write_text('{"mcpServers": {}}')
    with ScriptedModelApi([*starts, told]) as api:
        term = Terminal(
            CAT_CODE, ["--mcp-config", "none.json", "--yes"],
            env=environment(tmp_path, api), cwd=project,
        )  # fmt: skip
        try:
            term.wait_for("›")
            term.type("start two jobs")
            term.wait_for("both started")
            # (The bottom toolbar needs cursor-position reports, which this pty never sends.)
            term.type("/jobs")
            term.wait_for("background jobs: 2 running, 0 ended")
            for record in records(cat_code_home):
                groups.append(record["pgid"])
            term.press("hello wor")
            gate.touch()
            term.wait_for("exited with code 0: while")
            term.press("ld\r")
            term.wait_for("noted")
            term.type("/jobs")
            term.wait_for("background jobs: 1 running, 1 ended")
            term.type("/exit")
            term.wait_for("ended background job")
            assert term.wait_for_exit() == 0
        finally:
            term.close()
    assert api.errors == []
    assert all(gone(pgid) for pgid in groups)
    states = sorted(record["state"] for record in records(cat_code_home))
    assert states == ["ended_at_exit", "exited"]


def test_a_closed_terminal_ends_the_repls_running_job(
    tmp_path: Path, cat_code_home: Path, groups: list[int]
) -> None:
    start = anthropic_tool_use("shell", {"command": "sleep 300", "run_in_background": True})
    project = tmp_path / "project"
    project.mkdir()
    (project / "none.json").write_text('{"mcpServers": {}}')
    with ScriptedModelApi([start, anthropic_text("started")]) as api:
        term = Terminal(
            CAT_CODE, ["--mcp-config", "none.json", "--yes"],
            env=environment(tmp_path, api), cwd=project,
        )  # fmt: skip
        try:
            term.wait_for("›")
            term.type("start it")
            term.wait_for("started")
            [record] = records(cat_code_home)
            groups.append(record["pgid"])
            assert group_alive(record["pgid"])
            term.signal(signal.SIGHUP)
            assert term.wait_for_exit() == 128 + signal.SIGHUP
        finally:
            term.close()
    assert gone(record["pgid"])
    assert records(cat_code_home)[0]["state"] == "ended_at_exit"
