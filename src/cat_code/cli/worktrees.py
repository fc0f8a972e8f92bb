"""``cat-code worktree list [--json] | remove NAME [--force] | gc``: cat-code's worktrees.

The verbs of `cat_code.host.worktrees` for the current repository. Text goes to stdout
one worktree per line; notes and errors to stderr. Paths and branch names come from git
and the disk, so they go through `safe_line` / `safe_json`. Exit 0 when done; 1 when git
failed, the folder is in no repository, or ``remove`` refused (dirty, in use, no such
worktree); 2 for a NAME that is not a valid name.
"""

from __future__ import annotations

import asyncio
import datetime
import sys
from pathlib import Path
from typing import Any

from cat_code.base.safe_text import safe_json, safe_line
from cat_code.cli.options import Options
from cat_code.host.state.run_records import OwnerState
from cat_code.host.worktrees import (
    InvalidName,
    WorktreeEntry,
    WorktreeError,
    collect_garbage,
    find_worktree,
    list_worktrees,
    remove_worktree,
)


def run_worktree_command(options: Options) -> int:
    """``cat-code worktree list|remove|gc`` (``options.worktree_command``); its exit code."""
    verb = options.worktree_command
    try:
        if verb == "list":
            return asyncio.run(_list(as_json=options.json))
        if verb == "remove":
            assert options.name is not None  # a required positional
            return asyncio.run(_remove(options.name, force=options.force))
        return asyncio.run(_gc())
    except InvalidName as exc:
        sys.stderr.write(f"cat-code: {exc}\n")
        return 2
    except WorktreeError as exc:
        sys.stderr.write(f"cat-code: {exc}\n")
        return 1


def entry_record(entry: WorktreeEntry) -> dict[str, Any]:
    """One worktree as ``--json`` shows it."""
    wt, work = entry.worktree, entry.work
    created = (
        datetime.datetime.fromtimestamp(entry.created, datetime.UTC).isoformat(timespec="seconds")
        if entry.created
        else None
    )
    return {
        "name": wt.name,
        "path": str(wt.path),
        "branch": wt.branch,
        "base": wt.base,
        "state": work.state.value,
        "changes": work.changes,
        "commits": work.commits,
        "session": entry.owner.value,
        "pid": entry.owner_pid,
        "created": created,
    }


def entry_line(entry: WorktreeEntry) -> str:
    wt, work = entry.worktree, entry.work
    state = work.state.value if work.state.value != "dirty" else f"dirty: {work.summary()}"
    return safe_line(f"{wt.name}  {wt.branch}  {state}  session {_session(entry)}  {wt.path}")


def _session(entry: WorktreeEntry) -> str:
    if entry.owner is OwnerState.RUNNING:
        return f"running (pid {entry.owner_pid})"
    return "ended" if entry.owner is OwnerState.ENDED else "unknown"


async def _list(*, as_json: bool) -> int:
    entries = await list_worktrees(Path.cwd())
    if as_json:
        sys.stdout.write(safe_json([entry_record(e) for e in entries]) + "\n")
        return 0
    if not entries:
        sys.stderr.write("no cat-code worktrees in this repository\n")
    for entry in entries:
        sys.stdout.write(entry_line(entry) + "\n")
    return 0


async def _remove(name: str, *, force: bool) -> int:
    entry = await find_worktree(Path.cwd(), name)
    await remove_worktree(entry, force=force)
    sys.stderr.write(
        safe_line(f"removed worktree {name} and its branch {entry.worktree.branch}") + "\n"
    )
    return 0


async def _gc() -> int:
    report = await collect_garbage(Path.cwd(), here=Path.cwd())
    if report.removed:
        sys.stdout.write(
            safe_line(f"removed {len(report.removed)} clean worktree(s) and their branches: "
                      + ", ".join(report.removed)) + "\n"
        )  # fmt: skip
    for entry, work in report.dirty:
        wt = entry.worktree
        sys.stdout.write(
            safe_line(f"kept {wt.name} ({work.summary()}; branch {wt.branch}): {wt.path}") + "\n"
        )
    for entry in report.in_use:
        sys.stdout.write(safe_line(f"in use: {entry.worktree.name} ({_session(entry)})") + "\n")
    if not (report.removed or report.dirty or report.in_use):
        sys.stderr.write("nothing to clean up\n")
    elif report.dirty:
        sys.stderr.write(
            "kept worktrees hold work: commit or merge it, then cat-code worktree remove NAME "
            "(--force drops it)\n"
        )
    return 0
