"""Git worktrees for cat-code sessions and subagents: the WorktreeStore.

``cat-code --worktree NAME`` runs a session in ``ROOT/.cat-code/worktrees/NAME`` on the
branch ``cat-code/NAME``; a subagent with ``isolation: "worktree"`` gets one of its own.
This package is runtime state, not protocol: it makes, lists and removes the worktrees
(`store`), records who owns each (`record`), cleans up after ended sessions (`gc`) and
runs git through `cat_code.host.git`. The async API below is all a caller needs::

    wt = await create_worktree(Path.cwd(), "fix-login")   # or None: a generated name
    ... run in wt.path ...
    files = await changed_files(wt)
    if not await remove_if_clean(wt):
        print(f"kept {wt.path} on {wt.branch}: {', '.join(files)}")
"""

from cat_code.host.worktrees.errors import (
    GitFailed,
    GitNotFound,
    GitTimedOut,
    InvalidName,
    NameInUse,
    NoCommits,
    NotARepository,
    WorktreeError,
    WorktreeGitError,
    WorktreeHasWork,
    WorktreeInUse,
    WorktreeNotFound,
)
from cat_code.host.worktrees.gc import GcReport, collect_garbage, sweep_at_start
from cat_code.host.worktrees.names import BRANCH_PREFIX, WORKTREES_DIR, check_name
from cat_code.host.worktrees.store import (
    Work,
    WorkState,
    Worktree,
    WorktreeEntry,
    changed_files,
    create_worktree,
    discard,
    find_worktree,
    list_worktrees,
    remove_if_clean,
    remove_worktree,
    work_in,
)

__all__ = [
    "BRANCH_PREFIX",
    "WORKTREES_DIR",
    "GcReport",
    "GitFailed",
    "GitNotFound",
    "GitTimedOut",
    "InvalidName",
    "NameInUse",
    "NoCommits",
    "NotARepository",
    "Work",
    "WorkState",
    "Worktree",
    "WorktreeEntry",
    "WorktreeError",
    "WorktreeGitError",
    "WorktreeHasWork",
    "WorktreeInUse",
    "WorktreeNotFound",
    "changed_files",
    "check_name",
    "collect_garbage",
    "create_worktree",
    "discard",
    "find_worktree",
    "list_worktrees",
    "remove_if_clean",
    "remove_worktree",
    "sweep_at_start",
    "work_in",
]
