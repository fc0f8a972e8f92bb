"""The model catalogue: what is true of each model and of each provider, in one table.

`PROVIDERS` names every model API cat-code speaks (the module and class that speak it, the
model used when only the provider is named); `MODELS` holds one row per model-name
pattern: its provider, context window, output limit, price and capabilities (tools,
images, extended thinking). Cost (`agent.cost`), compaction and tool search read
`facts`, and nothing else keeps a copy of these numbers.

Rows are matched by prefix up to a ``-`` (``claude-sonnet`` covers ``claude-sonnet-4-5``,
but ``gpt-5`` does not cover ``gpt-5.5``, another model); the longest matching pattern of
the model's provider wins. A model no row names is still usable: it gets `UNKNOWN` (a
local model's small window, no price, tools but no thinking).

The user's overrides are applied here and only here: ``$CAT_CODE_CONTEXT_WINDOW`` (a
window for every model), ``modelPrices`` in the user's settings and then
``$CAT_CODE_PRICES`` (JSON ``{"provider:model-prefix": {"input": 3, "output": 15}}``)
over the prices. A bad override warns once, names itself and is ignored.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Only a type: importing the providers package here would be a cycle (it reads this).
    from cat_code.agent.providers.base import Usage

logger = logging.getLogger(__name__)

PRICES_ENV = "CAT_CODE_PRICES"
PRICES_SETTING = "modelPrices"
WINDOW_ENV = "CAT_CODE_CONTEXT_WINDOW"


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


@dataclass(frozen=True, slots=True)
class Capabilities:
    tools: bool = True
    images: bool = False
    #: Extended thinking (Anthropic) or reasoning effort (OpenAI-compatible).
    thinking: bool = False


@dataclass(frozen=True, slots=True)
class ProviderInfo:
    """A model API: the module and class that speak it, and its default model."""

    name: str
    module: str
    class_name: str
    default_model: str


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What is known of the models a ``provider:pattern`` row names."""

    provider: str
    pattern: str
    context_window: int
    max_output: int
    price: Price | None = None
    capabilities: Capabilities = field(default_factory=Capabilities)

    @property
    def key(self) -> str:
        return f"{self.provider}:{self.pattern}"


#: Every provider: ``--model PROVIDER:NAME`` picks one; a bare ``claude-…`` is Anthropic's.
PROVIDERS: dict[str, ProviderInfo] = {
    "anthropic": ProviderInfo(
        "anthropic", "cat_code.agent.providers.anthropic", "AnthropicProvider", "claude-sonnet-5-5"
    ),
    "openai": ProviderInfo(
        "openai", "cat_code.agent.providers.openai", "OpenAIProvider", "gpt-5.5"
    ),
}
DEFAULT_PROVIDER = "anthropic"

_CLAUDE = Capabilities(tools=True, images=True, thinking=True)
_CLAUDE_OLD = Capabilities(tools=True, images=True, thinking=False)
_GPT = Capabilities(tools=True, images=True, thinking=False)
_REASONING = Capabilities(tools=True, images=True, thinking=True)

#: Public list prices (USD per million tokens) and limits as of 2026. Windows are rough on
#: purpose where a vendor varies them: the budgets need the order of magnitude.
MODELS: tuple[ModelInfo, ...] = (
    ModelInfo("anthropic", "claude", 200_000, 8_192, None, _CLAUDE),
    ModelInfo("anthropic", "claude-opus-4-0", 200_000, 32_000, Price(15.0, 75.0), _CLAUDE),
    ModelInfo("anthropic", "claude-opus-4-1", 200_000, 32_000, Price(15.0, 75.0), _CLAUDE),
    ModelInfo("anthropic", "claude-opus", 200_000, 64_000, Price(5.0, 25.0), _CLAUDE),
    ModelInfo("anthropic", "claude-sonnet", 200_000, 64_000, Price(3.0, 15.0), _CLAUDE),
    ModelInfo("anthropic", "claude-3-7-sonnet", 200_000, 64_000, Price(3.0, 15.0), _CLAUDE),
    ModelInfo("anthropic", "claude-haiku", 200_000, 64_000, Price(1.0, 5.0), _CLAUDE),
    ModelInfo("anthropic", "claude-3-5-haiku", 200_000, 8_192, Price(0.8, 4.0), _CLAUDE_OLD),
    ModelInfo("anthropic", "claude-3-5-sonnet", 200_000, 8_192, None, _CLAUDE_OLD),
    ModelInfo("openai", "gpt-5-mini", 400_000, 128_000, Price(0.25, 2.0, 0.25, 0.025), _REASONING),
    ModelInfo("openai", "gpt-5-nano", 400_000, 128_000, Price(0.05, 0.4, 0.05, 0.005), _REASONING),
    ModelInfo("openai", "gpt-5", 400_000, 128_000, Price(1.25, 10.0, 1.25, 0.125), _REASONING),
    ModelInfo("openai", "gpt-4.1-mini", 1_000_000, 32_768, Price(0.4, 1.6, 0.4, 0.1), _GPT),
    ModelInfo("openai", "gpt-4.1", 1_000_000, 32_768, Price(2.0, 8.0, 2.0, 0.5), _GPT),
    ModelInfo("openai", "gpt-4o-mini", 128_000, 16_384, Price(0.15, 0.6, 0.15, 0.075), _GPT),
    ModelInfo("openai", "gpt-4o", 128_000, 16_384, Price(2.5, 10.0, 2.5, 1.25), _GPT),
    ModelInfo("openai", "gpt-4-turbo", 128_000, 4_096, None, _GPT),
    ModelInfo("openai", "gpt-4", 8_192, 4_096, None, Capabilities()),
    ModelInfo("openai", "gpt-3.5", 16_385, 4_096, None, Capabilities()),
    ModelInfo("openai", "o1", 200_000, 100_000, None, _REASONING),
    ModelInfo("openai", "o3", 200_000, 100_000, None, _REASONING),
    ModelInfo("openai", "o4", 200_000, 100_000, None, _REASONING),
)

