"""Model providers: which model to use, and the object that talks to it.

``--model`` (else ``$CAT_CODE_MODEL``, else `DEFAULT_MODEL`) names a model as
``PROVIDER:NAME``; a bare ``claude-…`` name means Anthropic. Providers speak their API
over ``httpx2`` themselves (no model SDK), imported by a provider's ``prepare`` on a
thread, and `create_provider` raises `NoModelConfigured` (one line saying how to fix it)
when the provider has no credentials, so the REPL still runs without one.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

from cat_code.agent import models as _catalogue
from cat_code.agent.providers.base import (
    HOW_TO_CONFIGURE,
    AssistantMessage,
    Message,
    ModelError,
    ModelResponse,
    ModelSpecError,
    NoModelConfigured,
    Provider,
    RetryPolicy,
    ToolCall,
    ToolSpec,
    UserMessage,
)

logger = logging.getLogger(__name__)

#: The provider names, from the model catalogue (`agent.models.PROVIDERS`).
PROVIDERS = tuple(_catalogue.PROVIDERS)
DEFAULT_MODELS = {name: info.default_model for name, info in _catalogue.PROVIDERS.items()}
DEFAULT_MODEL = f"{_catalogue.DEFAULT_PROVIDER}:{DEFAULT_MODELS[_catalogue.DEFAULT_PROVIDER]}"
MODEL_ENV = "CAT_CODE_MODEL"


@dataclass(frozen=True, slots=True)
class ModelChoice:
    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"


def resolve_model(option: str | None, environ: Mapping[str, str] | None = None) -> ModelChoice:
    """The model ``--model`` (or the environment, or the default) names."""
    env = os.environ if environ is None else environ
    spec = (option or env.get(MODEL_ENV) or DEFAULT_MODEL).strip()
    provider, sep, model = spec.partition(":")
    if not sep:
        if spec in PROVIDERS:
            return ModelChoice(spec, DEFAULT_MODELS[spec])
        if spec.startswith("claude"):
            return ModelChoice("anthropic", spec)
        raise ModelSpecError(
            f"model {spec!r} names no provider; write it as PROVIDER:MODEL "
            f"(providers: {', '.join(PROVIDERS)})"
        )
    provider = provider.strip().lower()
    if provider not in PROVIDERS:
        raise ModelSpecError(
            f"unknown model provider {provider!r} in {spec!r}; use one of: {', '.join(PROVIDERS)}"
        )
    return ModelChoice(provider, model.strip() or DEFAULT_MODELS[provider])


def create_provider(choice: ModelChoice) -> Provider:
    """The provider for ``choice``; `NoModelConfigured` when it has no credentials."""
    info = _catalogue.PROVIDERS.get(choice.provider)
    if info is None:
        raise ModelSpecError(f"unknown model provider {choice.provider!r}")
    # Imported only now: a provider's module is on the first request's path, not start-up's.
    module = importlib.import_module(info.module)
    provider: Provider = getattr(module, info.class_name)(choice.model)
    return provider


__all__ = [
    "DEFAULT_MODEL",
    "HOW_TO_CONFIGURE",
    "AssistantMessage",
    "Message",
    "ModelChoice",
    "ModelError",
    "ModelResponse",
    "ModelSpecError",
    "NoModelConfigured",
    "Provider",
    "RetryPolicy",
    "ToolCall",
    "ToolSpec",
    "UserMessage",
    "create_provider",
    "resolve_model",
]
