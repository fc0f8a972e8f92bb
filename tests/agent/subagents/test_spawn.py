"""Running subagents in process: tools, permissions, budgets, errors and cancellation.

A parent `Agent` and its subagents talk to one `RoutedProvider`, which plays a separate
script per conversation, chosen by the conversation's first user message (a subagent's
is its prompt).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from cat_code.agent.cost import UsageMeter
from cat_code.agent.loop import Agent
from cat_code.agent.permissions import Answer, Permissions
from cat_code.agent.providers.base import (
    Message,
    ModelError,
    ModelResponse,
    RetryPolicy,
    TextSink,
    ToolSpec,
    Usage,
    UserMessage,
)
from cat_code.agent.providers.fake import ScriptedProvider, Step, reply, use_tools
from cat_code.agent.subagents import Budget, RunState, Subagents, asking_subagent, attach
from cat_code.agent.subagents.definitions import (
    Catalogue,
    PermissionMode,
    Source,
    load_catalogue,
    parse_definition,
)
from cat_code.tools.base import Tool
from cat_code.tools.builtin import builtin_tools
from cat_code.tools.registry import ToolRegistry


class RoutedProvider:
    """One script per conversation, by its first user message; the rest: ``main``."""

    name = "anthropic:claude-sonnet-4-5"

    def __init__(self, main: Sequence[Step], **children: Sequence[Step]) -> None:
        self.main = ScriptedProvider(main, name=self.name)
        self.children = {k: ScriptedProvider(v, name=self.name) for k, v in children.items()}

    async def prepare(self) -> None:
        pass

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        first = messages[0].text if messages else ""
        target = self.children.get(first, self.main)
        return await target.complete(system, messages, tools, on_text=on_text)

    async def close(self) -> None:
        pass


def spent(text: str, tokens_in: int, tokens_out: int, *calls: tuple[str, dict[str, Any]]) -> Step:
    response = use_tools(*calls, text=text) if calls else reply(text)
    response.usage = Usage(input_tokens=tokens_in, output_tokens=tokens_out)
    return response


def session(
    tmp_path: Path,
    provider: RoutedProvider,
    *,
    definitions: Sequence[tuple[str, Source]] = (),
    permissions: Permissions | None = None,
    budget: Budget | None = None,
) -> tuple[Agent, Subagents]:
    registry = ToolRegistry(builtin_tools(tmp_path))
    permissions = permissions or Permissions(approve_all=True)
    meter = UsageMeter()
    retry = RetryPolicy(sleep=lambda _delay: asyncio.sleep(0))
    subagents = attach(
        cwd=tmp_path,
        registry=registry,
        permissions=permissions,
        meter=meter,
        provider=lambda: provider,
        retry=lambda: retry,
        system_prompt=lambda: "You are cat-code.",
        log=None,
    )
    catalogue = Catalogue()
    for builtin in load_catalogue(tmp_path, None).definitions.values():
        catalogue.add(builtin)
    for text, source in definitions:
        catalogue.add(parse_definition(text, source=source))
    subagents.catalogue = catalogue
    if budget is not None:
        subagents.budget = budget
    agent = Agent(provider, registry, permissions=permissions, meter=meter, retry=retry)
    return agent, subagents


def agent_call(prompt: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("agent", {"description": "a task", "prompt": prompt, **extra})


def last_results(provider: RoutedProvider) -> list[str]:
    last = provider.main.calls[-1].messages[-1]
    assert isinstance(last, UserMessage)
    return [r.content for r in last.tool_results]


async def test_a_subagent_gets_the_parents_tools_without_agent_and_a_fresh_conversation(
    tmp_path: Path,
) -> None:
    provider = RoutedProvider(
        [use_tools(agent_call("Summarise x")), reply("ok")],
        **{"Summarise x": [reply("x is a letter")]},
    )
    agent, _ = session(tmp_path, provider)

    outcome = await agent.run("please")

    assert outcome.text == "ok"
    (child_call,) = provider.children["Summarise x"].calls
    assert [m.text for m in child_call.messages] == ["Summarise x"]
    assert "agent" not in child_call.tools and "shell" in child_call.tools
    assert child_call.system.startswith("You are cat-code.\n\n# You are a subagent")
    (result,) = last_results(provider)
    assert result.startswith("x is a letter\n\n[subagent general-purpose: 1 turn · 0 tokens ·")


async def test_the_token_budget_stops_a_subagent_which_returns_what_it_has(
    tmp_path: Path,
) -> None:
    provider = RoutedProvider(
        [use_tools(agent_call("Dig")), reply("ok")],
        Dig=[
            spent("Digging in src.", 600, 100, ("glob", {"pattern": "*"})),
            spent("", 600, 100, ("glob", {"pattern": "*"})),
        ],
    )
    agent, subagents = session(tmp_path, provider, budget=Budget(max_tokens=1_000))

    await agent.run("please")

    (result,) = last_results(provider)
    assert "reached its token budget (1,000 tokens" in result
    assert "Digging in src." in result
    (run,) = subagents.runs.runs
    assert run.state is RunState.STOPPED and run.tokens == 1_400
    # Its tokens count in the session's meter too.
    assert subagents.meter.total.input_tokens == 1_200


async def test_the_time_budget_stops_a_subagent_that_hangs(tmp_path: Path) -> None:
    never = asyncio.Event()

    async def hang(messages: list[Message]) -> ModelResponse:
        await never.wait()
        raise AssertionError("unreachable")

    provider = RoutedProvider([use_tools(agent_call("Hang")), reply("ok")], Hang=[hang])
    agent, subagents = session(tmp_path, provider, budget=Budget(max_seconds=0.05))

    await agent.run("please")

    (result,) = last_results(provider)
    assert "reached its time budget (0.05 s" in result
    assert "It had written nothing yet." in result
    assert subagents.runs.runs[0].state is RunState.STOPPED


async def test_a_failing_request_is_retried_like_the_parents_then_fails_only_that_subagent(
    tmp_path: Path,
) -> None:
    provider = RoutedProvider(
        [use_tools(agent_call("One"), agent_call("Two")), reply("ok")],
        One=[ModelError("overloaded", "busy"), reply("one done")],
        Two=[ModelError("auth", "bad key")],
    )
    agent, subagents = session(tmp_path, provider)

    outcome = await agent.run("please")

    assert outcome.text == "ok"
    one, two = last_results(provider)
    assert one.startswith("one done")
    assert two.startswith("Error: subagent general-purpose failed: bad key")
    states = [r.state for r in subagents.runs.runs]
    assert sorted(s.value for s in states) == ["done", "failed"]


async def test_cancelling_the_parent_cancels_every_running_subagent(tmp_path: Path) -> None:
    started: list[str] = []
    both = asyncio.Event()
    cancelled: list[str] = []

    def blocker(name: str) -> Step:
        async def block(messages: list[Message]) -> ModelResponse:
            started.append(name)
            if len(started) == 2:
                both.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.append(name)
                raise
            raise AssertionError("unreachable")

        return block

    provider = RoutedProvider(
        [use_tools(agent_call("A"), agent_call("B"))], A=[blocker("A")], B=[blocker("B")]
    )
    agent, subagents = session(tmp_path, provider)
    turn = asyncio.create_task(agent.run("please"))
    async with asyncio.timeout(5):
        await both.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    assert sorted(cancelled) == ["A", "B"]
    assert [r.state for r in subagents.runs.runs] == [RunState.CANCELLED] * 2
    assert subagents.runs.running() == []


async def test_a_subagents_question_names_it_and_dont_ask_refuses_instead(
    tmp_path: Path,
) -> None:
    asked: list[tuple[str, str | None]] = []

    async def asker(tool: Tool, arguments: dict[str, Any]) -> Answer:
        asked.append((tool.name, asking_subagent()))
        return Answer.YES

    careful = "---\nname: careful\ndescription: d\npermissionMode: dontAsk\n---\n"
    provider = RoutedProvider(
        [use_tools(agent_call("Ask"), agent_call("Quiet", subagent_type="careful")), reply("ok")],
        Ask=[use_tools(("shell", {"command": "true"})), reply("asked")],
        Quiet=[use_tools(("shell", {"command": "true"})), reply("quiet")],
    )
    agent, _ = session(
        tmp_path,
        provider,
        definitions=[(careful, Source.USER)],
        permissions=Permissions(asker=asker),
    )

    await agent.run("please")

    assert asked == [("shell", "general-purpose")]
    quiet_results = provider.children["Quiet"].calls[1].messages[-1]
    assert isinstance(quiet_results, UserMessage)
    assert "cannot ask" in quiet_results.tool_results[0].content


def test_a_projects_definition_narrows_but_never_widens(tmp_path: Path) -> None:
    provider = RoutedProvider([])
    _, subagents = session(tmp_path, provider, permissions=Permissions())
    wide = parse_definition(
        "---\nname: w\ndescription: d\npermissionMode: bypassPermissions\n"
        "tools: [agent, glob]\n---\n",
        source=Source.PROJECT,
    )
    plan = parse_definition(
        "---\nname: p\ndescription: d\npermissionMode: plan\n---\n", source=Source.PROJECT
    )
    warnings: list[str] = []

    tools = [t.name for t in subagents.tools_for(wide, 1, warnings)]

    assert tools == ["glob"]
    assert subagents.mode_for(wide, []) is PermissionMode.DEFAULT
    assert any("more permissive than this session's (default); ignored" in w for w in warnings)
    assert any("cannot let its subagent start subagents" in w for w in warnings)
    planned = subagents.tools_for(plan, 1, [])
    assert planned and all(t.read_only for t in planned)


def test_nesting_is_allowed_by_a_users_definition_and_never_deeper_than_two(
    tmp_path: Path,
) -> None:
    _, subagents = session(tmp_path, RoutedProvider([]))
    nester = parse_definition(
        "---\nname: n\ndescription: d\ntools: Task, Read\n---\n", source=Source.USER
    )

    assert [t.name for t in subagents.tools_for(nester, 1, [])] == ["read_file", "agent"]
    assert [t.name for t in subagents.tools_for(nester, 2, [])] == ["read_file"]


async def test_a_long_answer_is_capped_to_its_head_and_tail_with_a_note(tmp_path: Path) -> None:
    long = "HEAD " + "word " * 10_000 + " TAIL"
    provider = RoutedProvider([use_tools(agent_call("Long")), reply("ok")], Long=[reply(long)])
    agent, _ = session(tmp_path, provider)

    await agent.run("please")

    (result,) = last_results(provider)
    assert result.startswith("HEAD ") and "TAIL\n\n[subagent" in result
    assert "characters of the subagent's answer left out" in result
    assert len(result) < 16_500


async def test_worktree_isolation_is_refused_clearly_until_it_exists(tmp_path: Path) -> None:
    provider = RoutedProvider([use_tools(agent_call("Iso", isolation="worktree")), reply("ok")])
    agent, subagents = session(tmp_path, provider)

    await agent.run("please")

    (result,) = last_results(provider)
    assert "isolation 'worktree' is not available yet" in result
    assert subagents.runs.runs == []


def test_the_agent_tools_description_names_each_definition_on_one_short_line(
    tmp_path: Path,
) -> None:
    chatty = "---\nname: chatty\ndescription: " + "very " * 100 + "long\n---\n"
    _, subagents = session(tmp_path, RoutedProvider([]), definitions=[(chatty, Source.USER)])
    from cat_code.agent.subagents.tool import describe

    text = describe(subagents)
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    assert [line.split(":")[0] for line in lines] == ["- general-purpose", "- chatty"]
    assert all(len(line) <= 220 for line in lines)


async def test_a_subagents_token_budget_counts_the_tokens_of_the_subagents_it_starts(
    tmp_path: Path,
) -> None:
    nester = "---\nname: nester\ndescription: d\ntools: Task, Glob\n---\n"
    provider = RoutedProvider(
        [use_tools(agent_call("Nest", subagent_type="nester")), reply("ok")],
        Nest=[spent("Delegating.", 250, 50, agent_call("Deep"))],
        Deep=[
            spent("", 300, 100, ("glob", {"pattern": "*"})),
            spent("", 300, 100, ("glob", {"pattern": "*"})),
        ],
    )
    agent, subagents = session(
        tmp_path,
        provider,
        definitions=[(nester, Source.USER)],
        budget=Budget(max_tokens=1_000),
    )

    await agent.run("please")

    (result,) = last_results(provider)
    assert "subagent nester stopped before it finished: it reached its token budget" in result
    nest, deep = subagents.runs.runs
    assert (nest.name, nest.state, deep.depth, deep.state) == (
        "nester",
        RunState.STOPPED,
        2,
        RunState.CANCELLED,
    )
    assert (nest.tokens, deep.tokens) == (300, 800)  # each its own, in the breakdown
    assert subagents.meter.total.input_tokens == 850


async def test_a_subagent_whose_tool_ignores_cancellation_never_hangs_its_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cat_code.agent.subagents import spawn
    from cat_code.tools.base import ProgressCallback, ToolResult

    monkeypatch.setattr(spawn, "STOP_GRACE_S", 0.05)
    release = asyncio.Event()

    class Stubborn(Tool):
        name = "stubborn"
        description = "ignores cancellation"
        input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012
        read_only = True

        async def execute(
            self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
        ) -> ToolResult:
            while not release.is_set():
                try:
                    await release.wait()
                except asyncio.CancelledError:
                    continue  # what a badly written tool does
            return ToolResult("finally")

    provider = RoutedProvider(
        [use_tools(agent_call("Stuck")), reply("ok")],
        Stuck=[use_tools(("stubborn", {}))],
    )
    agent, _ = session(tmp_path, provider, budget=Budget(max_seconds=0.05))
    agent.registry.register(Stubborn())

    async with asyncio.timeout(5):
        outcome = await agent.run("please")

    assert outcome.text == "ok"
    (result,) = last_results(provider)
    assert "reached its time budget" in result
    (left,) = [t for t in asyncio.all_tasks() if t.get_name() == "subagent:general-purpose"]
    release.set()  # the stubborn tool ends; its subagent's task with it
    async with asyncio.timeout(5):
        await asyncio.wait({left})
