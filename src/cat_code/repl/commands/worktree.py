"""``/worktree``: the git worktree this session runs in (``cat-code -w``) and what it holds.

Without ``-w`` it says how to get one. With one, it asks git (in the foreground, so Ctrl-C
cancels) for the uncommitted changes, the new commits and the files changed since the
worktree was made, so the user knows what the keep-or-remove question at exit is about.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from cat_code.base.safe_text import safe_line
from cat_code.host.worktrees import WorktreeError, changed_files, work_in
from cat_code.repl.commands.registry import (
    Cancelled,
    CommandContext,
    Outcome,
    ReplHost,
    Show,
    SlashCommand,
)
from cat_code.repl.render import error_line

if TYPE_CHECKING:
    from cat_code.host.worktrees import Worktree

#: How many changed files ``/worktree`` names before it says "and N more".
SHOWN_FILES = 20
NO_WORKTREE = (
    "this session runs in the folder you started it in, not a worktree; "
    "cat-code -w [NAME] starts one in a git worktree of its own (cat-code worktree list)"
)


@dataclass(frozen=True, slots=True)
class ShowWorktree:
    worktree: Worktree

    async def perform(self, repl: ReplHost) -> None:
        wt = self.worktree

        async def look() -> tuple[str, list[str]]:
            return (await work_in(wt)).summary(), await changed_files(wt)

        try:
            found = await repl.in_foreground(look())
        except WorktreeError as exc:
            repl.console.print(error_line(str(exc)))
            return
        if isinstance(found, Cancelled):
            return
        summary, files = found
        lines = [f"worktree {wt.name} · branch {wt.branch}", f"  path: {wt.path}",
                 f"  holds: {summary}"]  # fmt: skip
        if files:
            more = len(files) - SHOWN_FILES
            shown = ", ".join(files[:SHOWN_FILES]) + (f" and {more} more" if more > 0 else "")
            lines.append(f"  files changed: {shown}")
        lines.append(
            "  on exit: removed with its branch if it holds nothing, else you choose"
            if summary == "no changes"
            else "  on exit: you choose to keep it (the default) or remove it"
        )
        for line in lines:
            repl.console.print(Text(safe_line(line)))


def _worktree(rest: str, ctx: CommandContext) -> Outcome:
    if ctx.worktree is None:
        return Show(NO_WORKTREE)
    return ShowWorktree(ctx.worktree)


COMMANDS = (
    SlashCommand(
        "/worktree", "the git worktree this session runs in (cat-code -w) and what it holds",
        _worktree,
    ),
)  # fmt: skip
