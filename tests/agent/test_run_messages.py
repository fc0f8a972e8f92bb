"""`Agent.run_messages`: a turn whose input is several messages (an MCP prompt's)."""

from __future__ import annotations

from cat_code.agent.loop import Agent
from cat_code.agent.providers.base import AssistantMessage, ModelError, UserMessage
from cat_code.agent.providers.fake import ScriptedProvider, reply
from cat_code.tools.registry import ToolRegistry


def agent_with(*steps: object) -> tuple[Agent, ScriptedProvider]:
    model = ScriptedProvider(steps)  # type: ignore[arg-type]
    return Agent(model, ToolRegistry()), model


async def test_the_messages_join_the_conversation_merged_by_role_and_the_model_answers() -> None:
    agent, model = agent_with(reply("bright yellow"))
    outcome = await agent.run_messages(
        [
            UserMessage(text="Describe yellow."),
            UserMessage(text="[resource a://1]\nsun"),
            AssistantMessage(text="Which shade?"),
            UserMessage(text="The brightest."),
        ]
    )
    assert (outcome.status, outcome.text) == ("done", "bright yellow")
    [call] = model.calls
    assert call.messages == [
        UserMessage(text="Describe yellow.\n\n[resource a://1]\nsun"),
        AssistantMessage(text="Which shade?"),
        UserMessage(text="The brightest."),
    ]
    assert agent.messages[-1] == AssistantMessage(text="bright yellow")


async def test_messages_that_end_with_the_assistant_ask_the_model_to_go_on() -> None:
    agent, model = agent_with(reply("…and so on"))
    await agent.run_messages([UserMessage(text="Start"), AssistantMessage(text="Once upon")])
    assert [type(m).__name__ for m in model.calls[0].messages] == [
        "UserMessage",
        "AssistantMessage",
        "UserMessage",
    ]
    assert model.calls[0].messages[-1] == UserMessage(text="Please continue.")


async def test_a_failed_model_call_takes_every_message_of_the_prompt_back_out() -> None:
    agent, _ = agent_with(reply("first answer"), ModelError("auth", "bad key"))
    await agent.run("hello")
    before = list(agent.messages)
    outcome = await agent.run_messages(
        [UserMessage(text="a"), AssistantMessage(text="b"), UserMessage(text="c")]
    )
    assert outcome.status == "error"
    assert agent.messages == before
