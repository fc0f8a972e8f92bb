"""A compaction that does not help is not applied, and holds the next automatic one back
(`cat_code.agent.compaction_backoff`): finding 12 of issue 24."""

from __future__ import annotations

import pytest

from cat_code.agent import compaction
from cat_code.agent.compaction import Compaction
from cat_code.agent.compaction_backoff import CompactionBackoff
from cat_code.agent.loop import Agent
from cat_code.agent.providers.base import (
    AssistantMessage,
    Message,
    ModelResponse,
    Usage,
    UserMessage,
)
from cat_code.agent.providers.fake import ScriptedProvider, reply
from cat_code.tools.registry import ToolRegistry


class Heard:
    """The compaction notices the agent gives (`AgentEvents.compacted`)."""

    def __init__(self) -> None:
        self.compactions: list[Compaction] = []

    def __getattr__(self, name: str) -> object:
        return lambda *args, **kwargs: None

    def compacted(self, result: Compaction) -> None:
        self.compactions.append(result)


def conversation() -> list[Message]:
    return [
        UserMessage(text="first " * 50), AssistantMessage(text="one " * 50),
        UserMessage(text="second"), AssistantMessage(text="two"),
    ]  # fmt: skip


async def test_finding_12_a_summary_larger_than_what_it_replaced_is_not_applied() -> None:
    provider = ScriptedProvider([reply("a very long summary " * 500)])
    heard = Heard()
    agent = Agent(provider, ToolRegistry(), events=heard)  # type: ignore[arg-type]
    agent.messages[:] = conversation()
    result = await agent.compact()
    assert result is not None and not result.applied
    assert agent.messages == conversation()  # as it was
    assert result.tokens_after > result.tokens_before and result.saved == 0
    assert heard.compactions == [result]
    assert result.describe().startswith("conversation not compacted: the summary would have")


async def test_finding_12_after_a_compaction_that_saved_little_the_next_waits_for_growth(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAT_CODE_CONTEXT_WINDOW", "10000")
    # Every answer says the request was 90% full (a large system prompt): the 80% rule
    # holds before every request, but the conversation is small.
    full = Usage(input_tokens=9_000, output_tokens=10)

    def answer(text: str) -> ModelResponse:
        return ModelResponse(AssistantMessage(text=text), usage=full)

    provider = ScriptedProvider(
        [answer("one"), reply("S"), answer("two"), answer("three"), answer("four")]
    )
    heard = Heard()
    agent = Agent(provider, ToolRegistry(), events=heard)  # type: ignore[arg-type]
    for prompt in ("a", "b", "c", "d"):
        await agent.run(prompt)
    assert [c.system for c in provider.calls].count(compaction.SUMMARY_SYSTEM) == 1
    [notice] = heard.compactions
    assert notice.automatic and notice.held_until is not None
    assert "automatic compaction waits until the conversation grows" in notice.describe()


def test_the_hold_lifts_once_the_conversation_has_grown_by_a_tenth_of_the_window() -> None:
    backoff = CompactionBackoff()
    little = Compaction(tokens_before=1_000, tokens_after=900, automatic=True, summarized=2)
    held = backoff.record(little, window=10_000)
    assert held.held_until == 900 + 1_000
    assert not backoff.allows(1_899) and backoff.allows(1_900)
    helped = Compaction(tokens_before=5_000, tokens_after=1_000, automatic=True, summarized=9)
    assert backoff.record(helped, window=10_000).held_until is None
    assert backoff.allows(0)
