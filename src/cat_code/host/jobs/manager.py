"""`JobManager`: the background jobs of one cat-code process, owned from start to end.

A job is ``bash -c 'eval "$1"'`` with the command as ``$1``: bash stays the group leader
(it never execs the command in its place), so the leader's command line, recorded for
the pid-reuse guard, stays true. It runs in its own session and process group, its
stdin is /dev/null, and stdout and stderr go down one pipe to a copier thread that
writes the capped output file (`OutputFile`). A watcher thread waits for the leader;
when it exits, what is left of its group is ended too (SIGTERM, a grace, SIGKILL): a
job is its whole group, and nothing of it outlives it. Then the record is finished and
a note is posted (the model is told, unless it ended the job itself or cat-code is
exiting).

Invariants: every job started is in the registry on disk before ``start`` returns, and
its group is in the run records (`cat_code.host.state.run_records`), so the next cat-code ends
it if this one is killed with SIGKILL. `end_all` (every way out) ends every running
group and waits, bounded; `kill_now` (a hurried exit, and ``atexit``) sends SIGKILL at
once. Nothing here runs on the event loop: the blocking calls are for threads.
"""

from __future__ import annotations

import atexit
import enum
import logging
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from cat_code.host.jobs.output import DEFAULT_OUTPUT_CAP, OutputFile, last_lines
from cat_code.host.jobs.record import (
    JobRecord,
    JobState,
    new_id,
    output_path,
    remove,
    save,
)
from cat_code.host.notifications import LOG_NOTES, Note, NoteKind, NoteSink, Priority
from cat_code.host.state.run_records import forget_group, record_group, refresh_group, start_time
from cat_code.host.status import one_line
from cat_code.mcp.transports.process_group import (
    has_live_member,
    kill_after_grace,
    signal_group,
)

logger = logging.getLogger(__name__)

#: After SIGTERM, time for a job to clean up (a dev server closes its port) before SIGKILL.
STOP_GRACE_S = 2.0
#: After the leader exits, how long the copier may take to read what is left in the pipe
#: (a process outside the group may hold it open for ever).
DRAIN_S = 1.0
#: When a running job's group is recorded again (its members change: a wrapper starts
#: the real server), in seconds after its start; then every `REFRESH_EVERY_S`.
REFRESH_AT_S = (0.5, 5.0)
REFRESH_EVERY_S = 60.0
#: The most of a job's last output a note carries to the model.
NOTE_LINES = 10
NOTE_BYTES = 4000
_READ_CHUNK = 64 * 1024


class JobError(Exception):
    """A job could not be started; ``str`` is the sentence the model reads, ``folder`` the
    jobs folder that could not be written (None: bash could not start)."""

    def __init__(self, message: str, *, folder: Path | None = None) -> None:
        super().__init__(message)
        self.folder = folder


class StoppedBy(enum.StrEnum):
    """Who ended a job that did not end by itself (its string goes in the reason)."""

    MODEL = "the model"
    USER = "the user"
    EXIT = "cat-code exiting"


@dataclass(frozen=True, slots=True)
class Ending:
    """Why we are ending a job (None on `Job`: it ends by itself)."""

    state: JobState
    by: StoppedBy


class Job:
    """One job of this process: its record, its process, its output."""

    def __init__(self, record: JobRecord, process: subprocess.Popen[bytes], output: OutputFile):
        self.record = record
        self.process = process
        self.output = output
        #: The stream offset the model has read up to (`job_output`).
        self.read_offset = 0
        #: Set once the job is over and its record says so.
        self.ended = threading.Event()
        self.ending: Ending | None = None

    @property
    def id(self) -> str:
        return self.record.id

    def describe(self) -> str:
        """``running (pid N)``, ``exited with code N``, ``stopped by the user (exit 143)``."""
        record = self.record
        if record.running:
            return f"running (pid {record.pid})"
        return record.reason or str(record.state)


def exit_code(returncode: int) -> int:
    """The shell's number for how a process ended: its code, or 128 + N for signal N."""
    return 128 - returncode if returncode < 0 else returncode


