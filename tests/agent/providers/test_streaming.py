"""Streamed answers through both providers against the scripted APIs' server-sent events.

Every test runs once per provider: the Anthropic Messages events and the OpenAI
chat-completion chunks must give the same `ModelResponse` and the same text deltas.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from scripted.model_api import Cut, Hold, Reply, ScriptedModelApi, StreamError, streamed

from cat_code.agent.providers.anthropic import AnthropicProvider
from cat_code.agent.providers.base import ModelError, Provider, RetryPolicy, ToolCall, UserMessage
from cat_code.agent.providers.openai import OpenAIProvider


@dataclass
class Api:
    server: ScriptedModelApi
    name: str
    #: A mid-stream error type this API really sends, and the kind it means.
    error_type: str
    error_kind: str

    def provider(self) -> Provider:
        if self.name == "anthropic":
            return AnthropicProvider("claude-test")
        return OpenAIProvider("gpt-test")


@pytest.fixture(params=["anthropic", "openai"])
def api(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    with ScriptedModelApi() as server:
        if request.param == "anthropic":
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
            yield Api(server, "anthropic", "overloaded_error", "overloaded")
        else:
            monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
            monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
            yield Api(server, "openai", "server_error", "server")
    assert server.errors == []


async def no_sleep(seconds: float) -> None:
    pass


async def test_text_reaches_the_caller_before_the_answer_ends(api: Api) -> None:
    hold = Hold()
    api.server.add(streamed("The answer ", "is ", hold, "42."))
    before_hold = asyncio.Event()
    pieces: list[str] = []

    def on_text(text: str) -> None:
        pieces.append(text)
        if "".join(pieces) == "The answer is ":
            before_hold.set()

    provider = api.provider()
    try:
        # The SDK import (seconds on a busy machine) is not what the bound below is about.
        await provider.prepare()
        call = asyncio.create_task(provider.complete("", [UserMessage("?")], [], on_text=on_text))
        async with asyncio.timeout(10):
            await before_hold.wait()
        assert not call.done()  # the server holds the rest of the answer
        hold.release()
        async with asyncio.timeout(10):
            response = await call
    finally:
        await provider.close()
    assert "".join(pieces) == "The answer is 42." == response.message.text
    assert response.stop_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 5)
    request = api.server.requests[0]
    assert request["stream"] is True
    if api.name == "openai":
        assert request["stream_options"] == {"include_usage": True}


async def test_tool_calls_are_assembled_from_their_pieces_with_the_text_before_them(
    api: Api,
) -> None:
    api.server.add(
        streamed(
            "Let me ",
            "check.",
            tool_calls=[
                ("mcp__echo__echo", {"text": "你好"}, "call_1"),
                ("mcp__echo__reverse", {"text": "abc", "n": [1, 2]}, "call_2"),
            ],
            usage=(120, 33),
        )
    )
    pieces: list[str] = []
    provider = api.provider()
    try:
        response = await provider.complete("", [UserMessage("go")], [], on_text=pieces.append)
    finally:
        await provider.close()
    assert pieces == ["Let me ", "check."]
    assert response.message.text == "Let me check."
    assert response.message.tool_calls == [
        ToolCall("call_1", "mcp__echo__echo", {"text": "你好"}),
        ToolCall("call_2", "mcp__echo__reverse", {"text": "abc", "n": [1, 2]}),
    ]
    assert response.stop_reason == "tool_use"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (120, 33)


async def test_an_error_mid_answer_is_a_model_error_and_is_not_retried_after_text(
    api: Api,
) -> None:
    api.server.add(streamed("Half an ", StreamError(api.error_type, "try later")))
    api.server.add(streamed("a second answer the user must not see"))
    pieces: list[str] = []
    provider = api.provider()
    try:
        with pytest.raises(ModelError) as info:
            await RetryPolicy(sleep=no_sleep).call(
                provider, "", [UserMessage("?")], [], on_text=pieces.append
            )
    finally:
        await provider.close()
    assert pieces == ["Half an "]
    assert info.value.kind == api.error_kind and info.value.retryable
    assert "try later" in str(info.value) and "\n" not in str(info.value)
    assert len(api.server.requests) == 1
    api.server.steps.clear()


async def test_an_error_before_any_text_is_retried(api: Api) -> None:
    api.server.add(streamed(StreamError(api.error_type, "busy")), streamed("fine now"))
    retries: list[int] = []
    provider = api.provider()
    try:
        response = await RetryPolicy(sleep=no_sleep).call(
            provider, "", [UserMessage("?")], [], on_retry=lambda e, d, n: retries.append(n)
        )
    finally:
        await provider.close()
    assert response.message.text == "fine now"
    assert retries == [1] and len(api.server.requests) == 2


async def test_a_connection_dropped_mid_answer_is_a_network_error(api: Api) -> None:
    api.server.add(streamed("Partial ", Cut()))
    pieces: list[str] = []
    provider = api.provider()
    try:
        with pytest.raises(ModelError) as info:
            await provider.complete("", [UserMessage("?")], [], on_text=pieces.append)
    finally:
        await provider.close()
    assert pieces == ["Partial "]
    assert info.value.kind == "network" and "\n" not in str(info.value)


async def test_a_stream_without_usage_is_read_with_zero_usage(api: Api) -> None:
    api.server.add(streamed("local ", "model", usage=None))
    provider = api.provider()
    try:
        response = await provider.complete("", [UserMessage("hi")], [])
    finally:
        await provider.close()
    assert response.message.text == "local model"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (0, 0)


async def test_an_openai_compatible_server_that_refuses_stream_options_is_asked_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def picky(request: dict[str, object]) -> Reply:
        assert "stream_options" in request
        body = {"error": {"message": "Unrecognized request argument: stream_options"}}
        return Reply(body, 400)

    with ScriptedModelApi([picky, streamed("one"), streamed("two")]) as server:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        provider = OpenAIProvider("llama3")
        try:
            first = await provider.complete("", [UserMessage("hi")], [])
            second = await provider.complete("", [UserMessage("again")], [])
        finally:
            await provider.close()
    assert server.errors == []
    assert (first.message.text, second.message.text) == ("one", "two")
    assert ["stream_options" in r for r in server.requests] == [True, False, False]
