"""``cat-code jobs [--json]``: every background job in the registry, from the shell.

It first brings the registry up to date (`settle_orphans`: the jobs of a cat-code killed
with SIGKILL are ended, through the run records' pid-reuse guard, and said so), then
prints one line per job, running ones first: id, state (or how it ended), when it
started, its owner's pid, the command. ``--json`` prints an array of the records' fields
(``id, command, cwd, pid, pgid, state, exit_code, reason, started_at, ended_at,
owner_pid, session_id, output``), ``[]`` when there are none. Commands are untrusted
text: they go through `safe_line`. Exit 0.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from typing import Any

from cat_code.base.safe_text import safe_json, safe_line
from cat_code.cli.options import Options
from cat_code.host.jobs import JobRecord, jobs_dir, settle_orphans
from cat_code.host.jobs.record import output_path
from cat_code.host.status import one_line


def _iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds")


def job_json(record: JobRecord) -> dict[str, Any]:
    """One job as ``--json`` shows it."""
    return {
        "id": record.id,
        "command": record.command,
        "cwd": record.cwd,
        "pid": record.pid,
        "pgid": record.pgid,
        "state": str(record.state),
        "exit_code": record.exit_code,
        "reason": record.reason,
        "started_at": _iso(record.started_at),
        "ended_at": _iso(record.ended_at),
        "owner_pid": record.owner_pid,
        "session_id": record.session_id,
        "output": str(output_path(jobs_dir(), record.id)),
    }


def run_jobs_command(args: Options) -> int:
    from cat_code.host.jobs import load_all

    directory = jobs_dir()
    settled = settle_orphans(directory) if directory.is_dir() else None
    for warning in settled.warnings if settled is not None else ():
        sys.stderr.write(f"cat-code: warning: {safe_line(warning)}\n")
    records, _ = load_all(directory)
    records.sort(key=lambda r: (not r.running, -r.started_at))
    if args.json:
        sys.stdout.write(safe_json([job_json(r) for r in records]) + "\n")
        return 0
    if not records:
        sys.stderr.write(
            "no background jobs (the model starts them with shell run_in_background)\n"
        )
        return 0
    now = time.time()
    for record in records:
        state = f"running (pid {record.pid})" if record.running else record.reason or record.state
        started = datetime.fromtimestamp(record.started_at).strftime("%Y-%m-%d %H:%M")
        age = f"{int((now - record.started_at) // 60)} min ago"
        line = (
            f"{record.id}  {state}  started {started} ({age})  by cat-code pid "
            f"{record.owner_pid}  {one_line(record.command, 60)}"
        )
        sys.stdout.write(safe_line(line) + "\n")
    return 0


__all__ = ["job_json", "run_jobs_command"]
