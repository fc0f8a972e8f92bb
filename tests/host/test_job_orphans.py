"""`settle_orphans`: the jobs of a cat-code killed with SIGKILL are ended through the run
records' pid-reuse guard, and a process that merely reuses a recorded pid is left alone."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cat_code.host.jobs import JobRecord, JobState, load_all, settle_orphans
from cat_code.host.jobs.orphans import KEEP_ENDED_S
from cat_code.host.jobs.record import save
from cat_code.host.state.run_records import command_line, run_dir, start_time

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def group_alive(pgid: int) -> bool:
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


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, 9)
        process.wait(10)


def dead_owner() -> tuple[int, int]:
    """A pid and start time of a process that has ended (a killed cat-code)."""
    owner = subprocess.Popen(["sleep", "30"])
    started = start_time(owner.pid)
    owner.kill()
    owner.wait(10)
    assert started is not None
    return owner.pid, started


def recorded(pid: int, owner: tuple[int, int], *, start: int, cmdline: list[str]) -> None:
    """The run record the killed cat-code had written for group ``pid``."""
    record = {
        "version": 1, "ownerPid": owner[0], "ownerStart": owner[1], "pgid": pid, "pid": pid,
        "cmdline": cmdline, "start": start, "members": [[pid, start]],
        "boot": Path("/proc/sys/kernel/random/boot_id").read_text().strip(),
        "pidNamespace": os.readlink("/proc/self/ns/pid"),
    }  # fmt: skip
    run_dir().mkdir(parents=True, exist_ok=True)
    (run_dir() / f"stdio-{owner[0]}-{pid}.json").write_text(json.dumps(record))


def job(job_id: str, pid: int, owner: tuple[int, int], leader_start: int) -> JobRecord:
    return JobRecord(
        id=job_id, command="sleep 300", cwd="/", pid=pid, pgid=pid, leader_start=leader_start,
        started_at=time.time(), owner_pid=owner[0], owner_start=owner[1],
    )  # fmt: skip


def test_a_killed_owners_job_is_ended_and_a_reused_pid_is_left_alone(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    owner = dead_owner()
    argv = ["bash", "-c", 'eval "$1"', "cat-code-job", "sleep 300"]
    orphan = subprocess.Popen(argv, start_new_session=True)
    unrelated = subprocess.Popen(["sleep", "300"], start_new_session=True)
    processes += [orphan, unrelated]
    deadline = time.monotonic() + 10
    while command_line(orphan.pid) != argv and time.monotonic() < deadline:
        time.sleep(0.01)
    orphan_start, unrelated_start = start_time(orphan.pid), start_time(unrelated.pid)
    assert orphan_start is not None and unrelated_start is not None
    recorded(orphan.pid, owner, start=orphan_start, cmdline=argv)
    # As if the unrelated process had taken the pid of a job that ended meanwhile.
    recorded(unrelated.pid, owner, start=unrelated_start - 1, cmdline=argv)
    folder = tmp_path / "jobs"
    folder.mkdir()
    save(folder, job("aaaaaa", orphan.pid, owner, orphan_start))
    save(folder, job("bbbbbb", unrelated.pid, owner, unrelated_start - 1))

    settled = settle_orphans(folder)

    assert {r.id for r in settled.ended} == {"aaaaaa", "bbbbbb"}
    assert gone(orphan.pid)
    assert unrelated.poll() is None and group_alive(unrelated.pid)
    records = {r.id: r for r in load_all(folder)[0]}
    assert records["aaaaaa"].state is JobState.ORPHAN_ENDED
    assert f"its cat-code (pid {owner[0]}) was killed" in (records["aaaaaa"].reason or "")
    assert f"ended by cat-code pid {os.getpid()}" in (records["aaaaaa"].reason or "")
    assert "a later cat-code" in (records["bbbbbb"].reason or "")
    assert list(run_dir().glob("*.json")) == []


def test_a_live_owners_job_is_kept_a_corrupt_record_is_skipped_and_old_ones_go(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    folder = tmp_path / "jobs"
    folder.mkdir()
    me = (os.getpid(), start_time(os.getpid()) or 0)
    save(folder, job("cccccc", 999_999, me, 1))
    (folder / "dddddd.json").write_text("{not json")
    old = job("eeeeee", 999_998, me, 1)
    old.state, old.ended_at = JobState.EXITED, time.time() - KEEP_ENDED_S - 60
    save(folder, old)
    (folder / "eeeeee.log").write_text("output")
    claimed = folder / "ffffff.json"  # an id claimed by a cat-code killed while starting
    claimed.touch()
    os.utime(claimed, (time.time() - 3600, time.time() - 3600))
    fresh = folder / "000000.json"  # one being started right now
    fresh.touch()

    settled = settle_orphans(folder)

    assert settled.ended == []
    assert len(settled.warnings) == 1 and "dddddd.json" in settled.warnings[0]
    records = {r.id: r for r in load_all(folder)[0]}
    assert set(records) == {"cccccc"} and records["cccccc"].running
    assert not (folder / "eeeeee.log").exists()
    assert not claimed.exists() and fresh.exists()
