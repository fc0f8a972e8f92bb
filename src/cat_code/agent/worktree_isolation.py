"""``isolation: "worktree"`` for subagents: a fresh worktree of its own, then a summary.

`worktree_isolation` is an isolation factory for the subagents' seam (``Subagents.
isolations["worktree"]``: called with the subagent's name, it returns its place). The
place is a new cat-code worktree of the session's repository on a branch of its own, with
built-in tools of its own (shell, file tools) whose working folder is the worktree, so
that its edits never touch the session's checkout. `WorktreeIsolation.leave` (called when
the subagent ends, on every path) names the branch and the files changed for the answer;
a worktree without changes is removed at once, with its branch. Until the session ends,
the worktree is owned by this process: a killed session's clean leftovers are swept by
the next start (`cat_code.host.worktrees.gc`).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from pathlib import Path

from cat_code.host.worktrees import Worktree, changed_files, create_worktree, remove_if_clean
from cat_code.tools.base import Tool
from cat_code.tools.builtin import FileLedger

#: Makes the built-in tools for a folder (`cat_code.agent.session.builtin_tool_list`: given,
#: not imported, so the session that wires this in does not import itself back).
ToolMaker = Callable[[Path, FileLedger], list[Tool]]

#: How many changed files a summary names before it says "and N more".
SUMMARY_FILES = 20
_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


class WorktreeIsolation:
    """One subagent's worktree and the tools that work in it."""

    def __init__(self, worktree: Worktree, make_tools: ToolMaker) -> None:
        self.worktree = worktree
        self.cwd = worktree.path
        self._make_tools = make_tools
        self._ledger = FileLedger()  # its reads are its own: read-before-write per place

    def tools(self) -> list[Tool]:
        return self._make_tools(self.cwd, self._ledger)

    async def leave(self) -> str:
        """Remove the worktree if it holds no work; the line the answer ends with."""
        wt = self.worktree
        files = await changed_files(wt)
        if await remove_if_clean(wt):
            return f"(worked in worktree {wt.name}: no changes; removed it and its branch)"
        shown = ", ".join(files[:SUMMARY_FILES])
        more = f" and {len(files) - SUMMARY_FILES} more" if len(files) > SUMMARY_FILES else ""
        return (
            f"(work kept on branch {wt.branch} in worktree {wt.path}; "
            f"files changed: {shown or 'none (new commits only)'}{more})"
        )


def worktree_name(agent: str) -> str:
    """A fresh worktree name for a subagent: ``agent-NAME-xxxxxx`` (NAME made safe)."""
    slug = _SLUG.sub("-", agent).strip("-")[:24] or "sub"
    return f"agent-{slug}-{secrets.token_hex(3)}"


async def worktree_isolation(agent: str, *, repo: Path, make_tools: ToolMaker) -> WorktreeIsolation:
    """A new worktree of ``repo``'s repository for subagent ``agent``, its tools made by
    ``make_tools``; raises `cat_code.host.worktrees.WorktreeError` (no git, not a
    repository) with nothing made. Wired as ``Subagents.isolations["worktree"] =
    functools.partial(worktree_isolation, repo=cwd, make_tools=builtin_tool_list)``."""
    return WorktreeIsolation(await create_worktree(repo, worktree_name(agent)), make_tools)
