"""This session's background jobs: ``/jobs`` lists them, ``/jobs stop ID`` ends one.

The handlers are pure like every command's (`jobs_text` reads the session's `JobManager`
through the context); `StopJob` is the effect: the stop (SIGTERM to the group, the grace,
SIGKILL) runs on a thread and one line says how the job ended. A job stopped here is told
to the model before its next request (the user ended it, not the model).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from rich.text import Text

from cat_code.base.safe_text import safe_line
from cat_code.host.jobs import Job, JobManager
from cat_code.host.jobs.manager import StoppedBy
from cat_code.host.status import one_line
from cat_code.repl.commands.registry import (
    CommandContext,
    Outcome,
    ReplHost,
    Show,
    SlashCommand,
)
from cat_code.repl.render import error_line
from cat_code.tools.threads import in_daemon_thread


@dataclass(frozen=True, slots=True)
class StopJob:
    """``/jobs stop ID``: end that job's whole process group and say how it ended."""

    job_id: str

    async def perform(self, repl: ReplHost) -> None:
        text, failed = await stop_job(repl.session.jobs, self.job_id)
        repl.console.print(error_line(text) if failed else Text(text))


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
    command = safe_line(one_line(record.command, 60))
    return (
        f"  {record.id}  {job.describe()}  started {_age(now - record.started_at)} ago  {command}"
    )


def _age(seconds: float) -> str:
    if seconds < 60:
        return f"{int(seconds)} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    return f"{seconds / 3600:.1f} h"


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


def _list(rest: str, ctx: CommandContext) -> Outcome:
    if rest:
        return Show("usage: /jobs (this session's background jobs) or /jobs stop ID", "error")
    return Show(jobs_text(ctx.jobs))


def _stop(rest: str, ctx: CommandContext) -> Outcome:
    words = rest.split()
    if len(words) != 1:
        return Show("usage: /jobs stop ID (the ids are in /jobs)", "error")
    return StopJob(words[0])


def _running_ids(words: list[str], ctx: CommandContext) -> list[str]:
    if len(words) != 1 or ctx.jobs is None:
        return []
    return [job.id for job in ctx.jobs.running() if job.id.startswith(words[0])]


COMMANDS = (
    SlashCommand("/jobs", "this session's background jobs (running, ended, exit codes)", _list),
    SlashCommand("/jobs stop", "end a background job (SIGTERM to its whole process group, "
                 "then SIGKILL)", _stop, args="ID", complete=_running_ids),
)  # fmt: skip
