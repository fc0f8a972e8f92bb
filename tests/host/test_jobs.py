"""Background jobs with real processes: started at once, their whole group really ended,
their output capped on disk, their record a file, their end told once to the model."""

from __future__ import annotations

import json
import os
import signal
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cat_code.host.jobs import JobManager, JobState, JobTools, job_tools, load_all
from cat_code.host.jobs.output import OutputFile
from cat_code.host.notifications import NoteKind, NotificationQueue
from cat_code.tools.base import Tool
from cat_code.tools.builtin import ShellTool

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def group_alive(pgid: int) -> bool:
    """Whether a live (non-zombie) process is still in group ``pgid`` (from /proc)."""
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


def wait_until(condition: object, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


@pytest.fixture
def queue() -> NotificationQueue:
    return NotificationQueue()


@pytest.fixture
def manager(tmp_path: Path, queue: NotificationQueue) -> Iterator[JobManager]:
    jobs = JobManager(notes=queue, directory=tmp_path / "jobs", stop_grace=0.5)
    yield jobs
    jobs.end_all()


def tools(manager: JobManager, queue: NotificationQueue) -> dict[str, Tool]:
    both = JobTools(manager, queue)
    found: dict[str, Tool] = {t.name: t for t in job_tools(both)}
    found["shell"] = ShellTool(background=both.start)
    return found


async def test_a_background_shell_answers_at_once_with_an_id_while_the_command_runs(
    manager: JobManager, queue: NotificationQueue, tmp_path: Path
) -> None:
    gate = tmp_path / "go"
    tool = tools(manager, queue)
    command = f"echo started; while [ ! -e {gate} ]; do sleep 0.02; done; echo done; exit 3"
    result = await tool["shell"].execute({"command": command, "run_in_background": True})
    assert not result.is_error, result.content
    [job] = manager.jobs()
    assert f"background job {job.id}" in result.content
    assert not job.ended.is_set()
    record = json.loads((tmp_path / "jobs" / f"{job.id}.json").read_text())
    assert record["command"] == command and record["state"] == "running"
    assert record["pgid"] == job.process.pid and record["ownerPid"] == os.getpid()
    assert stat.S_IMODE((tmp_path / "jobs" / f"{job.id}.log").stat().st_mode) == 0o600

    gate.touch()
    read = await tool["job_output"].execute({"id": job.id, "wait": 10})
    assert f"job {job.id}: exited with code 3" in read.content
    assert "started\n" in read.content and "done" in read.content
    again = await tool["job_output"].execute({"id": job.id})
    assert "(no new output)" in again.content
    [saved], _ = load_all(tmp_path / "jobs")
    assert (saved.state, saved.exit_code) == (JobState.EXITED, 3)
    # The model read the end through job_output: it is not told again; the user is.
    assert queue.take_for_model() == []
    [note] = queue.take_for_user()
    assert note.kind is NoteKind.JOB_ENDED and "exited with code 3" in note.text


async def test_a_job_that_ends_by_itself_is_told_to_the_model_with_its_last_lines(
    manager: JobManager, queue: NotificationQueue
) -> None:
    job = manager.start("for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo line $i; done; exit 1", None)
    assert job.ended.wait(10)
    [note] = queue.take_for_model()
    assert f"Background job {job.id} ended: exited with code 1" in note.model_text
    assert "line 12" in note.model_text and "line 3\n" in note.model_text
    assert "line 2\n" not in note.model_text  # the last ten lines only


async def test_job_stop_ends_the_whole_group_even_a_child_that_ignores_sigterm(
    manager: JobManager, queue: NotificationQueue, tmp_path: Path
) -> None:
    pidfile = tmp_path / "child.pid"
    tool = tools(manager, queue)
    command = f"sh -c 'trap \"\" TERM; echo $$ > {pidfile}; while :; do sleep 0.05; done' & wait"
    started = await tool["shell"].execute({"command": command, "run_in_background": True})
    assert not started.is_error
    [job] = manager.jobs()
    wait_until(lambda: pidfile.exists() and pidfile.read_text().strip(), "the child's pid")
    child = int(pidfile.read_text())
    assert os.getpgid(child) == job.record.pgid

    stopped = await tool["job_stop"].execute({"id": job.id})

    assert f"job {job.id}: stopped by the model" in stopped.content
    assert gone(job.record.pgid)  # (killpg may still find zombies nobody reaps)
    assert queue.take_for_model() == []  # it stopped the job itself: nothing to tell


async def test_what_a_job_left_in_its_group_is_ended_when_the_job_exits(
    manager: JobManager, tmp_path: Path
) -> None:
    job = manager.start("sleep 300 & echo left", None)
    assert job.ended.wait(10)
    assert gone(job.record.pgid)


async def test_ending_every_job_at_exit_leaves_no_group_alive(manager: JobManager) -> None:
    first = manager.start("sleep 300", None)
    second = manager.start("trap '' TERM; sleep 300 & wait", None)
    ended = manager.end_all()
    assert {job.id for job in ended} == {first.id, second.id}
    for job in (first, second):
        assert gone(job.record.pgid)
        assert job.record.state is JobState.ENDED_AT_EXIT


async def test_unknown_ids_and_bad_arguments_are_clear_tool_errors(
    manager: JobManager, queue: NotificationQueue
) -> None:
    tool = tools(manager, queue)
    job = manager.start("true", None)
    missing = await tool["job_output"].execute({"id": "nope"})
    assert missing.is_error and "no background job 'nope'" in missing.content
    assert job.id in missing.content
    assert (await tool["job_stop"].execute({"id": "nope"})).is_error
    assert (await tool["job_output"].execute({})).is_error
    assert (await tool["job_output"].execute({"id": job.id, "wait": "x"})).is_error


async def test_a_jobs_folder_that_cannot_be_written_is_a_clear_error(
    tmp_path: Path, queue: NotificationQueue
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    manager = JobManager(notes=queue, directory=blocked / "jobs")
    result = await ShellTool(background=JobTools(manager).start).execute(
        {"command": "true", "run_in_background": True}
    )
    assert result.is_error and "cannot write the jobs folder" in result.content


async def test_a_command_that_cannot_run_ends_with_its_exit_code_and_message(
    manager: JobManager, queue: NotificationQueue
) -> None:
    tool = tools(manager, queue)
    await tool["shell"].execute({"command": "no-such-command-here", "run_in_background": True})
    [job] = manager.jobs()
    read = await tool["job_output"].execute({"id": job.id, "wait": 10})
    assert "exited with code 127" in read.content
    assert "no-such-command-here" in read.content and "not found" in read.content


def test_output_past_the_cap_keeps_the_tail_with_a_note(tmp_path: Path) -> None:
    output = OutputFile(tmp_path / "out.log", cap=1000)
    for number in range(500):
        output.write(f"{number:04d}\n".encode())
    output.close()
    text = (tmp_path / "out.log").read_text()
    assert len(text.encode()) <= 1000 + 200  # the cap, and the note line
    assert text.startswith("[cat-code: this job wrote more than 1000 bytes")
    assert text.endswith("0499\n") and "0000\n" not in text
    assert output.total == 2500 and output.dropped + output.kept == 2500
    got = output.read_from(0, 10_000)
    assert got.skipped == output.dropped and got.data.endswith(b"0499\n")
    assert got.end == 2500


async def test_a_job_that_writes_a_lot_keeps_its_file_under_the_cap(
    tmp_path: Path, queue: NotificationQueue
) -> None:
    manager = JobManager(notes=queue, directory=tmp_path / "jobs", output_cap=64 * 1024)
    job = manager.start("head -c 5000000 /dev/zero | tr '\\0' x; echo; echo the end", None)
    assert job.ended.wait(30)
    assert job.output.path.stat().st_size <= 64 * 1024 + 200
    assert job.output.total == 5_000_000 + len("\nthe end\n")
    read = JobTools(manager, queue).read(job)
    assert read.rstrip().endswith("the end") and "earlier bytes not shown" in read


async def test_a_sigkilled_job_reports_the_shells_exit_code(manager: JobManager) -> None:
    job = manager.start("sleep 300", None)
    os.killpg(job.record.pgid, signal.SIGKILL)
    assert job.ended.wait(10)
    assert job.record.exit_code == 137 and "SIGKILL" in (job.record.reason or "")
