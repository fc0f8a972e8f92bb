"""Running one command hook: a child process with the event's JSON on stdin.

The command runs as written through ``/bin/sh -c`` in cat-code's working directory (as in
Claude Code), in its own session, so its process group is its own: a timeout or a cancel
ends the hook and everything it started, never cat-code's group. On Linux it is started
by ``posix_spawn`` and watched through a pidfd (`cat_code.agent.hooks.process`: a fork
from a busy agent is slow); elsewhere by asyncio. The environment is cat-code's plus
``CAT_CODE_PROJECT_DIR`` and ``CLAUDE_PROJECT_DIR`` (Claude Code's name, so its scripts
work). Invariants: the child is always reaped before `run_hook` returns or raises; a hook
past its timeout is a `HookRun` with ``timed_out`` set, never an exception; a command
that cannot start is a `HookRun` with ``error`` set. ``-v`` logs each run: the event, the
command as written, the exit code and the milliseconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cat_code.agent.hooks import process
from cat_code.agent.hooks.config import HookCommand

logger = logging.getLogger(__name__)

#: How long a hook's group has to go after SIGTERM before SIGKILL (a script's trap).
TERMINATE_GRACE_S = 1.0
#: At most this much of a hook's stdout and stderr is kept (a runaway hook's flood).
OUTPUT_LIMIT = 1 << 20
SHELL = "/bin/sh"


@dataclass(frozen=True, slots=True)
class HookRun:
    """What one hook process did."""

    hook: HookCommand
    #: None when it did not exit by itself (timed out, or could not start).
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    ms: float = 0.0
    timed_out: bool = False
    #: Why it could not start.
    error: str | None = None


async def run_hook(hook: HookCommand, payload: dict[str, Any], project_dir: Path) -> HookRun:
    """Run ``hook`` with ``payload`` on stdin (see the module docstring)."""
    started = time.perf_counter()
    env = {
        **os.environ,
        "CAT_CODE_PROJECT_DIR": str(project_dir),
        "CLAUDE_PROJECT_DIR": str(project_dir),
    }
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    try:
        if process.available():
            stdout, stderr, code = await _spawned(hook, env, data)
        else:
            stdout, stderr, code = await _with_asyncio(hook, env, data)
    except TimeoutError:  # first: it is an OSError too
        run = HookRun(hook, None, ms=_ms(started), timed_out=True)
    except OSError as exc:
        run = HookRun(hook, None, ms=_ms(started), error=str(exc))
    else:
        run = HookRun(hook, code, _text(stdout), _text(stderr), ms=_ms(started))
    _log(run)
    return run


async def _spawned(hook: HookCommand, env: dict[str, str], data: bytes) -> tuple[bytes, bytes, int]:
    """Linux: ``posix_spawn`` and a pidfd (`cat_code.agent.hooks.process`)."""
    child = process.HookProcess([SHELL, "-c", hook.command], env)
    try:
        async with asyncio.timeout(hook.timeout_s):
            stdout, stderr = await child.communicate(data, OUTPUT_LIMIT)
    except BaseException:  # past its timeout, or cancelled with the turn: the group goes
        await child.end(TERMINATE_GRACE_S)
        raise
    assert child.returncode is not None
    return stdout, stderr, child.returncode


async def _with_asyncio(
    hook: HookCommand, env: dict[str, str], data: bytes
) -> tuple[bytes, bytes, int]:
    """Elsewhere: asyncio's subprocess, in its own session all the same."""
    child = await asyncio.create_subprocess_exec(
        SHELL,
        "-c",
        hook.command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    try:
        async with asyncio.timeout(hook.timeout_s):
            stdout, stderr = await child.communicate(data)
    except BaseException:
        await _end_group(child)
        raise
    assert child.returncode is not None
    return stdout, stderr, child.returncode


async def _end_group(child: asyncio.subprocess.Process) -> None:
    """SIGTERM the hook's whole group, wait the grace period, SIGKILL it; reap the child."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGTERM)
    try:
        async with asyncio.timeout(TERMINATE_GRACE_S):
            await child.wait()
    except TimeoutError:
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    await child.wait()


def _text(data: bytes) -> str:
    return data[:OUTPUT_LIMIT].decode("utf-8", errors="replace")


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _log(run: HookRun) -> None:
    if run.timed_out:
        code = f"timed out after {run.hook.timeout_s:g} s"
    elif run.error is not None:
        code = f"could not start ({run.error})"
    else:
        code = f"exit {run.exit_code}"
    logger.info("hook %s %r: %s, %.0f ms", run.hook.event, run.hook.command, code, run.ms)
