"""Background jobs: shell commands that outlive a turn, never the cat-code that owns them.

`JobManager` (``manager``) starts, reads, stops and ends the jobs of one process; the
registry on disk (``record``: one record and one capped output file per job under
``$CAT_CODE_HOME/jobs/``) lets ``cat-code jobs`` and the next cat-code see them;
``orphans`` ends the jobs of a cat-code killed with SIGKILL (through the run records'
pid-reuse guard); ``tools`` is the model's side (``shell``'s background start,
``job_output``, ``job_stop``).
"""

from __future__ import annotations

from cat_code.host.jobs.manager import Job, JobError, JobManager
from cat_code.host.jobs.orphans import Settled, settle_orphans
from cat_code.host.jobs.record import JobRecord, JobState, jobs_dir, load_all
from cat_code.host.jobs.tools import JobTools, job_tools

__all__ = [
    "Job",
    "JobError",
    "JobManager",
    "JobRecord",
    "JobState",
    "JobTools",
    "Settled",
    "job_tools",
    "jobs_dir",
    "load_all",
    "settle_orphans",
]
