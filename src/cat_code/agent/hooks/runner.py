"""Running one command hook: a child process with the event's JSON on stdin.

The command runs as written through ``/bin/sh -c`` in the project folder, in its own
session (so its process group is its own: a timeout or a cancel ends the hook and
everything it started, never cat-code's group). The environment is cat-code's plus
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
        process = await asyncio.create_subprocess_exec(
            SHELL,
            "-c",
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=project_dir if project_dir.is_dir() else None,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        run = HookRun(hook, None, ms=_ms(started), error=str(exc))
        _log(run)
        return run
    try:
        async with asyncio.timeout(hook.timeout_s):
            stdout, stderr = await process.communicate(data)
    except TimeoutError:
        await _end_group(process)
        run = HookRun(hook, None, ms=_ms(started), timed_out=True)
        _log(run)
        return run
    except BaseException:  # cancelled: the hook goes with the turn
        await _end_group(process)
        raise
    run = HookRun(
        hook,
        process.returncode,
        _text(stdout),
        _text(stderr),
        ms=_ms(started),
    )
    _log(run)
    return run


async def _end_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM the hook's whole group, wait the grace period, SIGKILL it; reap the child."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            async with asyncio.timeout(TERMINATE_GRACE_S):
                await process.wait()
            if sig is signal.SIGTERM:
                # The leader went; what it started may not have: they get SIGKILL too.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
            return
        except TimeoutError:
            continue


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
