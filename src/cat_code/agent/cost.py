"""What a session cost: the tokens every request used, as the APIs reported them, and dollars.

`UsageMeter` adds up each request's `Usage` per model (the agent's turns and compaction
summaries alike). Dollars come from `PRICES`, per million tokens, matched by the longest
model-name prefix; ``$CAT_CODE_PRICES`` (a JSON object of the same shape, e.g.
``{"anthropic:claude-sonnet": {"input": 3, "output": 15}}``) or the ``"modelPrices"`` key
of the user's ``settings.json`` adds or replaces entries. A model with no known price
has no dollar figure (None), never a guess of zero.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cat_code.agent.providers.base import Usage

logger = logging.getLogger(__name__)

PRICES_ENV = "CAT_CODE_PRICES"
PRICES_SETTING = "modelPrices"


@dataclass(frozen=True, slots=True)
class Price:
    """Dollars per million tokens. Cache writes and reads default to the Messages API's
    multiples of the input price (1.25× and 0.1×)."""

    input: float
    output: float
    cache_write: float | None = None
    cache_read: float | None = None

    def cost(self, usage: Usage) -> float:
        write = self.cache_write if self.cache_write is not None else self.input * 1.25
        read = self.cache_read if self.cache_read is not None else self.input * 0.1
        total = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_creation_input_tokens * write
            + usage.cache_read_input_tokens * read
        )
        return total / 1_000_000


#: ``provider:model-prefix`` → price; the longest matching prefix wins. Public list prices
#: (USD per million tokens) as of 2026; extend or correct them with ``$CAT_CODE_PRICES``.
PRICES: dict[str, Price] = {
    "anthropic:claude-opus-4-0": Price(15.0, 75.0),
    "anthropic:claude-opus-4-1": Price(15.0, 75.0),
    "anthropic:claude-opus": Price(5.0, 25.0),
    "anthropic:claude-sonnet": Price(3.0, 15.0),
    "anthropic:claude-3-7-sonnet": Price(3.0, 15.0),
    "anthropic:claude-haiku": Price(1.0, 5.0),
    "anthropic:claude-3-5-haiku": Price(0.8, 4.0),
    "openai:gpt-5-mini": Price(0.25, 2.0, cache_write=0.25, cache_read=0.025),
    "openai:gpt-5-nano": Price(0.05, 0.4, cache_write=0.05, cache_read=0.005),
    "openai:gpt-5": Price(1.25, 10.0, cache_write=1.25, cache_read=0.125),
    "openai:gpt-4.1-mini": Price(0.4, 1.6, cache_write=0.4, cache_read=0.1),
    "openai:gpt-4.1": Price(2.0, 8.0, cache_write=2.0, cache_read=0.5),
    "openai:gpt-4o-mini": Price(0.15, 0.6, cache_write=0.15, cache_read=0.075),
    "openai:gpt-4o": Price(2.5, 10.0, cache_write=2.5, cache_read=1.25),
}


def _parse_prices(raw: Any, where: str) -> dict[str, Price]:
    if not isinstance(raw, dict):
        logger.warning("%s: model prices must be a JSON object; ignored", where)
        return {}
    prices: dict[str, Price] = {}
    for model, entry in raw.items():
        try:
            prices[str(model)] = Price(
                input=float(entry["input"]),
                output=float(entry["output"]),
                cache_write=None
                if entry.get("cache_write") is None
                else float(entry["cache_write"]),
                cache_read=None if entry.get("cache_read") is None else float(entry["cache_read"]),
            )
        except (TypeError, KeyError, ValueError, AttributeError):
            logger.warning("%s: the price of %r needs numbers 'input' and 'output'", where, model)
    return prices


def price_table(environ: Mapping[str, str] | None = None) -> dict[str, Price]:
    """`PRICES`, with the user's settings and then ``$CAT_CODE_PRICES`` over them."""
    env = os.environ if environ is None else environ
    table = dict(PRICES)
    try:
        from cat_code.host.settings import SettingsError, read_settings, user_settings_path

        try:
            configured = read_settings(user_settings_path()).get(PRICES_SETTING)
        except SettingsError:
            configured = None  # said where the settings are used; prices do without them
        if configured is not None:
            table.update(_parse_prices(configured, "settings.json modelPrices"))
    except OSError:
        pass
    raw = env.get(PRICES_ENV, "").strip()
    if raw:
        try:
            table.update(_parse_prices(json.loads(raw), PRICES_ENV))
        except ValueError:
            logger.warning("%s is not valid JSON; ignored", PRICES_ENV)
    return table


def price_of(model: str, table: Mapping[str, Price]) -> Price | None:
    """The price of ``provider:name`` (a key without the provider matches too): the longest
    key that is the name up to a ``-`` (``claude-sonnet`` prices ``claude-sonnet-4-5``, but
    ``gpt-5`` does not price ``gpt-5.5``, another model)."""
    _, _, name = model.partition(":")
    candidates = [model.lower(), name.lower()] if name else [model.lower()]
    best: tuple[int, Price] | None = None
    for key, price in table.items():
        key_l = key.lower()
        fits = any(c == key_l or c.startswith(key_l + "-") for c in candidates)
        if fits and (best is None or len(key) > best[0]):
            best = (len(key), price)
    return best[1] if best else None


@dataclass(slots=True)
class UsageMeter:
    """The tokens of every request of a session, per model, and what they cost."""

    by_model: dict[str, Usage] = field(default_factory=dict)
    requests: int = 0
    _table: dict[str, Price] | None = None

    def record(self, model: str, usage: Usage) -> None:
        self.requests += 1
        self.by_model.setdefault(model, Usage()).add(usage)

    @property
    def total(self) -> Usage:
        total = Usage()
        for usage in self.by_model.values():
            total.add(usage)
        return total

    def cost_usd(self) -> float | None:
        """Dollars for every request, or None when a model's price is unknown."""
        if self._table is None:
            self._table = price_table()
        total = 0.0
        for model, usage in self.by_model.items():
            price = price_of(model, self._table)
            if price is None:
                return None
            total += price.cost(usage)
        return total

    def describe(self) -> str:
        """The lines ``/cost`` shows."""
        total = self.total
        lines = [
            f"tokens: {total.input_tokens:,} input · {total.output_tokens:,} output · "
            f"{total.cache_read_input_tokens:,} cache read · "
            f"{total.cache_creation_input_tokens:,} cache write "
            f"({self.requests} request{'' if self.requests == 1 else 's'})"
        ]
        cost = self.cost_usd()
        if cost is not None:
            lines.append(f"cost: ${cost:.4f}")
        elif self.by_model:
            unknown = [m for m in self.by_model if price_of(m, self._table or {}) is None]
            lines.append(
                f"cost: unknown (no price for {', '.join(unknown)}; set {PRICES_ENV} or "
                f"{PRICES_SETTING} in settings.json)"
            )
        if len(self.by_model) > 1:
            for model, usage in self.by_model.items():
                lines.append(
                    f"  {model}: {usage.input_tokens:,} in · {usage.output_tokens:,} out · "
                    f"{usage.cache_read_input_tokens:,} cache read · "
                    f"{usage.cache_creation_input_tokens:,} cache write"
                )
        return "\n".join(lines)


__all__ = ["PRICES", "PRICES_ENV", "Price", "UsageMeter", "price_of", "price_table"]
