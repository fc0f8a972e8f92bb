"""Subagent budgets from settings: the user's set them, a project's may only lower them."""

from __future__ import annotations

import json
from pathlib import Path

from cat_code.agent.subagents.budget import (
    DEFAULT_MAX_SECONDS,
    DEFAULT_MAX_TURNS,
    Budget,
    EndedBy,
    budget_from_settings,
)


def test_without_settings_every_budget_has_its_default(tmp_path: Path) -> None:
    assert budget_from_settings(tmp_path) == Budget()


def test_the_users_settings_set_the_budgets_and_a_project_can_only_lower_them(
    tmp_path: Path, cat_code_home: Path
) -> None:
    (cat_code_home / "settings.json").write_text(
        json.dumps({"agents": {"maxTokens": 50_000, "maxTurns": 10}})
    )
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / ".cat-code").mkdir()
    (project / ".cat-code" / "settings.json").write_text(
        json.dumps({"agents": {"maxTokens": 90_000_000, "maxTurns": 3, "maxSeconds": "x"}})
    )

    budget = budget_from_settings(project)

    assert budget == Budget(max_turns=3, max_tokens=50_000, max_seconds=DEFAULT_MAX_SECONDS)


def test_the_smallest_turn_limit_given_wins_and_none_given_keeps_the_budget() -> None:
    budget = Budget()
    assert budget.with_turns(None, None).max_turns == DEFAULT_MAX_TURNS
    assert budget.with_turns(5, 2).max_turns == 2
    assert budget.with_turns(None, 40).max_turns == 40


def test_each_budget_is_named_with_its_limit() -> None:
    budget = Budget(max_turns=1, max_tokens=2_000, max_seconds=30)
    assert budget.describe(EndedBy.TURNS) == "its turn budget (1 turn)"
    assert budget.describe(EndedBy.TOKENS).startswith("its token budget (2,000 tokens")
    assert budget.describe(EndedBy.TIME).startswith("its time budget (30 s")
