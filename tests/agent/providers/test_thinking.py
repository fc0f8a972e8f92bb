"""Extended thinking: asked for only when set and the catalogue says the model can think;
its blocks, signatures included, go back unchanged across tool-use turns."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import (
    ScriptedModelApi,
    anthropic_message,
    anthropic_text,
    openai_text,
)

from cat_code.agent.history.codec import decode, encode
from cat_code.agent.providers.anthropic import AnthropicProvider
from cat_code.agent.providers.base import AssistantMessage, ThinkingBlock, ToolCall, UserMessage
from cat_code.agent.providers.openai import OpenAIProvider
from cat_code.agent.thinking import ThinkingConfig, thinking_config
from cat_code.tools.base import ToolResult

THOUGHT = {"type": "thinking", "thinking": "The user wants 2+2. That is 4.", "signature": "sig=="}
REDACTED = {"type": "redacted_thinking", "data": "opaque-bytes"}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        yield server
    assert server.errors == []


def thinking_tool_use() -> dict[str, Any]:
    content = [
        THOUGHT,
        REDACTED,
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {"command": "echo 4"}},
    ]
    return anthropic_message(content, "tool_use")


def test_thinking_is_off_unless_the_user_sets_a_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CAT_CODE_THINKING_TOKENS", raising=False)
    assert not thinking_config().enabled
    monkeypatch.setenv("CAT_CODE_THINKING_TOKENS", "4000")
    assert thinking_config().budget_tokens == 4000
    monkeypatch.setenv("CAT_CODE_THINKING_TOKENS", "lots")
    assert not thinking_config().enabled


def test_the_budget_comes_from_the_users_settings_when_the_environment_is_silent(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("CAT_CODE_THINKING_TOKENS", raising=False)
    monkeypatch.setenv("CAT_CODE_HOME", str(tmp_path))
    settings = {"thinking": {"budgetTokens": 2048, "reasoningEffort": "high"}}
    (tmp_path / "settings.json").write_text(json.dumps(settings))
    assert thinking_config() == ThinkingConfig(2048, "high")


async def test_a_request_without_a_budget_asks_for_no_thinking(api: ScriptedModelApi) -> None:
    api.add(anthropic_text("4"))
    provider = AnthropicProvider("claude-sonnet-4-5", thinking=ThinkingConfig())
    try:
        await provider.complete("", [UserMessage("2+2?")], [])
    finally:
        await provider.close()
    assert "thinking" not in api.requests[0]
    assert api.requests[0]["max_tokens"] == 8192


async def test_thinking_blocks_are_kept_and_sent_back_first_and_unchanged_after_a_tool_call(
    api: ScriptedModelApi,
) -> None:
    api.add(thinking_tool_use(), anthropic_text("It is 4."))
    provider = AnthropicProvider("claude-sonnet-4-5", thinking=ThinkingConfig(4000))
    try:
        first = await provider.complete("", [UserMessage("2+2?")], [])
        assert first.message.text == "Let me check."
        assert first.message.thinking == [
            ThinkingBlock("thinking", THOUGHT["thinking"], "sig=="),
            ThinkingBlock("redacted_thinking", data="opaque-bytes"),
        ]
        result = ToolResult("4", tool_call_id="toolu_1")
        conversation = [UserMessage("2+2?"), first.message, UserMessage(tool_results=[result])]
        second = await provider.complete("", conversation, [])
        assert second.message.text == "It is 4." and second.message.thinking == []
    finally:
        await provider.close()
    request = api.requests[0]
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert request["max_tokens"] > 4000
    assistant = api.requests[1]["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][:2] == [THOUGHT, REDACTED]
    assert assistant["content"][2] == {"type": "text", "text": "Let me check."}


async def test_a_model_the_catalogue_says_cannot_think_is_never_asked_to(
    api: ScriptedModelApi,
) -> None:
    api.add(anthropic_text("4"))
    provider = AnthropicProvider("claude-3-5-haiku-latest", thinking=ThinkingConfig(4000))
    try:
        await provider.complete("", [UserMessage("2+2?")], [])
    finally:
        await provider.close()
    assert "thinking" not in api.requests[0]


def test_thinking_survives_a_saved_session_with_its_signature() -> None:
    message = AssistantMessage(
        "Let me check.",
        [ToolCall("toolu_1", "shell", {"command": "echo 4"})],
        thinking=[
            ThinkingBlock("thinking", "hmm", "sig"),
            ThinkingBlock("redacted_thinking", data="x"),
        ],
    )
    assert decode(json.loads(json.dumps(encode(message)))) == message


async def test_reasoning_effort_is_sent_to_an_openai_compatible_api_only_when_set(
    api: ScriptedModelApi,
) -> None:
    api.add(openai_text("4"), openai_text("4"))
    for effort in (None, "low"):
        provider = OpenAIProvider("gpt-5", thinking=ThinkingConfig(reasoning_effort=effort))
        try:
            await provider.complete("", [UserMessage("2+2?")], [])
        finally:
            await provider.close()
    assert "reasoning_effort" not in api.requests[0]
    assert api.requests[1]["reasoning_effort"] == "low"
