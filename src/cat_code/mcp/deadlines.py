"""`Deadlines`: every request timeout of one client on a single timer.

Why not ``asyncio.timeout`` per request: it costs about 5 µs a request (an object and a
timer in the loop's heap), as much as a whole floor round trip with 1000 calls in flight
on stdio (see ``bench/``: ``stdio.concurrent``). Measured again for issue 8, back to back
on the same (busy) machine: 1.20–1.44× the floor with this module, 1.60–1.72× with
``asyncio.timeout`` and ``Timeout.reschedule`` for progress — within the 2× target, but
with half the margin on a quiet machine's 1.3–1.5×, so the shared timer stays.

Here starting a deadline is a dict entry; the timer is re-armed only for a deadline
earlier than the armed one (with one timeout per client, never while armed). When it
fires, each request past its deadline has its task cancelled exactly as
``asyncio.timeout`` does, and `Deadline.expired_here` turns that CancelledError into a
timeout. This cleverness lives here alone.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

#: Progress from the server restarts a request's timeout, but never past this many times
#: the timeout in all: the spec asks for a maximum even while progress keeps coming.
MAX_TIMEOUT_WITH_PROGRESS = 10


class Deadline:
    """One request's timeout: its task, when it expires, and whether it has."""

    __slots__ = ("cancelling", "expired", "latest", "task", "when")

    def __init__(self, task: asyncio.Task[Any], when: float, latest: float) -> None:
        self.task = task
        self.when = when
        self.latest = latest
        self.cancelling = task.cancelling()
        self.expired = False

    def expired_here(self) -> bool:
        """Whether this deadline caused the CancelledError in hand (asyncio.timeout's rule)."""
        return self.expired and self.task.uncancel() <= self.cancelling


class Deadlines:
    """Every request timeout of one client on a single timer (see the module docstring)."""

    def __init__(self) -> None:
        self._entries: dict[int, Deadline] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._armed_at = math.inf

    def start(self, key: int, limit: float | None) -> Deadline | None:
        if limit is None or limit == math.inf:
            return None
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None, "requests run in a task"
        now = loop.time()
        entry = self._entries[key] = Deadline(
            task, now + limit, now + limit * MAX_TIMEOUT_WITH_PROGRESS
        )
        if entry.when < self._armed_at:
            self._arm(loop, entry.when)
        return entry

    def extend(self, key: int, limit: float) -> None:
        """Restart a deadline's clock (up to its latest). Only ever later, so the armed
        timer may fire early; ``_fire`` then re-arms for what is really due."""
        entry = self._entries.get(key)
        if entry is not None and not entry.expired:
            loop = asyncio.get_running_loop()
            entry.when = min(loop.time() + limit, entry.latest)

    def finish(self, key: int) -> None:
        # The timer stays armed: re-arming it per request is the cost this class avoids.
        # Firing with nothing due is a no-op, at most once per timeout.
        del self._entries[key]

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._armed_at = math.inf

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._armed_at = when
        self._timer = loop.call_at(when, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        # The loop runs a timer up to its clock resolution early: what it armed for is due.
        now = max(loop.time(), self._armed_at)
        self._timer = None
        self._armed_at = math.inf
        earliest = math.inf
        for entry in self._entries.values():
            if entry.expired:
                continue
            if entry.when <= now:
                entry.expired = True
                entry.task.cancel()
            elif entry.when < earliest:
                earliest = entry.when
        if earliest < math.inf:
            self._arm(loop, earliest)
