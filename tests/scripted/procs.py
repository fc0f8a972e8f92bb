"""Helpers for tests that run real server processes: where the test servers are, and
waiting for them (liveness by pid comes from `scripted.processes.alive`)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path

SERVERS = Path(__file__).resolve().parent.parent / "servers"
MISBEHAVING = SERVERS / "misbehaving_server.py"


def server_command(*flags: str) -> tuple[str, list[str]]:
    """The command and args that run the misbehaving test server with ``flags``."""
    return sys.executable, [str(MISBEHAVING), *flags]


async def wait_until(condition: Callable[[], bool], timeout: float = 5) -> None:
    """Poll ``condition`` until it holds; fail after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def read_pid(path: Path, timeout: float = 10) -> int:
    """The pid a test server wrote to ``path`` (waiting for the file to appear)."""
    await wait_until(lambda: path.exists() and path.read_text().strip() != "", timeout)
    return int(path.read_text())


def kill_quietly(*pids: int) -> None:
    """Last-resort cleanup after a failed assertion: SIGKILL these pids if still there."""
    for pid in pids:
        try:
            os.kill(pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
