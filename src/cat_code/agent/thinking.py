"""Extended thinking: how much of it the user wants, and what a request then asks for.

Off by default. ``thinking.budgetTokens`` in the user's settings, or
``$CAT_CODE_THINKING_TOKENS`` over it, gives the Messages API a thinking budget, used only
for a model the catalogue (`agent.models`) says can think; ``thinking.reasoningEffort``
(or ``$CAT_CODE_REASONING_EFFORT``: ``low``, ``medium``, ``high``) is sent as
``reasoning_effort`` to an OpenAI-compatible API. Only the user's own settings count: a
project's settings cannot make the user pay for thinking. A bad value warns once, naming
itself, and thinking stays off.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)

BUDGET_ENV = "CAT_CODE_THINKING_TOKENS"
EFFORT_ENV = "CAT_CODE_REASONING_EFFORT"
SETTING = "thinking"
#: The Messages API refuses a smaller thinking budget.
MIN_BUDGET = 1024
EFFORTS = ("minimal", "low", "medium", "high")


@dataclass(frozen=True, slots=True)
class ThinkingConfig:
    """``budget_tokens`` 0 means off."""

    budget_tokens: int = 0
    reasoning_effort: str | None = None

    @property
    def enabled(self) -> bool:
        return self.budget_tokens > 0


def _budget(raw: Any, where: str) -> int | None:
    if raw is None or raw == "":
        return None
    text = str(raw).strip().replace("_", "")
    if isinstance(raw, bool) or not text.isdigit():
        logger.warning("%s=%r is not a whole number of tokens; thinking stays off", where, raw)
        return None
    value = int(text)
    if 0 < value < MIN_BUDGET:
        logger.warning(
            "%s=%d is below the minimum of %d; using %d", where, value, MIN_BUDGET, MIN_BUDGET
        )
        return MIN_BUDGET
    return value


def _effort(raw: Any, where: str) -> str | None:
    if raw is None or raw == "":
        return None
    value = str(raw).strip().lower()
    if value not in EFFORTS:
        logger.warning("%s=%r is not one of %s; ignored", where, raw, ", ".join(EFFORTS))
        return None
    return value


def _user_setting() -> dict[str, Any]:
    try:
        from cat_code.host.state.settings import SettingsError, read_settings, user_settings_path

        value = read_settings(user_settings_path()).get(SETTING)
    except (SettingsError, OSError):
        return {}  # said where the settings are used; thinking does without them
    if value is None:
        return {}
    if not isinstance(value, dict):
        logger.warning("settings.json %s must be an object; ignored", SETTING)
        return {}
    return value


def thinking_config(environ: Mapping[str, str] | None = None) -> ThinkingConfig:
    """The user's thinking wishes: settings, with the environment over them."""
    env = os.environ if environ is None else environ
    setting = _user_setting()
    budget = _budget(env.get(BUDGET_ENV), BUDGET_ENV)
    if budget is None:
        budget = _budget(setting.get("budgetTokens"), f"settings.json {SETTING}.budgetTokens")
    effort = _effort(env.get(EFFORT_ENV), EFFORT_ENV)
    if effort is None:
        effort = _effort(setting.get("reasoningEffort"), f"settings.json {SETTING}.reasoningEffort")
    return ThinkingConfig(budget_tokens=budget or 0, reasoning_effort=effort)


def request_limits(budget: int, answer_tokens: int, max_output: int) -> tuple[int, int]:
    """``(max_tokens, budget_tokens)`` for a Messages request: the thinking budget plus
    room for the answer, within the model's output limit; the budget stays below
    ``max_tokens``, as the API requires."""
    max_tokens = min(max_output, budget + answer_tokens)
    budget = min(budget, max_tokens - MIN_BUDGET)
    return max_tokens, max(budget, MIN_BUDGET)


__all__ = [
    "BUDGET_ENV",
    "EFFORT_ENV",
    "MIN_BUDGET",
    "ThinkingConfig",
    "request_limits",
    "thinking_config",
]
