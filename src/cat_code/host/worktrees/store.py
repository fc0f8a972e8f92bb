"""Creating, inspecting and removing cat-code's worktrees (the WorktreeStore).

A cat-code worktree is a git worktree at ``ROOT/.cat-code/worktrees/NAME`` on the branch
``cat-code/NAME``, made from HEAD, with an owner record (`record`). Git is the only index:
`list_worktrees` reads ``git worktree list`` and keeps the entries under that folder, so
a worktree made or removed by hand is seen as it is.

Invariants: nothing is created unless every check passed (name, repository, commits,
folder and branch free; git itself refuses a taken branch before it writes anything);
nothing with work in it is removed without ``force``: uncommitted changes or untracked
files (``git worktree remove`` refuses those itself) or commits beyond the base the
worktree started from. A clean worktree goes together with its branch; the branch is
deleted only while it still points at that base.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from cat_code.host.state.run_records import OwnerState
from cat_code.host.worktrees._git import TREE_TIMEOUT_S, failed, git
from cat_code.host.worktrees.errors import (
    NameInUse,
    NoCommits,
    WorktreeHasWork,
    WorktreeInUse,
    WorktreeNotFound,
)
from cat_code.host.worktrees.names import branch_of, check_name, generated_name
from cat_code.host.worktrees.record import (
    OwnerRecord,
    read_record,
    read_record_at,
    write_record,
)
from cat_code.host.worktrees.repository import Repository, ensure_excluded, find_repository

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Worktree:
    """One cat-code worktree: where it is, its branch, and the commit it started from."""

    name: str
    path: Path
    branch: str
    #: The commit it was made from (None: no owner record to say so).
    base: str | None
    #: The main work tree of its repository (where git runs for it).
    root: Path


class WorkState(enum.Enum):
    CLEAN = "clean"
    #: Uncommitted changes, untracked files or new commits: removing it would lose them.
    DIRTY = "dirty"
    #: Its folder is gone; git lists it as prunable.
    MISSING = "missing"


@dataclass(frozen=True, slots=True)
class Work:
    """What a worktree holds beyond its base."""

    changes: int
    commits: int
    missing: bool = False

    @property
    def state(self) -> WorkState:
        if self.missing:
            return WorkState.MISSING
        return WorkState.DIRTY if self.changes or self.commits else WorkState.CLEAN

    def summary(self) -> str:
        parts = []
        if self.changes:
            parts.append(f"{self.changes} uncommitted change{'s' * (self.changes != 1)}")
        if self.commits:
            parts.append(f"{self.commits} new commit{'s' * (self.commits != 1)}")
        return " and ".join(parts) or "no changes"


@dataclass(frozen=True, slots=True)
class WorktreeEntry:
    """A worktree as `list_worktrees` reports it."""

    worktree: Worktree
    work: Work
    owner: OwnerState
    owner_pid: int | None
    created: float | None


async def create_worktree(folder: Path, name: str | None = None) -> Worktree:
    """A new worktree of the repository ``folder`` is in, on ``cat-code/NAME`` from HEAD."""
    name = check_name(name) if name is not None else generated_name()
    repo = await find_repository(folder)
    if repo.head is None:
        raise NoCommits(repo.root)
    path = repo.worktrees_dir / name
    if path.exists() or path.is_symlink():
        raise NameInUse(name, f"{path} exists")
    branch = branch_of(name)
    added = await git(
        repo.root, "worktree", "add", "--quiet", "-b", branch, str(path), repo.head,
        check=False, timeout_s=TREE_TIMEOUT_S,
    )  # fmt: skip
    if added.code != 0:
        if await _branch_exists(repo.root, branch):
            raise NameInUse(name, f"the branch {branch} exists")
        raise failed(("worktree", "add"), added)
    # Only now: a refused worktree leaves no trace, not even the exclude line.
    ensure_excluded(repo)
    write_record(path, name, repo.head)
    return Worktree(name=name, path=path, branch=branch, base=repo.head, root=repo.root)


async def list_worktrees(folder: Path, *, with_work: bool = True) -> list[WorktreeEntry]:
    """The cat-code worktrees of the repository ``folder`` is in, by name."""
    repo = await find_repository(folder)
    found = await _listed(repo)
    if with_work:
        works = await asyncio.gather(*(_work_or_missing(wt, gone) for wt, gone, _ in found))
    else:
        works = [Work(0, 0, gone) for _, gone, _ in found]
    entries = []
    for (wt, _, record), work in zip(found, works, strict=True):
        owner = record.owner() if record is not None else OwnerState.UNKNOWN
        entries.append(
            WorktreeEntry(
                worktree=wt,
                work=work,
                owner=owner,
                owner_pid=record.owner_pid if record is not None else None,
                created=record.created if record is not None else None,
            )
        )
    return sorted(entries, key=lambda e: e.worktree.name)


async def find_worktree(folder: Path, name: str) -> WorktreeEntry:
    """The worktree called ``name``; `WorktreeNotFound` if there is none."""
    check_name(name)
    for entry in await list_worktrees(folder, with_work=False):
        if entry.worktree.name == name:
            return entry
    raise WorktreeNotFound(name)


async def work_in(worktree: Worktree) -> Work:
    """Its uncommitted changes (untracked files count) and its commits beyond the base."""
    changes, commits = await asyncio.gather(_changes(worktree), _commits(worktree))
    return Work(changes=changes, commits=commits)


async def changed_files(worktree: Worktree) -> list[str]:
    """The files that differ from the base: committed, staged, unstaged or untracked."""
    base = worktree.base or "HEAD"
    diff, untracked = await asyncio.gather(
        git(worktree.path, "diff", "--name-only", "-z", base, "--"),
        git(worktree.path, "ls-files", "--others", "--exclude-standard", "-z"),
    )
    names = {n for n in (diff.text + untracked.text).split("\0") if n}
    return sorted(names)


async def remove_if_clean(worktree: Worktree) -> bool:
    """Remove the worktree and its branch if it holds no work; whether it was removed."""
    if await _commits(worktree):
        return False
    removed = await git(
        worktree.root, "worktree", "remove", str(worktree.path),
        check=False, timeout_s=TREE_TIMEOUT_S,
    )  # fmt: skip
    if removed.code != 0:
        if worktree.path.is_dir() and await _changes(worktree):
            return False  # git refused: changed or untracked files
        raise failed(("worktree", "remove"), removed)
    await _delete_branch(worktree)
    return True


async def remove_worktree(entry: WorktreeEntry, *, force: bool = False) -> None:
    """Remove a worktree and its branch: refused while in use or holding work, unless
    ``force``. A worktree whose folder is gone is pruned."""
    worktree = entry.worktree
    if not force and entry.owner is OwnerState.RUNNING and entry.owner_pid != os.getpid():
        raise WorktreeInUse(worktree.name, entry.owner_pid)
    if entry.work.missing or not worktree.path.is_dir():
        await prune_missing(worktree, force=force)
        return
    if not force:
        if not await remove_if_clean(worktree):
            raise WorktreeHasWork(worktree.name, (await work_in(worktree)).summary())
        return
    await discard(worktree)


async def discard(worktree: Worktree) -> None:
    """Remove the worktree and its branch, work and all (the user said so)."""
    # --force twice: also a worktree someone locked.
    await git(
        worktree.root, "worktree", "remove", "--force", "--force", str(worktree.path),
        timeout_s=TREE_TIMEOUT_S,
    )  # fmt: skip
    await _delete_branch(worktree, force=True)


async def prune_missing(worktree: Worktree, *, force: bool = False) -> bool:
    """Forget a worktree whose folder is gone; its branch too unless it has new commits
    (or ``force``). Whether the branch went."""
    await git(worktree.root, "worktree", "prune")
    if not force and await _commits(worktree, at=worktree.root):
        return False
    await _delete_branch(worktree, force=force)
    return True


# -- git queries -------------------------------------------------------------------------


async def _listed(repo: Repository) -> list[tuple[Worktree, bool, OwnerRecord | None]]:
    """(worktree, folder gone, owner record) for each of git's worktrees under ours."""
    listed = await git(repo.root, "worktree", "list", "--porcelain", "-z")
    found = []
    for block in listed.text.split("\0\0"):
        fields = {
            key: value for key, _, value in (f.partition(" ") for f in block.split("\0") if f)
        }
        path = Path(fields.get("worktree", ""))
        if path.parent != repo.worktrees_dir:
            continue
        branch = fields.get("branch", "").removeprefix("refs/heads/")
        gone = "prunable" in fields or not path.is_dir()
        record = read_record(path) if not gone else _record_of_missing(repo, path.name)
        base = record.base if record is not None and record.base else None
        worktree = Worktree(
            name=path.name, path=path, branch=branch or branch_of(path.name), base=base,
            root=repo.root,
        )  # fmt: skip
        found.append((worktree, gone, record))
    return found


