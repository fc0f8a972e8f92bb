"""git for the WorktreeStore: `cat_code.host.git`'s one runner (both pipes drained together,
bounded, the group killed past the bound), its failures translated at this boundary into
the `WorktreeError` tree, so a caller of the store catches one tree."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cat_code.host.git import GitError, GitMissing, GitResult, run_git
from cat_code.host.worktrees.errors import GitFailed, GitNotFound, GitTimedOut

#: A query (rev-parse, status, rev-list) on any sane repository answers well within this.
QUERY_TIMEOUT_S = 30.0
#: Checking out or deleting a whole tree: a large repository takes minutes, not hours.
TREE_TIMEOUT_S = 300.0


async def git(
    cwd: Path, *args: str, check: bool = True, timeout_s: float = QUERY_TIMEOUT_S
) -> GitResult:
    """``git ARGS`` in ``cwd``; `GitFailed` on a non-zero exit (``check``), `GitTimedOut`,
    `GitNotFound`."""
    try:
        return await run_git(cwd, *args, timeout=timeout_s, check=check)
    except GitMissing as exc:
        raise GitNotFound() from exc
    except GitError as exc:
        if exc.code is None:
            raise GitTimedOut(args, timeout_s) from exc
        raise GitFailed(args, exc.code, exc.stderr) from exc


def failed(args: Sequence[str], result: GitResult) -> GitFailed:
    """The error for a result a caller ran unchecked and cannot accept."""
    return GitFailed(args, result.code, result.stderr)


def lines(result: GitResult) -> list[str]:
    return [line for line in result.text.splitlines() if line]
