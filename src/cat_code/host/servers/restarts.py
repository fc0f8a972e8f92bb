"""How often a server that stopped by itself is started again: a sliding-window budget.

A server whose connection ends by itself after it connected is restarted on the next call
to one of its tools, at most `RestartPolicy.max_restarts` times in any
`RestartPolicy.window_s` seconds; past that it stays FAILED until someone restarts it by
hand (``/mcp restart NAME``), which empties its window. Every attempt counts, whether the
server came back or not, so a server that cannot start is not retried on every call. The
clock is injectable, so tests move time instead of waiting for it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

#: The issue's contract: at most 3 restarts in 60 s.
DEFAULT_MAX_RESTARTS = 3
DEFAULT_WINDOW_S = 60.0


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """At most ``max_restarts`` automatic restarts in any ``window_s`` seconds."""

    max_restarts: int = DEFAULT_MAX_RESTARTS
    window_s: float = DEFAULT_WINDOW_S
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    def describe(self) -> str:
        return f"{self.max_restarts} restart(s) in {self.window_s:g} s"


class RestartBudget:
    """One server's automatic restarts within the policy's sliding window."""

    def __init__(self, policy: RestartPolicy) -> None:
        self.policy = policy
        self._times: deque[float] = deque()

    def _slide(self) -> float:
        now = self.policy.clock()
        while self._times and now - self._times[0] >= self.policy.window_s:
            self._times.popleft()
        return now

    def take(self) -> bool:
        """Spend one restart if the window has room; whether it had."""
        now = self._slide()
        if len(self._times) >= self.policy.max_restarts:
            return False
        self._times.append(now)
        return True

    def reset(self) -> None:
        """A restart by hand: the window starts empty again."""
        self._times.clear()
