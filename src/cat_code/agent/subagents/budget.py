"""A subagent's budgets: model turns, tokens, wall time; and which one ended a run.

Every subagent has all three, so none can burn tokens or hang without end: turns
(`DEFAULT_MAX_TURNS`, or the definition's ``maxTurns``, or the call's ``max_turns``: the
smallest given), tokens (every request's prompt and output tokens added up, cache reads and
writes included; settings ``agents.maxTokens``) and seconds (``agents.maxSeconds``). The
settings come from the user's ``settings.json`` and the project's, where a project may
only lower a budget (it is repository content). A run that reaches one stops, keeps what
it has, and says which (`EndedBy`).
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

DEFAULT_MAX_TURNS = 30
#: A subagent that has sent this many tokens back and forth has lost its way (claude-code
#: #4911: one small task, 154k tokens); generous enough for thirty turns of real work.
DEFAULT_MAX_TOKENS = 1_000_000
#: A subagent running longer than this is hung, not working (codex #34653: 5 h blocked).
DEFAULT_MAX_SECONDS = 900.0
SETTINGS_KEY = "agents"


class EndedBy(enum.Enum):
    """What ended a subagent's run."""

    ANSWER = "answer"
    TURNS = "turns"
    TOKENS = "tokens"
    TIME = "time"
    ERROR = "error"
    CANCELLED = "cancelled"

    @property
    def is_budget(self) -> bool:
        return self in (EndedBy.TURNS, EndedBy.TOKENS, EndedBy.TIME)


@dataclass(frozen=True, slots=True)
class Budget:
    max_turns: int = DEFAULT_MAX_TURNS
    max_tokens: int = DEFAULT_MAX_TOKENS
    max_seconds: float = DEFAULT_MAX_SECONDS

    def describe(self, ended_by: EndedBy) -> str:
        """The budget ``ended_by`` names, with its limit: ``its turn budget (2 turns)``."""
        if ended_by is EndedBy.TURNS:
            return f"its turn budget ({self.max_turns} turn{'' if self.max_turns == 1 else 's'})"
        if ended_by is EndedBy.TOKENS:
            return f"its token budget ({self.max_tokens:,} tokens, settings agents.maxTokens)"
        if ended_by is EndedBy.TIME:
            return f"its time budget ({self.max_seconds:g} s, settings agents.maxSeconds)"
        return str(ended_by.value)

    def with_turns(self, *limits: int | None) -> Budget:
        """This budget with the smallest of ``limits`` given as its turns (none: as is)."""
        given = [n for n in limits if n is not None and n > 0]
        if not given:
            return self
        return Budget(min(given), self.max_tokens, self.max_seconds)


def budget_from_settings(cwd: Path | None = None) -> Budget:
    """The default budget: the user's ``agents`` settings, lowered by the project's."""
    from cat_code.host.state.settings import (
        SettingsError,
        project_settings_path,
        read_settings,
        user_settings_path,
    )

    values: dict[str, float] = {
        "maxTurns": DEFAULT_MAX_TURNS,
        "maxTokens": DEFAULT_MAX_TOKENS,
        "maxSeconds": DEFAULT_MAX_SECONDS,
    }
    for path, narrow_only in ((user_settings_path(), False), (project_settings_path(cwd), True)):
        try:
            section: Any = read_settings(path).get(SETTINGS_KEY)
        except (SettingsError, OSError):
            continue  # the settings' own readers say what is wrong with the file
        if section is None:
            continue
        if not isinstance(section, dict):
            logger.warning("%s: %r must be an object; ignored", path, SETTINGS_KEY)
            continue
        for key in values:
            raw = section.get(key)
            if raw is None:
                continue
            if isinstance(raw, bool) or not isinstance(raw, int | float) or raw <= 0:
                logger.warning(
                    "%s: %s.%s must be a positive number; ignored", path, SETTINGS_KEY, key
                )
                continue
            values[key] = min(values[key], raw) if narrow_only else raw
    return Budget(
        max_turns=int(values["maxTurns"]),
        max_tokens=int(values["maxTokens"]),
        max_seconds=float(values["maxSeconds"]),
    )


__all__ = [
    "DEFAULT_MAX_SECONDS",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MAX_TURNS",
    "Budget",
    "EndedBy",
    "budget_from_settings",
]