def how_it_ended(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"killed by {name} (exit code {exit_code(returncode)})"
    return f"exited with code {returncode}"


class JobManager:
    """Start, read, stop and end the background jobs of this process."""

    def __init__(
        self,
        *,
        notes: NoteSink = LOG_NOTES,
        session_id: str = "",
        directory: Path | None = None,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        stop_grace: float = STOP_GRACE_S,
    ) -> None:
        self.notes = notes
        self.session_id = session_id
        self._directory = directory
        self.output_cap = output_cap
        self.stop_grace = stop_grace
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._atexit = False

    @property
    def directory(self) -> Path:
        if self._directory is None:
            from cat_code.host.jobs.record import jobs_dir

            return jobs_dir()
        return self._directory

    # -- reading -----------------------------------------------------------------------

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id.strip())

    def jobs(self) -> list[Job]:
        """Every job this process started, oldest first."""
        with self._lock:
            return list(self._jobs.values())

    def running(self) -> list[Job]:
        return [job for job in self.jobs() if not job.ended.is_set()]

    # -- starting ----------------------------------------------------------------------

    def start(self, command: str, cwd: Path | None) -> Job:
        """Start ``command`` in the background (blocking, a few milliseconds). Raises
        `JobError` when the jobs folder cannot be written or bash cannot start."""
        directory = self.directory
        try:
            if self._directory is None:
                from cat_code.host.jobs.record import JOBS_DIR
                from cat_code.host.state.home import ensure_home

                ensure_home(JOBS_DIR)
            else:
                directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            job_id = new_id(directory)
        except OSError as exc:
            raise JobError(
                f"cannot write the jobs folder {directory}: {exc}", folder=directory
            ) from exc
        try:
            output = OutputFile(output_path(directory, job_id), cap=self.output_cap)
        except OSError as exc:
            remove(directory, job_id)
            message = f"cannot write the job's output file in {directory}: {exc}"
            raise JobError(message, folder=directory) from exc
        try:
            process = subprocess.Popen(
                ["bash", "-c", 'eval "$1"', "cat-code-job", command],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                bufsize=0,
            )
        except OSError as exc:
            output.close()
            remove(directory, job_id)
            raise JobError(f"could not start bash: {exc}") from exc
        record_group(process.pid)  # so the next cat-code ends it if this one is killed
        me = os.getpid()
        record = JobRecord(
            id=job_id,
            command=command,
            cwd=str(cwd or Path.cwd()),
            pid=process.pid,
            pgid=process.pid,
            leader_start=start_time(process.pid) or 0,
            started_at=time.time(),
            owner_pid=me,
            owner_start=start_time(me) or 0,
            session_id=self.session_id,
        )
        job = Job(record, process, output)
        try:
            save(directory, record)
        except OSError as exc:
            signal_group(process.pid, signal.SIGKILL)
            process.wait()
            output.close()
            forget_group(process.pid)
            remove(directory, job_id)
            message = f"cannot write the job's record in {directory}: {exc}"
            raise JobError(message, folder=directory) from exc
        with self._lock:
            self._jobs[job_id] = job
        if not self._atexit:
            self._atexit = True
            atexit.register(self.kill_now)  # a way out that skipped `end_all`
        copier = threading.Thread(target=self._copy, args=(job,), name=f"job-{job_id}-output")
        copier.daemon = True
        copier.start()
        watcher = threading.Thread(
            target=self._watch, args=(job, copier), name=f"job-{job_id}", daemon=True
        )
        watcher.start()
        return job

    # -- the job's threads -----------------------------------------------------------------

    def _copy(self, job: Job) -> None:
        stream = job.process.stdout
        assert stream is not None
        fd = stream.fileno()
        failed = False
        try:
            while chunk := os.read(fd, _READ_CHUNK):
                try:
                    job.output.write(chunk)
                except OSError as exc:  # keep reading: a job must never block on its pipe
                    if not failed:
                        logger.warning("job %s: cannot write its output: %s", job.id, exc)
                        failed = True
        except OSError:
            pass
        finally:
            stream.close()

    def _watch(self, job: Job, copier: threading.Thread) -> None:
        process, pgid = job.process, job.record.pgid
        started = time.monotonic()
        moments = [*REFRESH_AT_S]
        while True:
            if moments:
                wait = max(0.0, started + moments[0] - time.monotonic())
            else:
                wait = REFRESH_EVERY_S
            try:
                returncode = process.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                if moments:
                    moments.pop(0)
                refresh_group(pgid)
        # The leader is done: what it left in its group goes with it.
        if has_live_member(pgid):
            signal_group(pgid, signal.SIGTERM)
            kill_after_grace([pgid], self.stop_grace)
        copier.join(DRAIN_S)
        forget_group(pgid)
        self._finish(job, returncode)

    def _finish(self, job: Job, returncode: int) -> None:
        record, ending = job.record, job.ending
        record.ended_at = time.time()
        record.exit_code = exit_code(returncode)
        record.state = ending.state if ending is not None else JobState.EXITED
        how = how_it_ended(returncode)
        record.reason = f"stopped by {ending.by}: {how}" if ending is not None else how
        try:
            save(self.directory, record)
        except OSError as exc:
            logger.debug("job %s: cannot write its record: %s", job.id, exc)
        # Told before `ended` is set: a job_output woken by it takes the note back.
        if ending is None or ending.by is StoppedBy.USER:
            self.notes.post(self.ended_note(job))
        job.ended.set()
        job.output.close()

    def ended_note(self, job: Job) -> Note:
        """The note that tells the user (one line) and the model (with the last lines)."""
        record = job.record
        try:
            tail = job.output.read_from(0, NOTE_BYTES).data
        except OSError:
            tail = b""
        lines = last_lines(tail, NOTE_LINES)
        shown = lines if lines.strip() else "(no output)"
        model_text = (
            f"Background job {record.id} ended: {record.reason}.\n"
            f"Command: {record.command}\n"
            f"Last lines of its output:\n{shown}\n"
            f'(job_output {{"id": "{record.id}"}} reads what you have not read yet.)'
        )
        failed = record.exit_code not in (0, None) and job.ending is None
        return Note(
            NoteKind.JOB_ENDED,
            key=f"job:{record.id}",
            text=f"background job {record.id} {record.reason}: {one_line(record.command, 80)}",
            priority=Priority.HIGH if failed else Priority.NORMAL,
            for_model=True,
            model_text=model_text,
            data={"job_id": record.id, "command": record.command, "exit_code": record.exit_code},
        )

    # -- ending ------------------------------------------------------------------------

    def stop(self, job: Job, *, by: StoppedBy) -> None:
        """End ``job``'s group: SIGTERM, the grace, SIGKILL; returns once it is over
        (blocking, bounded by the grace and `DRAIN_S`)."""
        self._end([job], Ending(JobState.STOPPED, by))

    def end_all(self) -> list[Job]:
        """End every running job (cat-code is exiting); the jobs that were running."""
        running = self.running()
        self._end(running, Ending(JobState.ENDED_AT_EXIT, StoppedBy.EXIT))
        return running

    def _end(self, jobs: list[Job], ending: Ending) -> None:
        live = [job for job in jobs if not job.ended.is_set()]
        for job in live:
            if job.ending is None:
                job.ending = ending
            signal_group(job.record.pgid, signal.SIGTERM)
        kill_after_grace([job.record.pgid for job in live], self.stop_grace)
        deadline = time.monotonic() + self.stop_grace + DRAIN_S + 1.0
        for job in live:
            job.ended.wait(max(0.0, deadline - time.monotonic()))

    def kill_now(self) -> None:
        """SIGKILL every running job's group, without waiting (a hurried exit)."""
        for job in self.running():
            if job.ending is None:
                job.ending = Ending(JobState.ENDED_AT_EXIT, StoppedBy.EXIT)
            signal_group(job.record.pgid, signal.SIGKILL)


__all__ = ["Ending", "Job", "JobError", "JobManager", "StoppedBy", "exit_code", "how_it_ended"]
