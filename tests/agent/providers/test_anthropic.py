"""The Anthropic provider over real HTTP against a scripted Messages API."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import (
    ScriptedModelApi,
    anthropic_error,
    anthropic_text,
    anthropic_tool_use,
    tool_results,
)

from cat_code.agent.loop import Agent
from cat_code.agent.providers import NoModelConfigured
from cat_code.agent.providers.anthropic import AnthropicProvider
from cat_code.agent.providers.base import (
    AssistantMessage,
    ModelError,
    RetryPolicy,
    ToolCall,
    ToolSpec,
    UserMessage,
)
from cat_code.tools.base import ToolResult
from cat_code.tools.registry import ToolRegistry

ECHO = ToolSpec(
    "mcp__echo__echo",
    "Echo back the input text",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        yield server
    assert server.errors == []


async def test_a_tool_use_answer_becomes_tool_calls_and_results_go_back_as_tool_result_blocks(
    api: ScriptedModelApi,
) -> None:
    api.add(
        anthropic_tool_use("mcp__echo__echo", {"text": "你好"}, text="Echoing.", call_id="toolu_1")
    )
    api.add(anthropic_text("It said 你好."), anthropic_text("noted"))
    provider = AnthropicProvider("claude-test")
    try:
        first = await provider.complete("be brief", [UserMessage("say 你好")], [ECHO])
        assert first.stop_reason == "tool_use"
        assert first.message.text == "Echoing."
        assert first.message.tool_calls == [
            ToolCall("toolu_1", "mcp__echo__echo", {"text": "你好"})
        ]

        result = ToolResult("你好", tool_call_id="toolu_1")
        failed = ToolResult("", is_error=True, tool_call_id="toolu_1")
        conversation = [UserMessage("say 你好"), first.message, UserMessage(tool_results=[result])]
        second = await provider.complete("be brief", conversation, [ECHO])
        assert second.message.text == "It said 你好." and second.stop_reason == "end_turn"
        assert second.usage.input_tokens == 10
        await provider.complete("", [*conversation[:2], UserMessage(tool_results=[failed])], [])
    finally:
        await provider.close()

    request = api.requests[0]
    assert api.paths[0] == "/v1/messages"
    headers = api.headers[0]
    assert "test-key" in (headers.get("x-api-key") or headers.get("authorization", ""))
    assert request["model"] == "claude-test" and request["system"] == "be brief"
    assert request["tools"] == [
        {
            "name": "mcp__echo__echo",
            "description": "Echo back the input text",
            "input_schema": ECHO.input_schema,
        }
    ]
    assert api.requests[1]["messages"][1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Echoing."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "mcp__echo__echo",
                "input": {"text": "你好"},
            },
        ],
    }
    assert tool_results(api.requests[1]) == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "你好", "is_error": False}
    ]
    # An empty result still says something (the API rejects empty content).
    [failure] = tool_results(api.requests[2])
    assert failure["is_error"] is True and failure["content"] == "(no output)"
    assert "tools" not in api.requests[2] and "system" not in api.requests[2]


async def test_a_root_level_any_of_schema_is_sent_as_one_object_schema(
    api: ScriptedModelApi,
) -> None:
    union = ToolSpec(
        "mcp__files__open",
        "",
        {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
                {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
            ]
        },
    )
    api.add(anthropic_text("ok"))
    provider = AnthropicProvider("claude-test")
    try:
        await provider.complete("", [UserMessage("hi")], [union])
    finally:
        await provider.close()
    [tool] = api.requests[0]["tools"]
    schema = tool["input_schema"]
    assert "description" not in tool
    assert schema["type"] == "object" and "anyOf" not in schema
    assert set(schema["properties"]) == {"path", "url"}
    assert "required" not in schema


async def test_empty_turns_are_dropped_and_same_role_turns_merged(api: ScriptedModelApi) -> None:
    api.add(anthropic_text("ok"))
    provider = AnthropicProvider("claude-test")
    try:
        await provider.complete(
            "", [UserMessage("one"), AssistantMessage(), UserMessage("two")], []
        )
    finally:
        await provider.close()
    assert api.requests[0]["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        }
    ]


@pytest.mark.parametrize(
    ("reply", "kind", "words"),
    [
        (anthropic_error(401, "authentication_error", "invalid x-api-key"), "auth",
         ["authentication failed (401)", "invalid x-api-key", "ANTHROPIC_API_KEY"]),
        (anthropic_error(404, "not_found_error", "model: claude-nope"), "not_found",
         ["(404)", "'claude-test'"]),
        (anthropic_error(529, "overloaded_error", "Overloaded"), "overloaded",
         ["overloaded (529)"]),
        (anthropic_error(400, "invalid_request_error", "tools.0: bad\nschema"), "bad_request",
         ["request rejected (400)", "tools.0: bad schema"]),
    ],
)  # fmt: skip
async def test_api_errors_are_one_line_naming_the_cause(
    api: ScriptedModelApi, reply: Any, kind: str, words: list[str]
) -> None:
    api.add(reply)
    provider = AnthropicProvider("claude-test")
    try:
        with pytest.raises(ModelError) as info:
            await provider.complete("", [UserMessage("hi")], [])
    finally:
        await provider.close()
    assert info.value.kind == kind
    text = str(info.value)
    assert "\n" not in text
    for word in words:
        assert word in text


async def test_a_rate_limit_is_retried_after_the_wait_the_api_asks_for(
    api: ScriptedModelApi,
) -> None:
    api.add(anthropic_error(429, "rate_limit_error", "slow down", retry_after="3"))
    api.add(anthropic_error(529, "overloaded_error", "Overloaded"))
    api.add(anthropic_text("made it"))
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    provider = AnthropicProvider("claude-test")
    try:
        agent = Agent(provider, ToolRegistry(), retry=RetryPolicy(sleep=sleep))
        outcome = await agent.run("hi")
    finally:
        await provider.close()
    assert outcome.text == "made it"
    assert len(api.requests) == 3
    assert waits[0] == 3.0 and 1.0 <= waits[1] <= 2.0  # the second retry backs off further


async def test_an_unreachable_api_is_a_retryable_network_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on the port now: the connection is refused.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    provider = AnthropicProvider("claude-test")
    try:
        with pytest.raises(ModelError) as info:
            await provider.complete("", [UserMessage("hi")], [])
    finally:
        await provider.close()
    assert info.value.kind == "network" and info.value.retryable
    assert f"127.0.0.1:{port}" in str(info.value) and "\n" not in str(info.value)


def test_without_credentials_no_model_is_configured(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no SDK profile files either
    with pytest.raises(NoModelConfigured) as info:
        AnthropicProvider("claude-test")
    assert str(info.value).startswith("No model configured")


async def test_requests_name_the_api_version_and_carry_the_key_as_x_api_key(
    api: ScriptedModelApi,
) -> None:
    api.add(anthropic_text("ok"))
    provider = AnthropicProvider("claude-test")
    try:
        await provider.complete("", [UserMessage("hi")], [])
    finally:
        await provider.close()
    headers = api.headers[0]
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["x-api-key"] == "test-key" and "authorization" not in headers
    assert headers["content-type"] == "application/json"
    assert api.requests[0]["stream"] is True


async def test_an_auth_token_is_sent_as_a_bearer_token_under_a_base_url_with_a_path(
    api: ScriptedModelApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url + "/proxy/")
    api.add(anthropic_text("ok"))
    provider = AnthropicProvider("claude-test")
    try:
        await provider.complete("", [UserMessage("hi")], [])
    finally:
        await provider.close()
    assert api.paths[0] == "/proxy/v1/messages"
    assert api.headers[0]["authorization"] == "Bearer tok-1"
    assert "x-api-key" not in api.headers[0]
