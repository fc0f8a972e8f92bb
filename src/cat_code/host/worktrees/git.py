"""The one way cat-code runs git: a child process, stdout and stderr drained together, bounded.

`run_git` starts ``git`` in its own session (a hook it runs dies with it), reads both pipes
concurrently through ``communicate()`` (a full stderr pipe can never stall a git that is
still writing stdout), and kills the group when the bound passes. Git never prompts:
stdin is /dev/null and ``GIT_TERMINAL_PROMPT=0``. Failures are `GitError`s with fields;
a non-zero exit is one only when the caller says so (``check``), since several callers
read an exit code as an answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

from cat_code.host.worktrees.errors import GitFailed, GitNotFound, GitTimedOut

logger = logging.getLogger(__name__)

#: A query (rev-parse, status, rev-list) on any sane repository answers well within this.
QUERY_TIMEOUT_S = 30.0
#: Checking out or deleting a whole tree: a large repository takes minutes, not hours.
TREE_TIMEOUT_S = 300.0
#: After the kill, how long to wait for the child to be reaped before giving up on it.
_KILL_WAIT_S = 5.0


@dataclass(frozen=True, slots=True)
class GitResult:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def lines(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if line]


def git_path() -> str:
    """The git executable on PATH; `GitNotFound` without one."""
    found = shutil.which("git")
    if found is None:
        raise GitNotFound()
    return found


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"  # never wait for a password nobody will type
    # A GIT_DIR or GIT_WORK_TREE meant for another command would point git elsewhere.
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"):
        env.pop(name, None)
    return env


async def run_git(
    cwd: Path, *args: str, check: bool = True, timeout_s: float = QUERY_TIMEOUT_S
) -> GitResult:
    """Run ``git ARGS`` in ``cwd``; its output, or `GitFailed` on a non-zero exit (``check``)."""
    try:
        process = await asyncio.create_subprocess_exec(
            git_path(),
            *args,
            cwd=cwd,
            env=_environment(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError as exc:  # git vanished since `which`, or cwd is gone
        if not cwd.is_dir():
            raise GitFailed(args, -1, f"{cwd}: no such folder") from exc
        raise GitNotFound() from exc
    try:
        async with asyncio.timeout(timeout_s):
            out, err = await process.communicate()
    except TimeoutError:
        await _end(process)
        raise GitTimedOut(args, timeout_s) from None
    except asyncio.CancelledError:
        await _end(process)  # our caller gave up: git must not run on, unowned
        raise
    assert process.returncode is not None
    result = GitResult(
        tuple(args),
        process.returncode,
        out.decode(errors="surrogateescape"),
        err.decode(errors="replace"),
    )
    if check and not result.ok:
        logger.debug("git %s in %s: exit %s: %s", args, cwd, result.returncode, result.stderr)
        raise GitFailed(args, result.returncode, result.stderr)
    return result


async def _end(process: asyncio.subprocess.Process) -> None:
    """Kill git's whole group (a hook it started too) and reap it, bounded."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(_KILL_WAIT_S):
            await process.wait()
