"""What can go wrong with a worktree, sorted by who must act (httpx style)::

    WorktreeError                  every failure below; ``str()`` is the line to show
    ├── WorktreeGitError           git itself (`cat_code.host.git`'s errors, translated)
    │   ├── GitNotFound            no ``git`` on PATH
    │   ├── GitTimedOut            git ran past its bound and was killed
    │   └── GitFailed              git exited non-zero (args, returncode, stderr)
    ├── NotARepository             the folder is in no git work tree
    ├── NoCommits                  the repository has no commit to branch from
    ├── InvalidName                a NAME outside ``[A-Za-z0-9._-]{1,40}``
    ├── NameInUse                  a worktree folder or branch of that name exists
    ├── WorktreeNotFound           no cat-code worktree of that name
    ├── WorktreeHasWork            uncommitted changes or new commits (remove refused)
    └── WorktreeInUse              a running cat-code owns it (remove refused)

Every error is raised before anything is created, or names what was left. Text that came
from git (its stderr) is untrusted: it is shown through `cat_code.base.safe_text`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cat_code.base.safe_text import safe_line


class WorktreeError(Exception):
    """A worktree could not be created, inspected or removed; the message says why."""


class WorktreeGitError(WorktreeError):
    """Running git failed."""


class GitNotFound(WorktreeGitError):
    def __init__(self) -> None:
        super().__init__("git is not installed (no git on PATH); worktrees need it")


class GitTimedOut(WorktreeGitError):
    def __init__(self, args: Sequence[str], timeout_s: float) -> None:
        super().__init__(f"git {' '.join(args[:2])} took longer than {timeout_s:g} s; stopped")
        self.args_run = tuple(args)
        self.timeout_s = timeout_s


class GitFailed(WorktreeGitError):
    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        last = next((ln for ln in reversed(stderr.splitlines()) if ln.strip()), "")
        detail = f": {safe_line(last)}" if last else ""
        super().__init__(f"git {' '.join(args[:2])} failed (exit {returncode}){detail}")
        self.args_run = tuple(args)
        self.returncode = returncode
        self.stderr = stderr


class NotARepository(WorktreeError):
    def __init__(self, folder: Path) -> None:
        super().__init__(
            f"{safe_line(str(folder))} is not inside a git repository (a worktree needs one)"
        )
        self.folder = folder


class NoCommits(WorktreeError):
    def __init__(self, repo: Path) -> None:
        super().__init__(
            f"the repository at {safe_line(str(repo))} has no commit yet to branch from"
        )
        self.repo = repo


class InvalidName(WorktreeError):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"invalid worktree name {safe_line(repr(name))}: use 1 to 40 of A-Z a-z 0-9 . _ - "
            "(no '/', no spaces, not '.' or '..')"
        )
        self.name = name


class NameInUse(WorktreeError):
    def __init__(self, name: str, what: str) -> None:
        super().__init__(f"worktree name {name!r} is in use: {safe_line(what)}")
        self.name = name
        self.what = what


class WorktreeNotFound(WorktreeError):
    def __init__(self, name: str) -> None:
        super().__init__(f"no cat-code worktree named {safe_line(repr(name))} in this repository")
        self.name = name


class WorktreeHasWork(WorktreeError):
    def __init__(self, name: str, summary: str) -> None:
        super().__init__(
            f"worktree {name!r} has {summary}; not removed (--force removes it and its branch)"
        )
        self.name = name
        self.summary = summary


class WorktreeInUse(WorktreeError):
    def __init__(self, name: str, pid: int | None) -> None:
        owner = f" (pid {pid})" if pid is not None else ""
        super().__init__(
            f"worktree {name!r} is in use by a running cat-code{owner}; not removed "
            "(--force removes it anyway)"
        )
        self.name = name
        self.pid = pid
