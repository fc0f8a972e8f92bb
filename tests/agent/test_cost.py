"""Cost: prices by model-name prefix, overridable, and the meter's sums."""

from __future__ import annotations

import json

import pytest

from cat_code.agent.cost import PRICES, Price, UsageMeter, price_of, price_table
from cat_code.agent.providers.base import Usage


def test_a_model_is_priced_by_its_family_but_not_by_another_version() -> None:
    assert price_of("anthropic:claude-sonnet-4-5", PRICES) == Price(3.0, 15.0)
    assert price_of("anthropic:claude-opus-4-1-20250805", PRICES) == Price(15.0, 75.0)
    assert price_of("openai:gpt-4o-mini", PRICES) == PRICES["openai:gpt-4o-mini"]
    assert price_of("openai:gpt-5.5", PRICES) is None
    assert price_of("openai:llama3", PRICES) is None


def test_the_environment_adds_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAT_CODE_PRICES", json.dumps({"openai:llama3": {"input": 0, "output": 0}}))
    assert price_of("openai:llama3", price_table()) == Price(0.0, 0.0)


def test_the_meter_adds_up_every_request_and_prices_the_cache() -> None:
    meter = UsageMeter()
    meter.record("anthropic:claude-haiku-4-5", Usage(100, 10, 1000, 200))
    meter.record("anthropic:claude-haiku-4-5", Usage(50, 5, 0, 0))
    assert meter.total == Usage(150, 15, 1000, 200)
    assert meter.cost_usd() == pytest.approx((150 * 1 + 15 * 5 + 1000 * 0.1 + 200 * 1.25) / 1e6)
    assert "150 input · 15 output · 1,000 cache read · 200 cache write" in meter.describe()
    meter.record("openai:unknown", Usage(1, 1))
    assert meter.cost_usd() is None and "no price for openai:unknown" in meter.describe()
