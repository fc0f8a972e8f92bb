"""What a session cost: the tokens every request used, as the APIs reported them, and dollars.

`UsageMeter` adds up each request's `Usage` per model (the agent's turns and compaction
summaries alike). Dollars come from the model catalogue (`agent.models`: its prices with
the user's ``modelPrices`` and ``$CAT_CODE_PRICES`` over them). A model with no known
price has no dollar figure (None), never a guess of zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cat_code.agent.models import (
    PRICES_ENV,
    PRICES_SETTING,
    Price,
    catalogue_prices,
    price_of,
    price_table,
)
from cat_code.agent.providers.base import Usage

#: The catalogue's own prices by ``provider:pattern`` (no overrides).
PRICES: dict[str, Price] = catalogue_prices()


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


__all__ = [
    "PRICES",
    "PRICES_ENV",
    "PRICES_SETTING",
    "Price",
    "UsageMeter",
    "price_of",
    "price_table",
]
