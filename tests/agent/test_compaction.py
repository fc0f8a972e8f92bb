"""Compaction: where the conversation is cut, what the model is asked, what goes on, and
when the agent does it by itself."""

from __future__ import annotations

import pytest

from cat_code.agent import compaction
from cat_code.agent.compaction import LATEST_PROMPT, SUMMARY_HEAD, SUMMARY_SYSTEM, plan, rebuild
from cat_code.agent.loop import Agent
from cat_code.agent.providers.base import (
    AssistantMessage,
    Message,
    ModelError,
    ModelResponse,
    ToolCall,
    Usage,
    UserMessage,
)
from cat_code.agent.providers.fake import ScriptedProvider, reply
from cat_code.agent.tool_search import FoundTools
from cat_code.tools.base import ToolResult
from cat_code.tools.registry import ToolRegistry


def _call(n: int) -> tuple[AssistantMessage, UserMessage]:
    call = ToolCall(f"t{n}", "echo", {"text": "x" * 400})
    return (
        AssistantMessage(tool_calls=[call]),
        UserMessage(tool_results=[ToolResult("y" * 400, tool_call_id=f"t{n}")]),
    )


def test_between_turns_the_latest_exchange_is_kept_and_the_rest_summarized() -> None:
    messages: list[Message] = [
        UserMessage(text="first"), AssistantMessage(text="one"),
        UserMessage(text="second"), AssistantMessage(text="two"),
    ]  # fmt: skip
    cut = plan(messages, 200_000)
    assert cut is not None and cut.older == messages[:2] and cut.tail == messages[2:]
    rebuilt = rebuild("S", cut)
    assert rebuilt[0] == UserMessage(
        text=f"{SUMMARY_HEAD}\n\n<summary>\nS\n</summary>\n\n{LATEST_PROMPT}\nsecond"
    )
    assert rebuilt[1:] == [AssistantMessage(text="two")]


def test_in_a_long_tool_loop_the_cut_keeps_the_last_call_with_its_result() -> None:
    messages: list[Message] = [UserMessage(text="loop")]
    for n in range(20):
        messages.extend(_call(n))
    cut = plan(messages, 4_000)  # the turn is far over 30% of this window
    assert cut is not None and cut.tail == messages[-2:] and cut.prompt == "loop"
    rebuilt = rebuild("S", cut)
    assert isinstance(rebuilt[0], UserMessage) and rebuilt[0].text.endswith("loop")
    assert rebuilt[1:] == messages[-2:]


def test_a_second_compaction_restates_the_prompt_not_the_first_compactions_head() -> None:
    messages: list[Message] = [UserMessage(text="loop")]
    for n in range(4):
        messages.extend(_call(n))
    first = rebuild("S1", plan(messages, 4_000), restated="old tasks")  # type: ignore[arg-type]
    for n in range(4, 8):
        first.extend(_call(n))
    cut = plan(first, 4_000)
    assert cut is not None and cut.prompt == "loop"
    second = rebuild("S2", cut, restated="new tasks")
    assert "S1" not in second[0].text and "old tasks" not in second[0].text
    assert second[0].text.endswith(f"new tasks\n\n{LATEST_PROMPT}\nloop")


def test_nothing_before_the_only_prompt_is_nothing_to_compact() -> None:
    assert plan([UserMessage(text="hi")], 200_000) is None
    assert plan([], 200_000) is None


def test_the_window_comes_from_the_environment_else_the_table() -> None:
    assert compaction.context_window("anthropic:claude-x", {}) == 200_000
    assert (
        compaction.context_window("anthropic:claude-x", {"CAT_CODE_CONTEXT_WINDOW": "5000"}) == 5000
    )
    assert compaction.auto_enabled({}) and not compaction.auto_enabled(
        {"CAT_CODE_AUTO_COMPACT": "off"}
    )


async def test_the_agent_compacts_before_a_request_once_the_last_one_filled_80_percent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAT_CODE_CONTEXT_WINDOW", "1000")
    # (A long answer: a summary must make the conversation smaller to be applied.)
    full = ModelResponse(
        AssistantMessage(text="big " * 200), usage=Usage(input_tokens=790, output_tokens=20)
    )
    provider = ScriptedProvider([full, reply("the summary"), reply("after")])
    agent = Agent(provider, ToolRegistry())
    await agent.run("first")
    outcome = await agent.run("second")
    assert outcome.text == "after"
    summary_call, after_call = provider.calls[1], provider.calls[2]
    assert summary_call.system == SUMMARY_SYSTEM and summary_call.tools == []
    assert isinstance(after_call.messages[0], UserMessage)
    assert "the summary" in after_call.messages[0].text
    assert after_call.messages[0].text.endswith("second")
    assert agent.meter.requests == 3


async def test_a_prompt_too_long_error_compacts_once_then_the_error_stands() -> None:
    too_long = ModelError(
        "bad_request", "Anthropic API request rejected (400): prompt is too long: 9 > 5"
    )
    assert too_long.kind == "prompt_too_long"
    provider = ScriptedProvider([reply("one " * 200), too_long, reply("summary"), too_long])
    agent = Agent(provider, ToolRegistry())
    await agent.run("first")
    outcome = await agent.run("second")
    assert outcome.status == "error" and outcome.error is too_long
    assert len(provider.calls) == 4  # one compaction, one retry, no second compaction


async def test_tools_found_before_a_compaction_stay_found() -> None:
    found = UserMessage(
        tool_results=[ToolResult("ok", tool_call_id="s1", raw=FoundTools(("mcp__a__tool",)))]
    )
    provider = ScriptedProvider([reply("summary")])
    agent = Agent(provider, ToolRegistry())
    agent.messages[:] = [
        UserMessage(text="find"),
        AssistantMessage(tool_calls=[ToolCall("s1", "search_tools", {"query": "a"})]),
        found,
        AssistantMessage(text="found it"),
        UserMessage(text="use it"),
        AssistantMessage(text="ok"),
    ]
    result = await agent.compact()
    assert result is not None and result.summarized == 4
    assert "mcp__a__tool" in agent.tool_search.found(agent.messages)
    agent.clear()
    assert agent.tool_search.found(agent.messages) == set()
