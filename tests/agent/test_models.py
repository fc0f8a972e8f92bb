"""The model catalogue: one row per model pattern, read by cost, compaction and tool search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cat_code.agent import compaction, models
from cat_code.agent.cost import UsageMeter
from cat_code.agent.models import Price, facts, lookup
from cat_code.agent.providers import DEFAULT_MODEL, create_provider, resolve_model
from cat_code.agent.providers.base import Usage
from cat_code.agent.tool_search import ToolSearch
from cat_code.tools.registry import ToolRegistry


def test_the_longest_pattern_of_the_models_provider_names_its_row() -> None:
    row = lookup("anthropic:claude-sonnet-4-5-20250929")
    assert (row.pattern, row.context_window, row.price) == ("claude-sonnet", 200_000, Price(3, 15))
    assert lookup("anthropic:claude-opus-4-1").price == Price(15.0, 75.0)
    assert lookup("openai:gpt-4o-mini").pattern == "gpt-4o-mini"


def test_a_newer_model_of_a_known_family_gets_its_limits_but_never_a_guessed_price() -> None:
    row = lookup("openai:gpt-5.5")
    assert row.context_window == 400_000
    assert row.price is None


def test_an_unknown_model_gets_a_small_window_no_price_and_no_thinking() -> None:
    row = lookup("openai:llama3")
    assert row.context_window == models.UNKNOWN.context_window
    assert row.price is None
    assert not row.capabilities.thinking


def test_every_provider_of_the_catalogue_can_be_resolved_and_every_row_names_one() -> None:
    assert {row.provider for row in models.MODELS} <= set(models.PROVIDERS)
    for name, info in models.PROVIDERS.items():
        assert resolve_model(name).model == info.default_model
    assert resolve_model(None, {}).__str__() == DEFAULT_MODEL


def test_a_provider_is_created_from_its_catalogue_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    provider = create_provider(resolve_model("openai:gpt-4o"))
    assert type(provider).__name__ == models.PROVIDERS["openai"].class_name
    assert provider.name == "openai:gpt-4o"


def test_the_context_window_override_reaches_compaction_and_tool_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAT_CODE_CONTEXT_WINDOW", "50_000")
    assert facts("anthropic:claude-sonnet-4-5").context_window == 50_000
    assert compaction.context_window("anthropic:claude-sonnet-4-5") == 50_000
    assert ToolSearch(ToolRegistry(), "anthropic:claude-sonnet-4-5").window == 50_000
    monkeypatch.setenv("CAT_CODE_CONTEXT_WINDOW", "lots")
    assert ToolSearch(ToolRegistry(), "anthropic:claude-sonnet-4-5").window == 200_000


def test_price_overrides_from_settings_and_then_the_environment_apply_in_one_place(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = Path(str(tmp_path))
    monkeypatch.setenv("CAT_CODE_HOME", str(home))
    (home / "settings.json").write_text(
        json.dumps({"modelPrices": {"openai:llama3": {"input": 1, "output": 2}}})
    )
    assert facts("openai:llama3").price == Price(1, 2)
    monkeypatch.setenv("CAT_CODE_PRICES", json.dumps({"openai:llama3": {"input": 3, "output": 4}}))
    assert facts("openai:llama3").price == Price(3, 4)
    meter = UsageMeter()
    meter.record("openai:llama3", Usage(input_tokens=1_000_000, output_tokens=1_000_000))
    assert meter.cost_usd() == 7.0
