"""The repository a worktree belongs to: its main work tree, its git dir, its HEAD.

Worktrees always go under the *main* work tree (``ROOT/.cat-code/worktrees``), also when
cat-code runs inside one of them, so they never nest. `find_repository` asks git once
(one ``rev-parse`` for all three facts); `main_root_near` finds the same root from files
alone, for the sweep at every start, which must cost no process when there is nothing to
sweep. The folder is hidden from ``git status`` through the repository's own
``info/exclude``; the project's ``.gitignore`` is never edited.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from cat_code.host.git import git_available
from cat_code.host.worktrees._git import git, lines
from cat_code.host.worktrees.errors import GitNotFound, NotARepository
from cat_code.host.worktrees.names import WORKTREES_DIR
from cat_code.host.worktrees.record import admin_dir

#: The line `ensure_excluded` adds to ``info/exclude`` (anchored: only the root's folder).
EXCLUDE_LINE = f"/{WORKTREES_DIR}/"


@dataclass(frozen=True, slots=True)
class Repository:
    root: Path
    git_dir: Path
    #: The commit HEAD names; None in a repository without commits.
    head: str | None

    @property
    def worktrees_dir(self) -> Path:
        return self.root / WORKTREES_DIR


async def find_repository(folder: Path) -> Repository:
    """The repository ``folder`` is in; `NotARepository` or a `WorktreeGitError` otherwise."""
    if not git_available():
        raise GitNotFound()
    if not folder.is_dir():
        raise NotARepository(folder)
    result = await git(
        folder,
        "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel", "HEAD",
        check=False,
    )  # fmt: skip
    found = lines(result)
    if len(found) < 2:  # outside a repository, or in a bare one (no work tree)
        raise NotARepository(folder)
    git_dir, top = Path(found[0]), Path(found[1])
    # Without a commit, HEAD does not resolve: git echoes it and fails.
    head = found[2] if result.code == 0 and len(found) > 2 else None
    # The main work tree holds the common git dir as ``.git``; a bare repository's linked
    # worktrees have no main one, so the current work tree serves.
    root = git_dir.parent if git_dir.name == ".git" else top
    return Repository(root=root, git_dir=git_dir, head=head)


def ensure_excluded(repo: Repository) -> None:
    """Add `EXCLUDE_LINE` to the repository's ``info/exclude`` unless it is there."""
    exclude = repo.git_dir / "info" / "exclude"
    try:
        text = exclude.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        text = ""
    if EXCLUDE_LINE in text.splitlines():
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as file:
        if text and not text.endswith("\n"):
            file.write("\n")
        file.write(f"# cat-code's worktrees (cat-code --worktree)\n{EXCLUDE_LINE}\n")


def main_root_near(start: Path) -> Path | None:
    """The main work tree above ``start``, from ``.git`` files alone (None: none found)."""
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder
        if dot_git.is_file():
            gitdir = admin_dir(folder)
            if gitdir is None:
                return None
            common = gitdir
            with contextlib.suppress(OSError):
                relative = (gitdir / "commondir").read_text(encoding="utf-8").strip()
                common = (gitdir / relative).resolve()
            return common.parent if common.name == ".git" else None
    return None
