"""Signals end a command, and every MCP server with it: one rule for every command.

`run_until_signal` runs a command's work with handlers for SIGINT, SIGTERM and SIGHUP on
the running loop. A signal while the work runs cancels it (unless the program takes it
for itself: the REPL's SIGINT cancels a turn); then the servers are closed the normal
way (stdin, grace, SIGTERM to the group, SIGKILL) and the exit code is 128 + N of the
first such signal. A signal while the servers are closing hurries the close (SIGKILL
now); it never stops it. The handlers are removed at the end, and the pool's synchronous
``kill_now`` runs last, in a ``finally`` with no await, so no cancellation can skip it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Protocol

logger = logging.getLogger(__name__)

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Servers(Protocol):
    """What shutting down needs of the MCP pool."""

    async def close_all(self) -> None: ...

    def hurry(self) -> None: ...

    def kill_now(self) -> None: ...


def _not_taken(sig: signal.Signals) -> bool:
    return False


class _Handler:
    """The signal handler's state: which signal came first, and what it has done."""

    def __init__(
        self,
        servers: Servers,
        work: asyncio.Task[object],
        take: Callable[[signal.Signals], bool],
        announce: bool,
    ) -> None:
        self.servers = servers
        self.work = work
        self.take = take
        self.announce = announce
        self.signal: signal.Signals | None = None
        #: The work was cancelled by us (so that cancellation is ours to absorb).
        self.cancelled_work = False
        #: The servers are being closed: a signal now hurries that.
        self.closing = False

    def __call__(self, sig: signal.Signals) -> None:
        first = self.signal is None
        if first and not self.closing and self.take(sig):
            return  # the program's own use of the signal (the REPL cancelled a turn)
        if first:
            self.signal = sig
            if self.announce:
                _say(f"cat-code: interrupted by {sig.name}; closing the MCP servers")
        if first and not self.closing:
            self.cancelled_work = True
            self.work.cancel()
        else:
            # Already shutting down: the close in progress (or to come) kills at once.
            logger.debug("%s during shutdown: the MCP servers are killed now", sig.name)
            self.servers.hurry()


async def run_until_signal(
    servers: Servers,
    work: Callable[[], Awaitable[int]],
    *,
    take: Callable[[signal.Signals], bool] = _not_taken,
    announce: bool = True,
) -> int:
    """Run ``work()`` (a command, returning its exit code), then close every server.

    A signal ends the work early and makes the exit code 128 + N. ``take`` may claim a
    signal that arrives while the work runs (return True); ``announce`` says on stderr
    that a signal is closing the servers.
    """
    task = asyncio.current_task()
    assert task is not None
    handler = _Handler(servers, task, take, announce)
    loop = asyncio.get_running_loop()
    for sig in SIGNALS:
        loop.add_signal_handler(sig, handler, sig)
    code = 1
    try:
        try:
            code = await work()
        finally:
            handler.closing = True
            await servers.close_all()  # finishes even when cancelled, then re-raises
    except asyncio.CancelledError:
        if not handler.cancelled_work:
            raise
        task.uncancel()
    finally:
        for sig in SIGNALS:
            loop.remove_signal_handler(sig)
        servers.kill_now()  # a no-op after a finished close; else nothing may outlive us
    if handler.signal is not None:
        return 128 + handler.signal.value
    return code


def _say(text: str) -> None:
    # After SIGHUP the terminal may be gone: the message is not worth failing over.
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
