"""`WithJobs`: a front end's `Servers` (what it closes on every way out) plus its jobs.

`cat_code.host.servers.shutdown.run_until_signal` closes what it is given on every way out
(the work done, Ctrl-D, ``/exit``, SIGINT/SIGTERM/SIGHUP, ``-p`` finishing); wrapping the
MCP servers with the session's jobs makes that close end every running job's group too,
at the same time as the servers close, and tell the user which (``tell``). A hurried
close (a second signal) and the last-resort ``kill_now`` SIGKILL the jobs' groups at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from cat_code.host.jobs.manager import Job, JobManager
from cat_code.host.servers.shutdown import Servers
from cat_code.tools.threads import in_daemon_thread

logger = logging.getLogger(__name__)


class WithJobs:
    """``servers`` and ``jobs`` closed as one (the `Servers` protocol)."""

    def __init__(
        self, servers: Servers, jobs: JobManager, tell: Callable[[list[Job]], None]
    ) -> None:
        self.servers = servers
        self.jobs = jobs
        self.tell = tell

    async def close_all(self) -> None:
        ending = in_daemon_thread(self.jobs.end_all, name="jobs-end")
        try:
            await self.servers.close_all()
        finally:
            try:
                ended = await asyncio.shield(ending)
            except asyncio.CancelledError:
                self.jobs.kill_now()  # nothing may outlive us; `kill_now` follows anyway
                raise
            if ended:
                try:
                    self.tell(ended)
                except Exception:  # the terminal may be gone (SIGHUP): not worth failing
                    logger.debug("telling which jobs ended failed", exc_info=True)

    def hurry(self) -> None:
        self.servers.hurry()
        self.jobs.kill_now()

    def kill_now(self) -> None:
        self.jobs.kill_now()
        self.servers.kill_now()


def ended_lines(jobs: list[Job]) -> list[str]:
    """One line per job ended at exit, for the user."""
    from cat_code.host.status import one_line

    return [f"ended background job {job.id}: {one_line(job.record.command, 80)}" for job in jobs]


__all__ = ["WithJobs", "ended_lines"]
