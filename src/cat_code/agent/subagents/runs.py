"""What a session knows of its subagents' runs, for the live lines, ``/cost`` and ``-p`` json.

A `SubagentRun` is made when a subagent starts and updated as it goes (turns, the tool it
runs, tokens) by its agent's events and its meter; `RunBook` keeps every run of the
session, in start order, the finished ones too (their tokens count in the session's cost).
Its meter records each request twice, in its own `UsageMeter` (the per-subagent breakdown)
and in the session's (so ``/cost`` and ``total_cost_usd`` count the children), and tells
the run's token budget after each request. The subagent whose tool call is being decided is
named by `asking_subagent` (a context variable set in the subagent's task), so the
permission question can say who asks.
"""

from __future__ import annotations

import contextvars
import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cat_code.agent.cost import UsageMeter
from cat_code.agent.providers.base import Usage
from cat_code.agent.subagents.budget import Budget, EndedBy

#: The name of the subagent whose task is running (None in the main agent's).
_SUBAGENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("subagent", default=None)


def asking_subagent() -> str | None:
    """The subagent on whose behalf the current task runs (None: the main agent)."""
    return _SUBAGENT.get()


def enter_subagent(name: str) -> None:
    """Mark the current task as the subagent ``name``'s (its children inherit it)."""
    _SUBAGENT.set(name)


class RunState(enum.Enum):
    RUNNING = "running"
    DONE = "done"
    STOPPED = "stopped"  # a budget ended it; what it had was returned
    FAILED = "failed"
    CANCELLED = "cancelled"


_STATE_OF = {
    EndedBy.ANSWER: RunState.DONE,
    EndedBy.TURNS: RunState.STOPPED,
    EndedBy.TOKENS: RunState.STOPPED,
    EndedBy.TIME: RunState.STOPPED,
    EndedBy.ERROR: RunState.FAILED,
    EndedBy.CANCELLED: RunState.CANCELLED,
}


def tokens_of(usage: Usage) -> int:
    """Every token of ``usage`` as a budget counts them: the whole prompt and the output."""
    return usage.prompt_tokens + usage.output_tokens


@dataclass(slots=True)
class SubagentRun:
    """One subagent's run, live while it runs."""

    id: str
    name: str
    description: str
    model: str
    budget: Budget
    depth: int = 1
    started: float = field(default_factory=time.monotonic)
    state: RunState = RunState.RUNNING
    turns: int = 0
    #: The tools it is running now (call id → name).
    running_tools: dict[str, str] = field(default_factory=dict)
    #: Its model's answer is arriving now.
    writing: bool = False
    meter: UsageMeter = field(default_factory=UsageMeter)
    ended_by: EndedBy | None = None
    error: str | None = None
    seconds: float | None = None

    @property
    def usage(self) -> Usage:
        return self.meter.total

    @property
    def tokens(self) -> int:
        return tokens_of(self.usage)

    @property
    def elapsed(self) -> float:
        return self.seconds if self.seconds is not None else time.monotonic() - self.started

    def finish(self, ended_by: EndedBy, error: str | None = None) -> None:
        self.ended_by = ended_by
        self.state = _STATE_OF[ended_by]
        self.error = error
        self.seconds = time.monotonic() - self.started
        self.running_tools.clear()

    def live_line(self) -> str:
        """One line while it runs: name, what it does, turns, tokens."""
        idle = "writing…" if self.writing else "thinking…"
        doing = ", ".join(self.running_tools.values()) or idle
        indent = "  " * (self.depth - 1)
        return (
            f"{indent}↳ {self.name}: {self.description} — {doing} · "
            f"{self.turns} turn{'' if self.turns == 1 else 's'} · {self.tokens:,} tokens"
        )

    def status_line(self) -> str:
        """One line when it starts or ends (``-p`` writes it on stderr)."""
        if self.state is RunState.RUNNING:
            return f"subagent {self.name} started: {self.description}"
        return f"subagent {self.name} {self.state.value}: {self._usage()}"

    def usage_line(self) -> str:
        """The line after its answer: turns, tokens, time (and what stopped it)."""
        return f"[subagent {self.name}: {self._usage()}]"

    def _usage(self) -> str:
        parts = [
            f"{self.turns} turn{'' if self.turns == 1 else 's'}",
            f"{self.tokens:,} tokens",
            f"{self.elapsed:.1f} s",
        ]
        line = " · ".join(parts)
        if self.ended_by is not None and self.ended_by.is_budget:
            line += f"; stopped by {self.budget.describe(self.ended_by)}"
        return line

    def to_json(self) -> dict[str, Any]:
        """Its entry in ``-p`` json's ``subagents``."""
        usage = self.usage
        cost = self.meter.cost_usd()
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "model": self.model,
            "depth": self.depth,
            "status": self.state.value,
            "ended_by": self.ended_by.value if self.ended_by is not None else None,
            "num_turns": self.turns,
            "duration_ms": round(self.elapsed * 1000),
            "total_cost_usd": round(cost, 6) if cost is not None else None,
            "usage": {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_input_tokens": usage.cache_read_input_tokens,
                "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            },
            **({"error": self.error} if self.error else {}),
        }


@dataclass(slots=True)
class ChildMeter(UsageMeter):
    """A subagent's meter: its own requests (its breakdown), each counted once in the
    session's too, and the tokens its budget counts: its own and its subagents'."""

    session: UsageMeter | None = None
    #: The meter of the subagent that started this one, if one did.
    enclosing: ChildMeter | None = None
    #: Called with the tokens the budget counts so far, after each request.
    on_tokens: Callable[[int], None] | None = None
    budget_tokens: int = 0

    def record(self, model: str, usage: Usage) -> None:
        UsageMeter.record(self, model, usage)
        if self.session is not None:
            self.session.record(model, usage)
        self.spend(tokens_of(usage))

    def spend(self, tokens: int) -> None:
        """Count ``tokens`` against this budget and every enclosing one."""
        self.budget_tokens += tokens
        if self.on_tokens is not None:
            self.on_tokens(self.budget_tokens)
        if self.enclosing is not None:
            self.enclosing.spend(tokens)


class RunBook:
    """Every subagent run of a session, in start order."""

    def __init__(self) -> None:
        self.runs: list[SubagentRun] = []

    def add(self, run: SubagentRun) -> None:
        self.runs.append(run)

    def running(self) -> list[SubagentRun]:
        return [r for r in self.runs if r.state is RunState.RUNNING]

    def live_lines(self) -> list[str]:
        return [r.live_line() for r in self.running()]

    def to_json(self) -> list[dict[str, Any]]:
        return [r.to_json() for r in self.runs]

    def describe(self) -> str:
        """The subagents' part of ``/cost`` (empty when none ran)."""
        if not self.runs:
            return ""
        total = Usage()
        for run in self.runs:
            total.add(run.usage)
        count = len(self.runs)
        lines = [
            f"subagents: {count} run{'' if count == 1 else 's'}, {tokens_of(total):,} tokens "
            "(included above)"
        ]
        for run in self.runs:
            cost = run.meter.cost_usd()
            dollars = f" · ${cost:.4f}" if cost is not None else ""
            lines.append(
                f"  {run.name} ({run.state.value}): "
                f"{run.turns} turn{'' if run.turns == 1 else 's'} · "
                f"{run.usage.input_tokens:,} in · {run.usage.output_tokens:,} out{dollars}"
            )
        return "\n".join(lines)


__all__ = [
    "ChildMeter",
    "RunBook",
    "RunState",
    "SubagentRun",
    "asking_subagent",
    "enter_subagent",
    "tokens_of",
]
