"""The OpenAI-compatible provider over real HTTP against a scripted chat-completions server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from scripted.model_api import Reply, ScriptedModelApi, openai_text, openai_tool_call

from cat_code.agent.providers import NoModelConfigured
from cat_code.agent.providers.base import ModelError, ToolSpec, UserMessage
from cat_code.agent.providers.openai import LOCAL_PLACEHOLDER_KEY, OpenAIProvider
from cat_code.tools.base import ToolResult

ECHO = ToolSpec(
    "mcp__echo__echo",
    "Echo back the input text",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        yield server
    assert server.errors == []


async def test_tool_calls_come_back_and_results_go_out_as_tool_messages(
    api: ScriptedModelApi,
) -> None:
    api.add(openai_tool_call("mcp__echo__echo", '{"text": "你好"}', call_id="call_1"))
    api.add(openai_text("It said 你好."))
    provider = OpenAIProvider("gpt-test")
    try:
        first = await provider.complete("be brief", [UserMessage("say 你好")], [ECHO])
        [call] = first.message.tool_calls
        assert (call.id, call.name, call.arguments, call.error) == (
            "call_1", "mcp__echo__echo", {"text": "你好"}, None,
        )  # fmt: skip
        assert first.stop_reason == "tool_use"
        results = UserMessage(tool_results=[ToolResult("你好", tool_call_id="call_1")])
        second = await provider.complete(
            "be brief", [UserMessage("say 你好"), first.message, results], [ECHO]
        )
        assert second.message.text == "It said 你好." and second.stop_reason == "end_turn"
    finally:
        await provider.close()

    assert api.paths[0] == "/v1/chat/completions"
    assert api.headers[0]["authorization"] == "Bearer sk-test"
    assert api.requests[0]["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "mcp__echo__echo",
                "parameters": ECHO.input_schema,
                "description": "Echo back the input text",
            },
        }
    ]
    sent = api.requests[1]["messages"]
    assert sent[0] == {"role": "system", "content": "be brief"}
    assert sent[2]["role"] == "assistant"
    assert json.loads(sent[2]["tool_calls"][0]["function"]["arguments"]) == {"text": "你好"}
    assert sent[3] == {"role": "tool", "tool_call_id": "call_1", "content": "你好"}


async def test_arguments_that_are_not_json_become_a_call_with_an_error(
    api: ScriptedModelApi,
) -> None:
    api.add(openai_tool_call("mcp__echo__echo", "{not json"))
    provider = OpenAIProvider("gpt-test")
    try:
        response = await provider.complete("", [UserMessage("hi")], [ECHO])
    finally:
        await provider.close()
    [call] = response.message.tool_calls
    assert call.error is not None and "not valid JSON" in call.error


async def test_an_auth_error_is_one_line_naming_the_key(api: ScriptedModelApi) -> None:
    body = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    api.add(Reply(body, 401))
    provider = OpenAIProvider("gpt-test")
    try:
        with pytest.raises(ModelError) as info:
            await provider.complete("", [UserMessage("hi")], [])
    finally:
        await provider.close()
    assert info.value.kind == "auth"
    assert str(info.value) == (
        "OpenAI API authentication failed (401): Incorrect API key provided — check OPENAI_API_KEY"
    )


async def test_a_local_server_needs_no_key(
    api: ScriptedModelApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    api.add(openai_text("local hello"))
    provider = OpenAIProvider("llama3")
    try:
        response = await provider.complete("", [UserMessage("hi")], [])
    finally:
        await provider.close()
    assert response.message.text == "local hello"
    assert api.headers[0]["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"


def test_without_a_key_or_a_base_url_no_model_is_configured_and_the_openai_variables_are_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(NoModelConfigured) as info:
        OpenAIProvider("gpt-test")
    message = str(info.value)
    assert message.startswith("No model configured: openai:gpt-test needs OPENAI_API_KEY")
    assert "OPENAI_BASE_URL" in message and "ANTHROPIC_API_KEY" not in message


async def test_the_organization_and_project_are_sent_when_set(
    api: ScriptedModelApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-1")
    api.add(openai_text("hi"))
    provider = OpenAIProvider("gpt-test")
    try:
        await provider.complete("", [UserMessage("hi")], [])
    finally:
        await provider.close()
    headers = api.headers[0]
    assert (headers["openai-organization"], headers["openai-project"]) == ("org-1", "proj-1")
    assert api.requests[0]["stream"] is True
