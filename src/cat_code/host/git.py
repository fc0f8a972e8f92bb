"""Running git: one child process per command, its stdout and stderr read together, bounded.

`run_git` starts ``git`` with ``-C folder`` and waits for it with ``communicate`` (both pipes
drained at once, so a chatty stderr can never block a large stdout), within a timeout after
which git is killed with its process group (a hook it started too). A failure is a
`GitError` whose fields say which command, its exit code and the first lines of what it
wrote on stderr; no git on PATH is `GitMissing`.
The environment is the caller's plus ``extra_env`` (e.g. ``GIT_INDEX_FILE`` for a private
index) with git's prompts turned off: cat-code never waits on a git question.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

#: How long one git command may take before it is killed.
GIT_TIMEOUT_S = 60.0
#: What of git's stderr an error keeps.
STDERR_CHARS = 500


class GitError(Exception):
    """A git command failed; ``args`` as run, ``code`` (None: timed out), git's ``stderr``."""

    def __init__(self, args: Sequence[str], code: int | None, stderr: str) -> None:
        self.git_args = list(args)
        self.code = code
        self.stderr = stderr.strip()[:STDERR_CHARS]
        what = f"git {' '.join(self.git_args[:3])}"
        why = "timed out" if code is None else f"exited {code}"
        detail = f": {self.stderr}" if self.stderr else ""
        super().__init__(f"{what} {why}{detail}")


class GitMissing(GitError):
    """No ``git`` program on PATH."""

    def __init__(self) -> None:
        super().__init__([], 127, "git is not installed (no 'git' on PATH)")

    def __str__(self) -> str:
        return "git is not installed (no 'git' on PATH)"


@dataclass(frozen=True, slots=True)
class GitResult:
    stdout: bytes
    stderr: str
    #: git's exit status (non-zero only when not ``check``).
    code: int = 0

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "surrogateescape")


def git_available() -> bool:
    return shutil.which("git") is not None


async def run_git(
    folder: Path,
    *args: str,
    extra_env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float = GIT_TIMEOUT_S,
    check: bool = True,
) -> GitResult:
    """``git -C folder ARGS``; `GitError` when it fails (unless not ``check``)."""
    program = shutil.which("git")
    if program is None:
        raise GitMissing()
    env = dict(os.environ)
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    if extra_env:
        env.update(extra_env)
    process = await asyncio.create_subprocess_exec(
        program,
        "-C",
        str(folder),
        *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        # Its own process group: a hook it runs (post-checkout on ``worktree add``) is
        # killed with it, and a Ctrl-C at the terminal reaches cat-code, not git.
        start_new_session=True,
    )
    try:
        async with asyncio.timeout(timeout):
            out, err = await process.communicate(stdin)
    except TimeoutError:
        await _kill(process)
        raise GitError(args, None, "") from None
    except BaseException:
        if process.returncode is None:
            await _kill(process)
        raise
    stderr = err.decode("utf-8", "replace")
    assert process.returncode is not None
    if check and process.returncode != 0:
        raise GitError(args, process.returncode, stderr)
    return GitResult(out, stderr, process.returncode)


async def _kill(process: asyncio.subprocess.Process) -> None:
    """SIGKILL git's whole group (what it started too), then reap git."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()


async def git_root(folder: Path) -> Path | None:
    """The top of the work tree ``folder`` is in, or None (not a repository, or no git)."""
    if not git_available():
        return None
    try:
        found = await run_git(folder, "rev-parse", "--show-toplevel")
    except GitError:
        return None
    text = found.text.strip()
    return Path(text) if text else None


__all__ = [
    "GIT_TIMEOUT_S",
    "GitError",
    "GitMissing",
    "GitResult",
    "git_available",
    "git_root",
    "run_git",
]
