"""Real git repositories for tests: made with the real ``git``, one commit or more."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: Commits need an author; the test machine's git config may have none.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
}  # fmt: skip


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo``; its stdout (raises on a non-zero exit)."""
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**os.environ, **_IDENTITY},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def make_repo(folder: Path, files: dict[str, str] | None = None) -> Path:
    """A repository at ``folder`` with ``files`` (default: one README) in one commit."""
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "--quiet", "--initial-branch=main")
    for name, text in (files or {"README.md": "hello\n"}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(folder, "add", "--all")
    git(folder, "commit", "--quiet", "-m", "initial")
    return folder


def commit_all(repo: Path, message: str = "work") -> None:
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", message)


def branches(repo: Path) -> list[str]:
    return git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").split()


def worktree_paths(repo: Path) -> list[Path]:
    listed = git(repo, "worktree", "list", "--porcelain")
    return [Path(line[9:]) for line in listed.splitlines() if line.startswith("worktree ")]
