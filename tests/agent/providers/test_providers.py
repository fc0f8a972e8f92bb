"""Choosing the model: --model, $CAT_CODE_MODEL, the default."""

from __future__ import annotations

import pytest

from cat_code.agent.providers import (
    DEFAULT_MODEL,
    ModelChoice,
    ModelSpecError,
    NoModelConfigured,
    create_provider,
    resolve_model,
)


def test_the_option_wins_over_the_environment_which_wins_over_the_default() -> None:
    env = {"CAT_CODE_MODEL": "openai:gpt-local"}
    assert resolve_model("anthropic:claude-x", env) == ModelChoice("anthropic", "claude-x")
    assert resolve_model(None, env) == ModelChoice("openai", "gpt-local")
    assert str(resolve_model(None, {})) == DEFAULT_MODEL


def test_a_bare_provider_or_claude_name_is_understood() -> None:
    assert resolve_model("openai", {}).provider == "openai"
    assert resolve_model("claude-haiku-5-5", {}) == ModelChoice("anthropic", "claude-haiku-5-5")


def test_a_model_name_with_colons_keeps_them() -> None:
    assert resolve_model("openai:qwen3:8b", {}) == ModelChoice("openai", "qwen3:8b")


@pytest.mark.parametrize("spec", ["gpt-4o", "gemini:pro"])
def test_an_unusable_model_spec_says_how_to_write_one(spec: str) -> None:
    with pytest.raises(ModelSpecError) as info:
        resolve_model(spec, {})
    assert "anthropic" in str(info.value)


def test_a_provider_without_credentials_is_no_model_configured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(NoModelConfigured) as info:
        create_provider(ModelChoice("openai", "gpt-test"))
    assert "OPENAI_API_KEY" in str(info.value)


def test_the_help_names_the_real_default_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from cat_code.cli.parser import build_parser

    monkeypatch.setenv("COLUMNS", "200")  # argparse wraps at hyphens on narrow terminals
    assert DEFAULT_MODEL in " ".join(build_parser().format_help().split())
