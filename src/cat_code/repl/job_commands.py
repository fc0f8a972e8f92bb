"""``/jobs`` and ``/jobs stop ID``: this session's background jobs, seen and ended by the user.

`jobs_command` is pure like the other commands (text to show, or a `StopJob` for the app);
`stop_job` is the app's side of `StopJob`: the stop (SIGTERM to the group, the grace,
SIGKILL) runs on a thread, and the line it returns says how the job ended. A job stopped
here is told to the model before its next request (the user ended it, not the model).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from cat_code.host.jobs import Job, JobManager
from cat_code.host.jobs.manager import StoppedBy
from cat_code.host.safe_text import safe_line
from cat_code.host.status import one_line
from cat_code.tools.threads import in_daemon_thread

USAGE = "usage: /jobs (list this session's background jobs) or /jobs stop ID"


@dataclass(frozen=True, slots=True)
class StopJob:
    """``/jobs stop ID``: the app ends that job's group."""

    job_id: str


def jobs_text(manager: JobManager | None, *, now: float | None = None) -> str:
    """The jobs of this session, running ones first, each on one line."""
    jobs = manager.jobs() if manager is not None else []
    if not jobs:
        return (
            "no background jobs in this session (the model starts one with shell "
            "run_in_background: true)"
        )
    now = time.time() if now is None else now
    running = [job for job in jobs if not job.ended.is_set()]
    ended = [job for job in jobs if job.ended.is_set()]
    lines = [f"background jobs: {len(running)} running, {len(ended)} ended"]
    lines += [_line(job, now) for job in running + ended]
    if running:
        lines.append("/jobs stop ID ends one (its whole process group)")
    return "\n".join(lines)


def _line(job: Job, now: float) -> str:
    record = job.record
    since = _age(now - record.started_at)
    command = safe_line(one_line(record.command, 60))
    return f"  {record.id}  {job.describe()}  started {since} ago  {command}"


def _age(seconds: float) -> str:
    if seconds < 60:
        return f"{int(seconds)} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    return f"{seconds / 3600:.1f} h"


def jobs_command(rest: str, manager: JobManager | None) -> StopJob | tuple[str, bool]:
    """What ``/jobs REST`` means: a `StopJob`, or the text to show and whether it is an
    error (the caller makes it a `Show`)."""
    words = rest.split()
    if not words:
        return jobs_text(manager), False
    if words[0] == "stop" and len(words) == 2:
        return StopJob(words[1])
    return USAGE, True


async def stop_job(manager: JobManager, job_id: str) -> tuple[str, bool]:
    """End the job ``job_id``; the line to show, and whether it is an error."""
    job = manager.get(job_id)
    if job is None:
        known = ", ".join(j.id for j in manager.jobs()) or "none"
        return f"no background job '{job_id}' in this session (its jobs: {known})", True
    if job.ended.is_set():
        return f"job {job.id} had already ended: {job.describe()}", False
    await in_daemon_thread(lambda: manager.stop(job, by=StoppedBy.USER), name="job-stop")
    return f"job {job.id}: {job.describe()}", False


__all__ = ["StopJob", "jobs_command", "jobs_text", "stop_job"]
