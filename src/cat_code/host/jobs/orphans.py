"""Jobs a killed cat-code left: ended, and their records told so.

A running job's group is in the run records (`cat_code.host.state.run_records`) like a stdio
server's, so the reaper every cat-code runs at its start ends it with the same
pid-reuse guard: the group is signalled only when it is provably the recorded one.
`settle_orphans` then brings the job registry up to date: a record still ``running``
whose owner is gone (its pid no longer runs with the recorded start time) becomes
``orphan_ended`` once its leader is gone, saying which cat-code ended it. A leader the
guard could not prove (its pid reused, or its command exec'd something else) is never
signalled here; its record is finished when that process is no longer the recorded one.
Ended records older than `KEEP_ENDED_S` are removed with their output.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from cat_code.host.jobs.record import JobRecord, JobState, load_all, remove, save
from cat_code.host.state.run_records import reap, start_time

logger = logging.getLogger(__name__)

#: Ended jobs' records and output are kept this long for ``cat-code jobs``, then removed.
KEEP_ENDED_S = 7 * 24 * 3600.0
#: An id claimed (its record still empty) this long ago belongs to a cat-code killed while
#: starting the job: the record is never written (the run records still end its group).
CLAIM_STALE_S = 600.0


@dataclass(slots=True)
class Settled:
    """What one pass did."""

    #: Records of jobs a killed cat-code left, now ended.
    ended: list[JobRecord] = field(default_factory=list)
    #: One line per record that could not be read.
    warnings: list[str] = field(default_factory=list)


def owner_alive(record: JobRecord) -> bool:
    return start_time(record.owner_pid) == record.owner_start


def _leader_runs(record: JobRecord) -> bool:
    return record.leader_start != 0 and start_time(record.pid) == record.leader_start


def settle_orphans(directory: Path, *, now: float | None = None) -> Settled:
    """One pass over the registry (blocking: it may wait out a reaped group's grace)."""
    settled = Settled()
    records, settled.warnings = load_all(directory)
    now = time.time() if now is None else now
    orphans = [r for r in records if r.running and not owner_alive(r)]
    if orphans:
        report = reap()  # the guard; waits out the grace of the groups it ends
        me = os.getpid()
        for record in orphans:
            if _leader_runs(record):
                continue  # not provably ours to end (see the module docstring)
            record.state = JobState.ORPHAN_ENDED
            record.ended_at = now
            by = f"cat-code pid {me}" if record.pgid in report.ended else "a later cat-code"
            record.reason = f"its cat-code (pid {record.owner_pid}) was killed; ended by {by}"
            try:
                save(directory, record)
            except OSError as exc:
                logger.debug("job %s: cannot write its record: %s", record.id, exc)
            settled.ended.append(record)
    for record in records:
        if not record.running and record.ended_at is not None:
            if now - record.ended_at > KEEP_ENDED_S:
                remove(directory, record.id)
    _drop_stale_claims(directory, now)
    return settled


def _drop_stale_claims(directory: Path, now: float) -> None:
    try:
        claims = [p for p in directory.glob("*.json") if p.stat().st_size == 0]
        for path in claims:
            if now - path.stat().st_mtime > CLAIM_STALE_S:
                remove(directory, path.stem)
    except OSError:
        pass  # gone meanwhile, or unreadable: the next pass looks again


__all__ = ["KEEP_ENDED_S", "Settled", "owner_alive", "settle_orphans"]
