"""The task tools through the agent loop: answers, errors as results, never a question,
and the open tasks restated after every kind of compaction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cat_code.agent.loop import Agent
from cat_code.agent.permissions import Answer, Permissions
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
from cat_code.agent.task_tools import session_task_list, task_tools
from cat_code.host.tasks import TASK_LIST_ENV, TaskStatus, TaskStore
from cat_code.host.tasks.render import restatement
from cat_code.tools.base import Tool, ToolResult
from cat_code.tools.registry import ToolRegistry


def _tools(store: TaskStore) -> dict[str, Tool]:
    return {t.name: t for t in task_tools(store)}


async def _call(tool: Tool, **arguments: Any) -> ToolResult:
    return await tool.execute(arguments)


async def test_create_update_get_and_list_answer_what_the_model_needs() -> None:
    tools = _tools(TaskStore("flow"))
    made = await _call(tools["task_create"], subject="Parse", activeForm="Parsing")
    assert made.content == "Task #1 created: Parse" and not made.is_error
    await _call(tools["task_create"], subject="Test", blockedBy=[1])
    started = await _call(tools["task_update"], id=1, status="in_progress", owner="me")
    assert "status pending → in_progress" in started.content and "owner" in started.content
    listed = json.loads((await _call(tools["task_list"])).content)
    assert [(t["id"], t["status"], t["ready"], t["owner"]) for t in listed] == [
        (1, "in_progress", False, "me"),
        (2, "pending", False, ""),
    ]
    done = await _call(tools["task_update"], id="1", status="completed")
    assert "This unblocked: #2 Test" in done.content
    assert json.loads((await _call(tools["task_list"])).content)[1]["ready"] is True
    got = json.loads((await _call(tools["task_get"], id=2)).content)
    assert got["blockedBy"] == [1] and got["activeForm"] == "" and got["createdAt"]


async def test_worktree_is_stored_and_listed() -> None:
    tools = _tools(TaskStore("wt"))
    await _call(tools["task_create"], subject="Isolated")
    await _call(tools["task_update"], id=1, worktree="feature-x")
    [entry] = json.loads((await _call(tools["task_list"])).content)
    assert entry["worktree"] == "feature-x"


async def test_a_second_task_in_progress_gets_a_reminder_to_keep_one() -> None:
    tools = _tools(TaskStore("one"))
    for subject in ("a", "b"):
        await _call(tools["task_create"], subject=subject)
    await _call(tools["task_update"], id=1, status="in_progress")
    second = await _call(tools["task_update"], id=2, status="in_progress")
    assert "#1 also in progress; keep exactly one task in_progress" in second.content


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("task_update", {"id": 7, "status": "completed"}, "there is no task #7 in task list"),
        ("task_get", {"id": 7}, "there is no task #7"),
        ("task_update", {"id": 1, "addBlocks": [1]}, "cannot block or be blocked by itself"),
        ("task_update", {"id": 1, "addBlockedBy": [2]}, "would make a cycle (#1 → #2 → #1"),
        ("task_update", {"id": 1, "status": "done"}, "status 'done' is not one of pending"),
        ("task_update", {"id": "x"}, "'id' must be a task id"),
        ("task_create", {}, "'subject' is required"),
        ("task_create", {"subject": "  "}, "'subject' must not be empty"),
        ("task_create", {"subject": "s", "metadata": [1]}, "'metadata' must be an object"),
    ],
)
async def test_bad_calls_are_clear_error_results(
    name: str, arguments: dict[str, Any], expected: str
) -> None:
    store = TaskStore("errors")
    store.create("a")
    store.create("b", blocked_by=[1])
    result = await _call(_tools(store)[name], **arguments)
    assert result.is_error and result.content.startswith("Error: ")
    assert expected in result.content


async def test_an_unusable_tasks_folder_is_an_error_result_and_the_turn_goes_on(
    cat_code_home: Path,
) -> None:
    (cat_code_home / "tasks").write_text("a file where the folder should be")
    store = TaskStore("broken")
    registry = ToolRegistry(task_tools(store))

    def check(messages: list[Message]) -> ModelResponse:
        [result] = messages[-1].tool_results  # type: ignore[union-attr]
        assert result.is_error and "cannot be used" in result.content
        return reply("I could not keep a task list; going on without it.")

    provider = ScriptedProvider(
        [
            ModelResponse(
                AssistantMessage(tool_calls=[ToolCall("c1", "task_create", {"subject": "x"})])
            ),
            check,
        ]
    )
    outcome = await Agent(provider, registry).run("plan it")
    assert outcome.status == "done" and outcome.text.startswith("I could not")


async def test_the_task_tools_never_ask_for_permission() -> None:
    asked: list[str] = []

    async def asker(tool: Tool, arguments: dict[str, Any]) -> Answer:
        asked.append(tool.name)
        return Answer.NO

    store = TaskStore("quiet")
    calls = [
        ToolCall("c1", "task_create", {"subject": "a"}),
        ToolCall("c2", "task_list", {}),
    ]
    provider = ScriptedProvider(
        [
            ModelResponse(AssistantMessage(tool_calls=calls)),
            ModelResponse(
                AssistantMessage(
                    tool_calls=[ToolCall("c3", "task_update", {"id": 1, "status": "completed"})]
                )
            ),
            ModelResponse(AssistantMessage(tool_calls=[ToolCall("c4", "task_get", {"id": 1})])),
            reply("done"),
        ]
    )
    agent = Agent(provider, ToolRegistry(task_tools(store)), permissions=Permissions(asker=asker))
    outcome = await agent.run("track it")
    assert outcome.status == "done" and asked == []
    assert store.get(1).status is TaskStatus.COMPLETED
    assert all(t.read_only for t in task_tools(store))


async def test_listeners_are_told_on_the_loops_thread_after_a_change() -> None:
    import threading

    store = TaskStore("threads")
    threads: list[str] = []
    store.listeners.append(lambda tasks: threads.append(threading.current_thread().name))
    await _call(_tools(store)["task_create"], subject="a")
    assert threads == [threading.current_thread().name]


def _restating_agent(store: TaskStore, script: list[Any]) -> tuple[Agent, ScriptedProvider]:
    provider = ScriptedProvider(script)
    agent = Agent(
        provider,
        ToolRegistry(task_tools(store)),
        restate=lambda: restatement(store.read(), store.name),
    )
    return agent, provider


#: A long first answer: a summary of it makes the conversation smaller, so it is applied.
LONG = "one " + "x" * 4000


def _plan(store: TaskStore) -> None:
    for n in range(1, 4):
        store.create(f"step {n}")
    store.update(1, status=TaskStatus.COMPLETED)
    store.update(2, status=TaskStatus.IN_PROGRESS)


async def test_compact_on_request_restates_the_open_tasks() -> None:
    store = TaskStore("manual")
    _plan(store)
    agent, _ = _restating_agent(store, [reply(LONG), reply("two"), reply("summary")])
    await agent.run("first")
    await agent.run("second")
    assert await agent.compact() is not None
    head = agent.messages[0]
    assert isinstance(head, UserMessage)
    assert "#2 [in_progress] step 2" in head.text and "#3 [pending, ready] step 3" in head.text
    assert "Completed: #1." in head.text and "step 1" not in head.text


async def test_automatic_compaction_restates_the_open_tasks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAT_CODE_CONTEXT_WINDOW", "1000")
    store = TaskStore("auto")
    _plan(store)
    full = ModelResponse(
        AssistantMessage(text=LONG), usage=Usage(input_tokens=790, output_tokens=20)
    )
    agent, provider = _restating_agent(store, [full, reply("summary"), reply("after")])
    await agent.run("first")
    await agent.run("second")
    after = provider.calls[2].messages[0]
    assert isinstance(after, UserMessage) and "#2 [in_progress] step 2" in after.text


async def test_a_prompt_too_long_compaction_restates_the_open_tasks() -> None:
    too_long = ModelError("bad_request", "request rejected (400): prompt is too long: 9 > 5")
    store = TaskStore("too-long")
    _plan(store)
    agent, provider = _restating_agent(
        store, [reply(LONG), too_long, reply("summary"), reply("ok")]
    )
    await agent.run("first")
    outcome = await agent.run("second")
    assert outcome.status == "done"
    retried = provider.calls[3].messages[0]
    assert isinstance(retried, UserMessage) and "#3 [pending, ready] step 3" in retried.text


async def test_nothing_is_restated_when_no_task_is_open() -> None:
    store = TaskStore("empty")
    agent, _ = _restating_agent(store, [reply("one"), reply("two"), reply("summary")])
    await agent.run("first")
    await agent.run("second")
    await agent.compact()
    assert "task list" not in agent.messages[0].text


def test_the_shared_list_wins_then_the_saved_one_then_the_sessions_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert session_task_list("sid", None) == "sid"
    assert session_task_list("sid", "saved") == "saved"
    monkeypatch.setenv(TASK_LIST_ENV, "team")
    assert session_task_list("sid", "saved") == "team"
    monkeypatch.setenv(TASK_LIST_ENV, "../bad")
    assert session_task_list("sid", None) == "sid"
