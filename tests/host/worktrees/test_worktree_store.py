"""The WorktreeStore on real repositories: create, inspect, remove, refuse."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from scripted.git_repos import branches, commit_all, git, make_repo, worktree_paths

from cat_code.host.state.run_records import OwnerState, start_time
from cat_code.host.worktrees import (
    InvalidName,
    NameInUse,
    NoCommits,
    NotARepository,
    WorkState,
    WorktreeHasWork,
    WorktreeInUse,
    changed_files,
    create_worktree,
    find_worktree,
    list_worktrees,
    remove_if_clean,
    remove_worktree,
    work_in,
)
from cat_code.host.worktrees.record import RECORD_FILE, admin_dir


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"README.md": "hello\n", "src/app.py": "x = 1\n"})


async def test_a_worktree_is_made_from_head_on_its_own_branch_and_hidden_without_gitignore(
    repo: Path,
) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    wt = await create_worktree(repo, "fix-login")
    assert wt.path == repo / ".cat-code/worktrees/fix-login" and wt.path.is_dir()
    assert wt.branch == "cat-code/fix-login" and wt.base == head
    assert git(wt.path, "rev-parse", "HEAD").strip() == head
    assert (wt.path / "src/app.py").read_text() == "x = 1\n"
    assert "cat-code/fix-login" in branches(repo)
    assert not (repo / ".gitignore").exists()
    assert "/.cat-code/worktrees/" in (repo / ".git/info/exclude").read_text().splitlines()
    assert git(repo, "status", "--porcelain") == ""


async def test_without_a_name_one_is_generated_that_is_a_valid_name(repo: Path) -> None:
    first, second = await create_worktree(repo), await create_worktree(repo)
    assert first.name != second.name
    assert {first.branch, second.branch} <= set(branches(repo))


async def test_edits_in_a_worktree_leave_the_main_checkout_untouched(repo: Path) -> None:
    wt = await create_worktree(repo, "edit")
    (wt.path / "README.md").write_text("changed\n")
    (wt.path / "new.txt").write_text("new\n")
    assert (repo / "README.md").read_text() == "hello\n" and not (repo / "new.txt").exists()
    assert git(repo, "status", "--porcelain") == ""
    assert await changed_files(wt) == ["README.md", "new.txt"]


async def test_a_clean_worktree_is_removed_together_with_its_branch(repo: Path) -> None:
    wt = await create_worktree(repo, "clean")
    assert await remove_if_clean(wt) is True
    assert not wt.path.exists()
    assert branches(repo) == ["main"] and worktree_paths(repo) == [repo]


@pytest.mark.parametrize(
    "make_work",
    [
        pytest.param(lambda p: (p / "README.md").write_text("edited\n"), id="modified"),
        pytest.param(lambda p: (p / "notes.txt").write_text("n\n"), id="untracked"),
        pytest.param(lambda p: ((p / "c.txt").write_text("c\n"), commit_all(p)), id="committed"),
    ],
)
async def test_a_worktree_holding_work_is_kept_with_its_branch(
    repo: Path, make_work: object
) -> None:
    wt = await create_worktree(repo, "busy")
    make_work(wt.path)  # type: ignore[operator]
    assert await remove_if_clean(wt) is False
    assert wt.path.is_dir() and "cat-code/busy" in branches(repo)
    assert (await work_in(wt)).state is WorkState.DIRTY


async def test_changed_files_name_what_was_committed_edited_and_added(repo: Path) -> None:
    wt = await create_worktree(repo, "files")
    (wt.path / "src/app.py").write_text("x = 2\n")
    commit_all(wt.path, "edit app")
    (wt.path / "README.md").write_text("edited\n")
    (wt.path / "docs").mkdir()
    (wt.path / "docs/new.md").write_text("new\n")
    assert await changed_files(wt) == ["README.md", "docs/new.md", "src/app.py"]
    work = await work_in(wt)
    assert (work.changes, work.commits) == (2, 1)
    assert work.summary() == "2 uncommitted changes and 1 new commit"


@pytest.mark.parametrize(
    "name", ["a/b", "..", "a..b", "has space", "", "x" * 41, "-rf", ".hidden", "x.lock", "é"]
)
async def test_a_bad_name_is_refused_and_nothing_is_created(repo: Path, name: str) -> None:
    with pytest.raises(InvalidName):
        await create_worktree(repo, name)
    assert not (repo / ".cat-code").exists()
    assert branches(repo) == ["main"] and worktree_paths(repo) == [repo]


async def test_a_name_in_use_by_a_folder_or_a_branch_is_refused_and_nothing_is_created(
    repo: Path,
) -> None:
    await create_worktree(repo, "taken")
    with pytest.raises(NameInUse, match="exists"):
        await create_worktree(repo, "taken")
    exclude = (repo / ".git/info/exclude").read_text()
    git(repo, "branch", "cat-code/branch-only")
    (repo / ".git/info/exclude").write_text("")
    with pytest.raises(NameInUse, match="branch cat-code/branch-only"):
        await create_worktree(repo, "branch-only")
    assert (repo / ".git/info/exclude").read_text() == ""  # not even the exclude line
    (repo / ".git/info/exclude").write_text(exclude)
    assert not (repo / ".cat-code/worktrees/branch-only").exists()
    assert len(worktree_paths(repo)) == 2


async def test_outside_a_repository_or_before_the_first_commit_the_error_says_so(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotARepository, match="not inside a git repository"):
        await create_worktree(plain, "x")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "--quiet")
    with pytest.raises(NoCommits, match="no commit yet"):
        await create_worktree(empty, "x")
    assert not (empty / ".cat-code").exists() and list(plain.iterdir()) == []


async def test_a_worktree_made_from_inside_a_worktree_goes_under_the_main_checkout(
    repo: Path,
) -> None:
    outer = await create_worktree(repo, "outer")
    inner = await create_worktree(outer.path / "src", "inner")
    assert inner.path == repo / ".cat-code/worktrees/inner"
    assert [e.worktree.name for e in await list_worktrees(outer.path)] == ["inner", "outer"]


async def test_list_shows_each_worktree_with_its_work_and_its_running_owner(repo: Path) -> None:
    clean = await create_worktree(repo, "a-clean")
    dirty = await create_worktree(repo, "b-dirty")
    (dirty.path / "x.txt").write_text("x\n")
    entries = await list_worktrees(repo)
    assert [(e.worktree.name, e.work.state) for e in entries] == [
        ("a-clean", WorkState.CLEAN),
        ("b-dirty", WorkState.DIRTY),
    ]
    assert all(e.owner is OwnerState.RUNNING for e in entries)
    assert entries[0].worktree == clean


async def test_remove_refuses_a_dirty_worktree_unless_forced(repo: Path) -> None:
    wt = await create_worktree(repo, "dirty")
    (wt.path / "README.md").write_text("edited\n")
    with pytest.raises(WorktreeHasWork, match="1 uncommitted change"):
        await remove_worktree(await find_worktree(repo, "dirty"))
    assert wt.path.is_dir()
    await remove_worktree(await find_worktree(repo, "dirty"), force=True)
    assert not wt.path.exists() and branches(repo) == ["main"]


async def test_remove_refuses_a_worktree_another_running_cat_code_owns(repo: Path) -> None:
    wt = await create_worktree(repo, "theirs")
    with subprocess.Popen(["sleep", "60"]) as other:
        try:
            record_file = admin_dir(wt.path) / RECORD_FILE  # type: ignore[operator]
            record = json.loads(record_file.read_text())
            record.update(ownerPid=other.pid, ownerStart=start_time(other.pid))
            record_file.write_text(json.dumps(record))
            with pytest.raises(WorktreeInUse, match=f"pid {other.pid}"):
                await remove_worktree(await find_worktree(repo, "theirs"))
            assert wt.path.is_dir()
        finally:
            other.kill()


async def test_a_worktree_whose_folder_was_deleted_is_listed_missing_and_removable(
    repo: Path,
) -> None:
    wt = await create_worktree(repo, "gone")
    shutil.rmtree(wt.path)  # git lists it as prunable until pruned
    [entry] = await list_worktrees(repo)
    assert entry.work.state is WorkState.MISSING
    await remove_worktree(entry)
    assert worktree_paths(repo) == [repo] and branches(repo) == ["main"]
