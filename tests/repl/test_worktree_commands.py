"""``/worktree``: without ``-w`` it says how to get a worktree; with one it is an effect that
asks git what the worktree holds."""

from __future__ import annotations

from pathlib import Path

from cat_code.host.worktrees import Worktree
from cat_code.repl.commands import CommandContext, Show, complete, handle_command
from cat_code.repl.commands.worktree import NO_WORKTREE, ShowWorktree
from cat_code.tools.registry import ToolRegistry


def test_without_a_worktree_the_command_says_how_to_start_one() -> None:
    outcome = handle_command("/worktree", CommandContext(registry=ToolRegistry()))
    assert outcome == Show(NO_WORKTREE)
    assert "cat-code -w [NAME]" in NO_WORKTREE


def test_in_a_worktree_the_command_looks_at_that_worktree() -> None:
    wt = Worktree(name="n", path=Path("/r/.cat-code/worktrees/n"), branch="cat-code/n",
                  base="abc", root=Path("/r"))  # fmt: skip
    outcome = handle_command("/worktree", CommandContext(registry=ToolRegistry(), worktree=wt))
    assert outcome == ShowWorktree(wt)


def test_tab_completes_the_command() -> None:
    assert "/worktree" in complete("/workt", CommandContext(registry=ToolRegistry()))