def _record_of_missing(repo: Repository, name: str) -> OwnerRecord | None:
    """A gone folder's record, from its admin folder (git names it after the folder)."""
    return read_record_at(repo.git_dir / "worktrees" / name)


async def _work_or_missing(worktree: Worktree, gone: bool) -> Work:
    if gone:
        commits = await _commits(worktree, at=worktree.root)
        return Work(changes=0, commits=commits, missing=True)
    return await work_in(worktree)


async def _changes(worktree: Worktree) -> int:
    status = await git(worktree.path, "status", "--porcelain", "-z")
    entries = iter(status.text.split("\0"))
    count = 0
    for entry in entries:
        if not entry:
            continue
        count += 1
        # A rename or copy: its source path follows as an entry of its own.
        if "R" in entry[:2] or "C" in entry[:2]:
            next(entries, None)
    return count


async def _commits(worktree: Worktree, *, at: Path | None = None) -> int:
    """Commits on its HEAD or branch that its base does not have (``at``: run there, and
    only the branch counts: the folder is gone)."""
    tips = ["--ignore-missing", f"refs/heads/{worktree.branch}"]
    if at is None:
        tips.insert(1, "HEAD")
    if worktree.base is not None:
        limit = [f"^{worktree.base}"]
    else:  # no record: what no other branch has is new
        limit = ["--not", f"--exclude={worktree.branch}", "--branches"]
    counted = await git(at or worktree.path, "rev-list", "--count", *tips, *limit)
    return int(counted.text.strip() or 0)


async def _branch_exists(root: Path, branch: str) -> bool:
    found = await git(root, "show-ref", "--verify", "--quiet", f"refs/heads/{branch}",
                          check=False)  # fmt: skip
    return found.code == 0


async def _delete_branch(worktree: Worktree, *, force: bool = False) -> None:
    """Delete its branch: only while it points at the base, unless ``force``."""
    ref = f"refs/heads/{worktree.branch}"
    only_at = [worktree.base] if worktree.base is not None and not force else []
    deleted = await git(worktree.root, "update-ref", "-d", ref, *only_at, check=False)
    if deleted.code != 0:  # moved meanwhile (kept: it has work), or deleted by hand
        logger.debug("branch %s of worktree %s kept: %s", ref, worktree.name, deleted.stderr)
