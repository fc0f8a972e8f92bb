"""A session's worktree: the sweep at every start, and ``--worktree [NAME]`` / ``-w``.

`run_session` wraps a session (the REPL or ``-p``). First it sweeps the clean worktrees of
sessions that were killed (`sweep_at_start`: no git process unless there is one). With
``-w`` it then creates the worktree, moves the process into it (cwd and ``PWD``: every
tool, server and saved session sees the worktree as the workspace), runs the session,
moves back, and settles the worktree: one without work goes with its branch; one with
work is kept and named on stderr (path and branch), after the REPL has asked whether to
keep or remove it. A session ended by a signal (exit 128 + N) asks nothing: it keeps.
Invariant: a worktree that could not be created leaves nothing behind and no session runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from cat_code.base.safe_text import safe_line
from cat_code.cli.options import Options
from cat_code.host.worktrees import (
    InvalidName,
    Worktree,
    WorktreeError,
    create_worktree,
    discard,
    remove_if_clean,
    sweep_at_start,
    work_in,
)

#: Exit codes from here on mean the session ended by a signal (`cat_code.host.shutdown`).
_SIGNALLED = 128


def run_session(options: Options, run: Callable[[Options], int]) -> int:
    """Run ``run`` (the session), inside a new worktree when ``-w`` was given."""
    sweep_at_start(Path.cwd())
    name = options.worktree
    if name is None:
        return run(options)
    try:
        worktree = asyncio.run(create_worktree(Path.cwd(), name or None))
    except WorktreeError as exc:
        sys.stderr.write(f"cat-code: {exc}\n")
        return 2 if isinstance(exc, InvalidName) else 1
    options = dataclasses.replace(
        options,
        active_worktree=worktree,
        # Paths given on the command line meant the folder the user typed them in.
        mcp_config=tuple(os.path.abspath(path) for path in options.mcp_config),
    )
    _say(f"working in worktree {worktree.name} (branch {worktree.branch}) at {worktree.path}")
    code: int | None = None  # stays None when the session raised (Ctrl-C outside a turn)
    try:
        with _inside(worktree.path):
            code = run(options)
    finally:
        ended_well = code is not None and code < _SIGNALLED
        _settle(worktree, asking=options.prompt is None and ended_well)
    return code


def _settle(worktree: Worktree, *, asking: bool) -> None:
    """Remove the worktree if it holds no work; else ask (REPL) or keep and say where."""
    try:
        if asyncio.run(remove_if_clean(worktree)):
            _say(f"worktree {worktree.name} had no changes: removed it and its branch")
            return
        work = asyncio.run(work_in(worktree))
        if asking and sys.stdin.isatty() and _wants_removal(worktree, work.summary()):
            asyncio.run(discard(worktree))
            _say(f"removed worktree {worktree.name} and its branch {worktree.branch}")
            return
        _say(
            f"kept worktree {worktree.name} ({work.summary()}): {worktree.path} "
            f"on branch {worktree.branch}"
        )
    except WorktreeError as exc:
        _say(f"worktree {worktree.name} at {worktree.path}: {exc}")


def _wants_removal(worktree: Worktree, summary: str) -> bool:
    """Ask whether to remove a worktree holding work; keeping is the default."""
    question = f"worktree {worktree.name} has {summary}. keep it or remove it? [K/r] "
    try:
        answer = input(safe_line(question))
    except (EOFError, KeyboardInterrupt):
        sys.stderr.write("\n")
        return False
    return answer.strip().lower() in ("r", "remove")


def _say(text: str) -> None:
    sys.stderr.write(safe_line(f"cat-code: {text}") + "\n")


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    """The process's working folder is ``folder`` (and ``PWD`` says so) for the block."""
    previous_cwd, previous_pwd = os.getcwd(), os.environ.get("PWD")
    os.chdir(folder)
    os.environ["PWD"] = str(folder)  # a shell child trusts PWD when it names the cwd
    try:
        yield
    finally:
        os.chdir(previous_cwd)
        if previous_pwd is None:
            os.environ.pop("PWD", None)
        else:
            os.environ["PWD"] = previous_pwd
