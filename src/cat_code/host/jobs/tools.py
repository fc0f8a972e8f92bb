"""The model's side of background jobs: ``shell``'s background start, ``job_output``, ``job_stop``.

`JobTools` wraps one `JobManager` for the tools of one session: `start` is the
`BackgroundStarter` ``shell`` is given (it answers at once with the job id), and
`job_tools` the two tools. Both tools run without asking: they read or end only jobs this
session started, each of which passed ``shell``'s permission question. An unknown id is a
clear tool error naming the jobs there are. Output the model reads is cut like other
results, the tail kept; a read that reports a job's end takes back the note saying the
same (the model is not told twice).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from cat_code.host.jobs.manager import Job, JobError, JobManager, StoppedBy
from cat_code.host.notifications import NotificationQueue
from cat_code.tools.base import ProgressCallback, Tool, ToolResult
from cat_code.tools.builtin._fs import MAX_OUTPUT_CHARS
from cat_code.tools.threads import in_daemon_thread

#: The longest ``job_output`` may wait for a job to end.
MAX_WAIT_S = 600.0


class JobTools:
    """The background-job tools of one session, on its manager and its note queue."""

    def __init__(self, manager: JobManager, notes: NotificationQueue | None = None) -> None:
        self.manager = manager
        self.notes = notes

    async def start(self, command: str, cwd: Path | None) -> ToolResult:
        """``shell {run_in_background: true}``: the job's id, at once."""
        try:
            job = self.manager.start(command, cwd)
        except JobError as exc:
            return ToolResult.error(f"Error: {exc}")
        return ToolResult(
            f"Started background job {job.id} (pid {job.record.pid}); its output goes to "
            f'{job.output.path}.\nRead it with job_output {{"id": "{job.id}"}}, end it '
            f'with job_stop {{"id": "{job.id}"}}. You will be told when it ends.'
        )

    def find(self, arguments: dict[str, Any]) -> Job | str:
        """The job ``arguments["id"]`` names, or the error the model gets."""
        job_id = arguments.get("id")
        if not isinstance(job_id, str) or not job_id.strip():
            return "Error: 'id' must be a job id (shell with run_in_background gives one)"
        job = self.manager.get(job_id)
        if job is not None:
            return job
        known = ", ".join(f"{j.id} ({j.describe()})" for j in self.manager.jobs()) or "none"
        return f"Error: no background job '{job_id}' in this session; its jobs: {known}"

    def read(self, job: Job) -> str:
        """The job's state and the output the model has not read yet (the tail, if long)."""
        ended = job.ended.is_set()
        state = job.describe()
        try:
            got = job.output.read_from(job.read_offset, MAX_OUTPUT_CHARS)
        except OSError as exc:
            return f"job {job.id}: {state}\n(its output cannot be read: {exc})"
        job.read_offset = got.end
        text = got.data.decode(errors="replace")
        lines = [f"job {job.id}: {state}"]
        if got.skipped:
            lines.append(
                f"[{got.skipped} earlier bytes not shown; the whole output is in {job.output.path}]"
            )
        lines.append(text.rstrip("\n") if text else "(no new output)")
        if ended and self.notes is not None:
            self.notes.withdraw(f"job:{job.id}")  # this read told the model already
        return "\n".join(lines)


class JobOutputTool(Tool):
    name = "job_output"
    description = (
        "Read a background job's output written since your last read, its status and exit "
        "code. wait: seconds to wait for the job to end first (returns earlier when it does)."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "The job id shell gave"},
            "wait": {"type": "number", "description": "Seconds to wait for the job to end"},
        },
        "required": ["id"],
    }
    read_only = True

    def __init__(self, jobs: JobTools) -> None:
        self.jobs = jobs

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        job = self.jobs.find(arguments)
        if isinstance(job, str):
            return ToolResult.error(job)
        wait = arguments.get("wait", 0)
        if isinstance(wait, bool) or not isinstance(wait, int | float) or not math.isfinite(wait):
            return ToolResult.error("Error: 'wait' must be a number of seconds")
        if wait > 0 and not job.ended.is_set():
            seconds = min(float(wait), MAX_WAIT_S)
            await in_daemon_thread(lambda: job.ended.wait(seconds), name="job-output-wait")
        return ToolResult(self.jobs.read(job))


class JobStopTool(Tool):
    name = "job_stop"
    description = (
        "Stop a background job: SIGTERM to its whole process group, SIGKILL after a short "
        "grace. Returns how it ended."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {"id": {"type": "string", "description": "The job id shell gave"}},
        "required": ["id"],
    }
    # Ends only a job this session started, which passed shell's permission question.
    read_only = True

    def __init__(self, jobs: JobTools) -> None:
        self.jobs = jobs

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        job = self.jobs.find(arguments)
        if isinstance(job, str):
            return ToolResult.error(job)
        if job.ended.is_set():
            return ToolResult(f"job {job.id} had already ended: {job.describe()}")
        manager = self.jobs.manager
        await in_daemon_thread(lambda: manager.stop(job, by=StoppedBy.MODEL), name="job-stop")
        return ToolResult(f"job {job.id}: {job.describe()}")


def job_tools(jobs: JobTools) -> list[Tool]:
    """``job_output`` and ``job_stop`` on ``jobs``."""
    return [JobOutputTool(jobs), JobStopTool(jobs)]


__all__ = ["MAX_WAIT_S", "JobOutputTool", "JobStopTool", "JobTools", "job_tools"]
