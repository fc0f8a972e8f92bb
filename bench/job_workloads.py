"""``jobs.start``: how long ``shell {run_in_background: true}`` takes to answer with an id.

The real `JobTools.start` of a `JobManager` on a temporary jobs folder: the record file
claimed and written, bash spawned in its own group, the group recorded in the run records,
the copier and watcher threads started. Each sample starts one ``sleep`` job; all of them
are ended (their whole groups) before the workload returns. The issue's bound is 50 ms.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from cat_code.host.jobs import JobManager, JobTools

#: The issue's bound for the tool answering with an id.
JOB_START_TARGET_S = 0.050


def job_start_times(samples: int) -> list[float]:
    """Seconds per background start, ``samples`` of them (the first, untimed, warms up)."""
    with tempfile.TemporaryDirectory(prefix="cat-code-bench-jobs-") as folder:
        manager = JobManager(directory=Path(folder), stop_grace=0.5)
        tools = JobTools(manager)
        times: list[float] = []

        async def run() -> None:
            await tools.start("sleep 60", None)  # warm-up: imports, the folder
            for _ in range(samples):
                began = time.perf_counter()
                result = await tools.start("sleep 60", None)
                times.append(time.perf_counter() - began)
                assert not result.is_error, result.content

        try:
            asyncio.run(run())
        finally:
            manager.end_all()
        return times