#: Any other model: the window of a typical local model, so budgets err on the safe side.
UNKNOWN = ModelInfo("", "", 32_768, 4_096, None, Capabilities())


def _fits(name: str, pattern: str) -> bool:
    return name == pattern or name.startswith(pattern + "-")


def _gpt_prefix_fits(name: str, pattern: str) -> bool:
    # Windows were always matched by plain prefix ("gpt-5.5" has gpt-5's window), prices
    # only up to a "-" (gpt-5.5 is not priced as gpt-5).
    return name.startswith(pattern)


def lookup(model: str) -> ModelInfo:
    """The catalogue row of ``provider:name`` (exactly as listed, no overrides)."""
    provider, _, name = model.partition(":")
    if not name:
        provider, name = ("anthropic" if model.startswith("claude") else ""), model
    name = name.lower()
    best: ModelInfo | None = None
    loose: ModelInfo | None = None
    for row in MODELS:
        if row.provider != provider:
            continue
        if _fits(name, row.pattern) and (best is None or len(row.pattern) > len(best.pattern)):
            best = row
        if _gpt_prefix_fits(name, row.pattern) and (
            loose is None or len(row.pattern) > len(loose.pattern)
        ):
            loose = row
    if best is not None:
        return best
    if loose is not None:
        # A newer model of a known family: its limits, but never a guessed price.
        return replace(loose, price=None)
    return replace(UNKNOWN, provider=provider, pattern=name)


# -- the user's overrides ------------------------------------------------------------------


def parse_prices(raw: Any, where: str) -> dict[str, Price]:
    """``{"provider:prefix": {"input": n, "output": n, ...}}`` as prices; bad ones warn."""
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


def price_overrides(environ: Mapping[str, str] | None = None) -> dict[str, Price]:
    """The user's prices: settings' ``modelPrices``, then ``$CAT_CODE_PRICES`` over them."""
    env = os.environ if environ is None else environ
    table: dict[str, Price] = {}
    try:
        from cat_code.host.state.settings import SettingsError, read_settings, user_settings_path

        try:
            configured = read_settings(user_settings_path()).get(PRICES_SETTING)
        except SettingsError:
            configured = None  # said where the settings are used; prices do without them
        if configured is not None:
            table.update(parse_prices(configured, f"settings.json {PRICES_SETTING}"))
    except OSError:
        pass
    raw = env.get(PRICES_ENV, "").strip()
    if raw:
        try:
            table.update(parse_prices(json.loads(raw), PRICES_ENV))
        except ValueError:
            logger.warning("%s is not valid JSON; ignored", PRICES_ENV)
    return table


def catalogue_prices() -> dict[str, Price]:
    """The catalogue's own prices by ``provider:pattern``."""
    return {row.key: row.price for row in MODELS if row.price is not None}


def price_table(environ: Mapping[str, str] | None = None) -> dict[str, Price]:
    """Every known price by ``provider:pattern``, the user's overrides applied."""
    table = catalogue_prices()
    table.update(price_overrides(environ))
    return table


def price_of(model: str, table: Mapping[str, Price]) -> Price | None:
    """The price of ``provider:name`` in ``table`` (a key without the provider matches too):
    the longest key that is the name up to a ``-``."""
    _, _, name = model.partition(":")
    candidates = [model.lower(), name.lower()] if name else [model.lower()]
    best: tuple[int, Price] | None = None
    for key, price in table.items():
        key_l = key.lower()
        if any(_fits(c, key_l) for c in candidates) and (best is None or len(key) > best[0]):
            best = (len(key), price)
    return best[1] if best else None


def window_override(environ: Mapping[str, str] | None = None) -> int | None:
    """``$CAT_CODE_CONTEXT_WINDOW`` as a number of tokens, or None (a bad value warns)."""
    env = os.environ if environ is None else environ
    raw = env.get(WINDOW_ENV, "").strip().replace("_", "")
    if not raw:
        return None
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    logger.warning("%s=%r is not a whole number of tokens; ignored", WINDOW_ENV, raw)
    return None


def facts(model: str, environ: Mapping[str, str] | None = None) -> ModelInfo:
    """What cat-code goes by for ``provider:name``: its row with the user's overrides."""
    row = lookup(model)
    window = window_override(environ)
    if window is not None:
        row = replace(row, context_window=window)
    overrides = price_overrides(environ)
    if overrides:
        price = price_of(model, overrides)
        if price is not None:
            row = replace(row, price=price)
    return row


def context_window(model: str, environ: Mapping[str, str] | None = None) -> int:
    """The context window of ``provider:name``, ``$CAT_CODE_CONTEXT_WINDOW`` applied."""
    window = window_override(environ)
    return window if window is not None else lookup(model).context_window


__all__ = [
    "MODELS",
    "PRICES_ENV",
    "PRICES_SETTING",
    "PROVIDERS",
    "UNKNOWN",
    "WINDOW_ENV",
    "Capabilities",
    "ModelInfo",
    "Price",
    "ProviderInfo",
    "catalogue_prices",
    "context_window",
    "facts",
    "lookup",
    "parse_prices",
    "price_of",
    "price_overrides",
    "price_table",
    "window_override",
]
