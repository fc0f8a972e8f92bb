"""Cleaning up: `collect_garbage` (``cat-code worktree gc``) and `sweep_at_start`.

A worktree is removed here only when it holds no work (`store.remove_if_clean`) and its
session has ended: its owner record names a process that is provably gone (the run
records' pid-reuse guard), or, for an explicit ``gc``, it has no readable record at all.
A worktree whose owner runs is never touched, nor the one the caller is standing in.
Dirty ones are reported, never removed. The sweep at every start costs a directory
listing and a file read per worktree, and runs git only when some owner is gone, so a
killed session's clean worktrees cannot pile up however often cat-code is started.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from cat_code.host.state.run_records import OwnerState
from cat_code.host.worktrees.errors import WorktreeError
from cat_code.host.worktrees.names import WORKTREES_DIR
from cat_code.host.worktrees.record import read_record
from cat_code.host.worktrees.repository import main_root_near
from cat_code.host.worktrees.store import (
    Work,
    WorktreeEntry,
    list_worktrees,
    prune_missing,
    remove_if_clean,
    work_in,
)

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class GcReport:
    """What one pass did, by worktree name."""

    removed: list[str] = field(default_factory=list)
    #: Ended sessions' worktrees holding work: kept, with what they hold.
    dirty: list[tuple[WorktreeEntry, Work]] = field(default_factory=list)
    #: Owned by a running cat-code (or the caller's own folder): left alone.
    in_use: list[WorktreeEntry] = field(default_factory=list)


async def collect_garbage(
    folder: Path, *, only_ended: bool = False, here: Path | None = None
) -> GcReport:
    """Remove the clean worktrees whose session ended; report the rest.

    ``only_ended``: only those whose owner is provably gone (the sweep), not those
    without an owner record. ``here``: a folder in use by the caller (its cwd).
    """
    report = GcReport()
    for entry in await list_worktrees(folder, with_work=False):
        worktree = entry.worktree
        if entry.owner is OwnerState.RUNNING or _contains(worktree.path, here):
            report.in_use.append(entry)
            continue
        if only_ended and entry.owner is not OwnerState.ENDED:
            continue
        if entry.work.missing:
            if await prune_missing(worktree):
                report.removed.append(worktree.name)
            else:
                report.dirty.append((entry, entry.work))
        elif await remove_if_clean(worktree):
            report.removed.append(worktree.name)
        else:
            report.dirty.append((entry, await work_in(worktree)))
    return report


def sweep_at_start(cwd: Path) -> GcReport | None:
    """At a session's start: remove the clean worktrees of sessions that were killed.

    Synchronous (no event loop runs yet); never raises. None when there was nothing to
    look at, which is decided without starting git.
    """
    root = main_root_near(cwd)
    if root is None:
        return None
    folder = root / WORKTREES_DIR
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    if not any(_owner_ended(folder / name) for name in names):
        return None
    if shutil.which("git") is None:
        return None
    try:
        report = asyncio.run(collect_garbage(root, only_ended=True, here=cwd))
    except WorktreeError as exc:
        logger.debug("sweeping the worktrees of ended sessions failed: %s", exc)
        return None
    if report.removed:
        logger.info(
            "removed %d clean worktree(s) of ended sessions: %s",
            len(report.removed),
            ", ".join(report.removed),
        )
    return report


def _owner_ended(path: Path) -> bool:
    record = read_record(path)
    return record is not None and record.owner() is OwnerState.ENDED


def _contains(folder: Path, here: Path | None) -> bool:
    if here is None:
        return False
    try:
        here = here.resolve()
    except OSError:
        return False
    return here == folder or folder in here.parents
