"""Blocking work on a daemon thread, awaited as a future: `in_daemon_thread`.

Not `asyncio.to_thread`: the loop's default executor is joined when ``asyncio.run``
ends, so one call stuck in the kernel (a read of a FIFO, a dead NFS mount) or work nobody
waits for any more (a provider's set-up when the user quits at once) would keep the
process alive after it is done. A daemon thread dies with the process. The result, or
the exception, is handed to the awaiting task; if that task was cancelled meanwhile, or
the loop has closed, it is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar, cast

_T = TypeVar("_T")


def in_daemon_thread(work: Callable[[], _T], *, name: str) -> asyncio.Future[_T]:
    """Run ``work`` on a new daemon thread called ``name``; its result as a future."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_T] = loop.create_future()

    def settle(result: _T | None, error: BaseException | None) -> None:
        if future.done():
            return  # the caller was cancelled meanwhile
        if error is None:
            future.set_result(cast(_T, result))
        else:
            future.set_exception(error)

    def run() -> None:
        result: _T | None = None
        error: BaseException | None = None
        try:
            result = work()
        except BaseException as exc:  # handed to the awaiting task, not lost on the thread
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop closed first: nobody is waiting
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name=name, daemon=True).start()
    return future


__all__ = ["in_daemon_thread"]
