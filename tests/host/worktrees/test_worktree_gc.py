"""Cleaning up after ended sessions: ``worktree gc`` and the sweep at every start."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from scripted.git_repos import branches, make_repo, worktree_paths

from cat_code.host.state.run_records import start_time
from cat_code.host.worktrees import Worktree, collect_garbage, create_worktree, sweep_at_start
from cat_code.host.worktrees.record import RECORD_FILE, admin_dir


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def owned_by_a_dead_process(wt: Worktree) -> None:
    """Rewrite the owner record to name a process that has since exited."""
    with subprocess.Popen(["sleep", "60"]) as owner:
        started = start_time(owner.pid)
        owner.kill()
    _rewrite(wt, ownerPid=owner.pid, ownerStart=started)


def _rewrite(wt: Worktree, **fields: object) -> None:
    folder = admin_dir(wt.path)
    assert folder is not None
    record = json.loads((folder / RECORD_FILE).read_text())
    record.update(fields)
    (folder / RECORD_FILE).write_text(json.dumps(record))


async def test_gc_removes_clean_worktrees_of_ended_sessions_and_reports_dirty_ones(
    repo: Path,
) -> None:
    clean = await create_worktree(repo, "clean")
    dirty = await create_worktree(repo, "dirty")
    mine = await create_worktree(repo, "mine")  # this process runs: in use
    (dirty.path / "work.txt").write_text("w\n")
    owned_by_a_dead_process(clean)
    owned_by_a_dead_process(dirty)
    report = await collect_garbage(repo)
    assert report.removed == ["clean"]
    assert [(e.worktree.name, w.summary()) for e, w in report.dirty] == [
        ("dirty", "1 uncommitted change")
    ]
    assert [e.worktree.name for e in report.in_use] == ["mine"]
    assert sorted(branches(repo)) == ["cat-code/dirty", "cat-code/mine", "main"]
    assert not clean.path.exists() and dirty.path.is_dir() and mine.path.is_dir()


async def test_gc_treats_a_worktree_without_owner_record_as_ended_but_the_sweep_does_not(
    repo: Path,
) -> None:
    wt = await create_worktree(repo, "unrecorded")
    folder = admin_dir(wt.path)
    assert folder is not None
    (folder / RECORD_FILE).unlink()
    assert sweep_at_start(repo) is None
    assert wt.path.is_dir()
    assert (await collect_garbage(repo)).removed == ["unrecorded"]


async def test_gc_prunes_a_deleted_worktree_and_its_branch(repo: Path) -> None:
    wt = await create_worktree(repo, "deleted")
    owned_by_a_dead_process(wt)
    shutil.rmtree(wt.path)
    assert (await collect_garbage(repo)).removed == ["deleted"]
    assert worktree_paths(repo) == [repo] and branches(repo) == ["main"]


def test_the_sweep_at_start_removes_only_clean_worktrees_of_ended_sessions(
    repo: Path,
) -> None:
    async def make() -> list[Worktree]:
        return [await create_worktree(repo, name) for name in ("ended", "kept", "running")]

    ended, kept, running = asyncio.run(make())
    (kept.path / "x.txt").write_text("x\n")
    owned_by_a_dead_process(ended)
    owned_by_a_dead_process(kept)
    report = sweep_at_start(repo / "subfolder-that-need-not-exist")
    assert report is not None and report.removed == ["ended"]
    assert not ended.path.exists() and kept.path.is_dir() and running.path.is_dir()


def test_the_sweep_does_nothing_where_no_session_ended(repo: Path, tmp_path: Path) -> None:
    assert sweep_at_start(tmp_path / "elsewhere") is None  # in no repository
    assert sweep_at_start(repo) is None  # no worktrees folder at all
    asyncio.run(create_worktree(repo, "running"))
    assert sweep_at_start(repo) is None  # its owner (this process) runs: git never started


def test_the_sweep_never_removes_the_worktree_it_is_started_in(repo: Path) -> None:
    wt = asyncio.run(create_worktree(repo, "here"))
    owned_by_a_dead_process(wt)
    report = sweep_at_start(wt.path)
    assert report is not None and report.removed == [] and wt.path.is_dir()
