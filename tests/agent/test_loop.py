"""The agent loop against a scripted model: tool use, concurrency, errors, limits, cancellation."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from cat_code.agent.loop import CANCELLED_RESULT, Agent, AgentEvents
from cat_code.agent.permissions import Answer, Permissions
from cat_code.agent.providers import anthropic as anthropic_wire, openai as openai_wire
from cat_code.agent.providers.base import (
    API_ERROR_NOTE,
    INTERRUPTED_NOTE,
    AssistantMessage,
    Message,
    ModelError,
    ModelResponse,
    RetryPolicy,
    ToolCall,
    UserMessage,
)
from cat_code.agent.providers.fake import ScriptedProvider, Streamed, reply, use_tools
from cat_code.host.config.load import load_config
from cat_code.host.servers.connect import default_transport
from cat_code.host.servers.pool import McpPool
from cat_code.mcp.transports.base import NO_CONTEXT, JsonObject
from cat_code.tools.base import BUILTIN, ProgressCallback, Tool, ToolOwner, ToolResult
from cat_code.tools.registry import ToolRegistry

ECHO_SERVER = Path(__file__).resolve().parents[2] / "examples" / "echo_server.py"
Run = Callable[[dict[str, Any], ProgressCallback | None], Awaitable[ToolResult]]


class FakeTool(Tool):
    def __init__(self, name: str, run: Run, *, read_only: bool = True, owner: ToolOwner = BUILTIN):
        self.name = name
        self.description = f"the {name} tool"
        self.input_schema = {"type": "object"}
        self.read_only = read_only
        self.owner = owner
        self._run = run
        self.calls: list[dict[str, Any]] = []

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        self.calls.append(arguments)
        return await self._run(arguments, progress)


def returning(text: str, *, is_error: bool = False) -> Run:
    async def run(arguments: dict[str, Any], progress: ProgressCallback | None) -> ToolResult:
        return ToolResult(text, is_error=is_error)

    return run


class Recorder(AgentEvents):
    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []

    def retrying(self, error: ModelError, delay: float, attempt: int) -> None:
        self.log.append(("retry", (error.kind, delay, attempt)))

    def assistant_delta(self, text: str) -> None:
        self.log.append(("delta", text))

    def assistant_text(self, text: str, *, final: bool) -> None:
        self.log.append(("final" if final else "interim", text))

    def tool_started(self, call: ToolCall) -> None:
        self.log.append(("started", call.name))

    def tool_progress(
        self, call: ToolCall, progress: float, total: float | None, message: str | None
    ) -> None:
        self.log.append(("progress", (call.name, progress, total, message)))

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        self.log.append(("finished", (call.name, result.content, result.is_error)))


class DeltaWatcher(Recorder):
    """Records, and sets ``seen`` once the given piece of text has streamed."""

    def __init__(self, piece: str) -> None:
        super().__init__()
        self.piece = piece
        self.seen = asyncio.Event()

    def assistant_delta(self, text: str) -> None:
        super().assistant_delta(text)
        if text == self.piece:
            self.seen.set()


def results_sent(message: Message) -> list[tuple[str, str, bool]]:
    assert isinstance(message, UserMessage)
    return [(r.tool_call_id, r.content, r.is_error) for r in message.tool_results]


def no_sleep_policy(delays: list[float] | None = None) -> RetryPolicy:
    async def sleep(seconds: float) -> None:
        if delays is not None:
            delays.append(seconds)

    return RetryPolicy(sleep=sleep)


async def test_a_tool_call_runs_and_its_result_goes_back_to_the_model() -> None:
    echo = FakeTool("echo", returning("你好"))
    ask = use_tools(("echo", {"text": "你好"}), text="Let me echo that.")
    model = ScriptedProvider([ask, reply("It said 你好.")])
    events = Recorder()
    agent = Agent(model, ToolRegistry([echo]), events=events)

    outcome = await agent.run("say 你好")

    assert outcome.status == "done" and outcome.text == "It said 你好."
    assert outcome.model_turns == 2
    assert echo.calls == [{"text": "你好"}]
    second = model.calls[1]
    assert second.tools == ["echo"]
    call_id = ask.message.tool_calls[0].id
    assert results_sent(second.messages[-1]) == [(call_id, "你好", False)]
    assert events.log == [
        ("interim", "Let me echo that."),
        ("started", "echo"),
        ("finished", ("echo", "你好", False)),
        ("final", "It said 你好."),
    ]


async def test_tool_calls_of_one_turn_run_concurrently() -> None:
    # Each tool waits until the other has started: run one after the other, they would
    # never both start and the first would give up (bounded) with an error result.
    started = {"a": asyncio.Event(), "b": asyncio.Event()}
    order: list[str] = []

    def waiting_for(me: str, other: str) -> Run:
        async def run(arguments: dict[str, Any], progress: ProgressCallback | None) -> ToolResult:
            order.append(f"{me} started")
            started[me].set()
            try:
                async with asyncio.timeout(5):
                    await started[other].wait()
            except TimeoutError:
                return ToolResult.error(f"{me} never saw {other} start")
            order.append(f"{me} done")
            return ToolResult(f"{me} ok")

        return run

    tools = [FakeTool("a", waiting_for("a", "b")), FakeTool("b", waiting_for("b", "a"))]
    ask = use_tools(("a", {}), ("b", {}))
    model = ScriptedProvider([ask, reply("both ran")])
    outcome = await Agent(model, ToolRegistry(tools)).run("go")

    assert outcome.text == "both ran"
    assert order[:2] == ["a started", "b started"]
    ids = [c.id for c in ask.message.tool_calls]
    assert results_sent(model.calls[1].messages[-1]) == [
        (ids[0], "a ok", False),
        (ids[1], "b ok", False),
    ]


async def test_results_go_back_in_call_order_whatever_order_they_finish() -> None:
    release_slow = asyncio.Event()

    async def slow(arguments: dict[str, Any], progress: ProgressCallback | None) -> ToolResult:
        await release_slow.wait()
        return ToolResult("slow")

    async def fast(arguments: dict[str, Any], progress: ProgressCallback | None) -> ToolResult:
        release_slow.set()
        return ToolResult("fast")

    events = Recorder()
    ask = use_tools(("slow", {}), ("fast", {}))
    model = ScriptedProvider([ask, reply("done")])
    tools = [FakeTool("slow", slow), FakeTool("fast", fast)]
    await Agent(model, ToolRegistry(tools), events=events).run("go")

    finished = [name for kind, (name, *_) in events.log if kind == "finished"]
    assert finished == ["fast", "slow"]
    sent = [content for _, content, _ in results_sent(model.calls[1].messages[-1])]
    assert sent == ["slow", "fast"]


async def test_an_unknown_tool_is_an_error_result_the_model_reads() -> None:
    model = ScriptedProvider([use_tools(("nope", {"x": 1})), reply("sorry")])
    registry = ToolRegistry([FakeTool("echo", returning("x"))])
    outcome = await Agent(model, registry).run("go")

    assert outcome.status == "done"
    [(_, content, is_error)] = results_sent(model.calls[1].messages[-1])
    assert is_error
    assert "unknown tool 'nope'" in content and "echo" in content


async def test_a_tool_that_raises_is_an_error_result_not_an_exception() -> None:
    async def broken(arguments: dict[str, Any], progress: ProgressCallback | None) -> ToolResult:
        raise RuntimeError("boom")

    model = ScriptedProvider([use_tools(("broken", {})), reply("it broke")])
    outcome = await Agent(model, ToolRegistry([FakeTool("broken", broken)])).run("go")

    assert outcome.text == "it broke"
    [(_, content, is_error)] = results_sent(model.calls[1].messages[-1])
    assert is_error and "boom" in content


async def test_a_failing_tool_result_reaches_the_model_marked_as_an_error() -> None:
    model = ScriptedProvider([use_tools(("fail", {})), reply("noted")])
    fail = FakeTool("fail", returning("this tool always fails", is_error=True))
    await Agent(model, ToolRegistry([fail])).run("go")
    [(_, content, is_error)] = results_sent(model.calls[1].messages[-1])
    assert is_error and content == "this tool always fails"


async def test_arguments_the_provider_could_not_parse_are_an_error_result() -> None:
    bad = ModelResponse(
        AssistantMessage(tool_calls=[ToolCall("c1", "echo", {}, error="not valid JSON")]),
        stop_reason="tool_use",
    )
    echo = FakeTool("echo", returning("x"))
    model = ScriptedProvider([bad, reply("ok")])
    await Agent(model, ToolRegistry([echo])).run("go")
    assert echo.calls == []
    [(_, content, is_error)] = results_sent(model.calls[1].messages[-1])
    assert is_error and "not valid JSON" in content


async def test_the_loop_stops_at_max_turns() -> None:
    echo = FakeTool("echo", returning("again"))
    model = ScriptedProvider([use_tools(("echo", {})) for _ in range(3)])
    agent = Agent(model, ToolRegistry([echo]), max_turns=3)

    outcome = await agent.run("loop forever")

    assert outcome.status == "max_turns" and outcome.model_turns == 3
    assert outcome.turn_limit_note.startswith("stopped after 3 model turns without a final answer")
    assert len(model.calls) == 3 and len(echo.calls) == 3
    # The conversation ends on tool results, so the next prompt joins them.
    assert isinstance(agent.messages[-1], UserMessage) and agent.messages[-1].tool_results


async def test_an_api_error_ends_the_turn_with_the_error_and_forgets_the_prompt() -> None:
    model = ScriptedProvider(
        [
            ModelError("auth", "authentication failed (401) — check ANTHROPIC_API_KEY"),
            reply("hello"),
        ]
    )
    agent = Agent(model, ToolRegistry(), retry=no_sleep_policy())

    outcome = await agent.run("first")
    assert outcome.status == "error" and outcome.error is not None
    assert outcome.error.kind == "auth"
    assert agent.messages == []

    assert (await agent.run("second")).text == "hello"
    assert [m.text for m in model.calls[1].messages] == ["second"]


async def test_transient_api_errors_are_retried_with_backoff_and_retry_after_wins() -> None:
    delays: list[float] = []
    events = Recorder()
    model = ScriptedProvider(
        [
            ModelError("overloaded", "overloaded (529)"),
            ModelError("rate_limit", "rate limited (429)", retry_after=7.0),
            reply("finally"),
        ]
    )
    agent = Agent(model, ToolRegistry(), retry=no_sleep_policy(delays), events=events)

    outcome = await agent.run("hi")

    assert outcome.text == "finally"
    assert len(delays) == 2 and 0 < delays[0] <= 1.0 and delays[1] == 7.0
    assert [e for e in events.log if e[0] == "retry"] == [
        ("retry", ("overloaded", delays[0], 1)),
        ("retry", ("rate_limit", 7.0, 2)),
    ]


async def test_retries_give_up_after_the_policy_limit() -> None:
    model = ScriptedProvider([ModelError("server", "server error (500)") for _ in range(3)])
    agent = Agent(model, ToolRegistry(), retry=no_sleep_policy())
    agent.retry.retries = 2

    outcome = await agent.run("hi")

    assert outcome.status == "error" and outcome.error is not None
    assert "gave up after 2 retries" in str(outcome.error)
    assert len(model.calls) == 3


async def test_a_refused_call_is_an_error_result_and_the_tool_does_not_run() -> None:
    asked: list[str] = []

    async def asker(tool: Tool, arguments: dict[str, Any]) -> Answer:
        asked.append(tool.name)
        return Answer.NO

    write = FakeTool("write", returning("written"), read_only=False)
    model = ScriptedProvider([use_tools(("write", {"path": "x"})), reply("ok, I won't")])
    agent = Agent(model, ToolRegistry([write]), permissions=Permissions(asker=asker))

    outcome = await agent.run("write x")

    assert outcome.text == "ok, I won't"
    assert asked == ["write"] and write.calls == []
    [(_, content, is_error)] = results_sent(model.calls[1].messages[-1])
    assert is_error and "refused" in content


async def test_without_an_asker_a_call_needing_approval_is_refused_with_the_way_out() -> None:
    write = FakeTool("write", returning("written"), read_only=False)
    model = ScriptedProvider([use_tools(("write", {})), reply("ok")])
    await Agent(model, ToolRegistry([write])).run("write")
    [(_, content, is_error)] = results_sent(model.calls[1].messages[-1])
    assert is_error and "--allow-tool" in content and "--yes" in content
    assert write.calls == []


async def test_questions_for_several_calls_are_asked_one_at_a_time_in_call_order() -> None:
    asking = 0
    seen: list[str] = []

    async def asker(tool: Tool, arguments: dict[str, Any]) -> Answer:
        nonlocal asking
        asking += 1
        assert asking == 1, "two questions at once"
        await asyncio.sleep(0)
        seen.append(tool.name)
        asking -= 1
        return Answer.YES

    tools = [FakeTool(n, returning(n), read_only=False) for n in ("one", "two", "three")]
    model = ScriptedProvider([use_tools(("one", {}), ("two", {}), ("three", {})), reply("ok")])
    await Agent(model, ToolRegistry(tools), permissions=Permissions(asker=asker)).run("go")
    assert seen == ["one", "two", "three"]


async def test_cancelling_a_turn_cancels_the_in_flight_call_and_keeps_the_conversation_valid() -> (
    None
):
    entered = asyncio.Event()
    was_cancelled = asyncio.Event()

    async def hang(arguments: dict[str, Any], progress: ProgressCallback | None) -> ToolResult:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            was_cancelled.set()
            raise
        return ToolResult("unreachable")

    events = Recorder()
    ask = use_tools(("quick", {}), ("hang", {}))
    model = ScriptedProvider([ask, reply("next answer")])
    tools = [FakeTool("quick", returning("quick done")), FakeTool("hang", hang)]
    agent = Agent(model, ToolRegistry(tools), events=events)

    turn = asyncio.create_task(agent.run("start"))
    async with asyncio.timeout(5):
        await entered.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert was_cancelled.is_set()
    quick_id, hang_id = (c.id for c in ask.message.tool_calls)
    assert results_sent(agent.messages[-1]) == [
        (quick_id, "quick done", False),
        (hang_id, CANCELLED_RESULT, True),
    ]
    assert ("finished", ("hang", CANCELLED_RESULT, True)) in events.log

    # The next prompt joins the tool results, so user and assistant still alternate.
    assert (await agent.run("go on")).text == "next answer"
    last = model.calls[1].messages[-1]
    assert isinstance(last, UserMessage) and last.text == "go on" and len(last.tool_results) == 2


async def test_cancelling_while_the_model_thinks_takes_the_prompt_back() -> None:
    thinking = asyncio.Event()

    async def never(messages: list[Message]) -> ModelResponse:
        thinking.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    model = ScriptedProvider([never, reply("fresh")])
    agent = Agent(model, ToolRegistry())
    turn = asyncio.create_task(agent.run("first"))
    async with asyncio.timeout(5):
        await thinking.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert agent.messages == []
    assert (await agent.run("second")).text == "fresh"


async def test_streamed_text_reaches_the_events_piece_by_piece_then_whole() -> None:
    echo = FakeTool("echo", returning("ok"))
    call = ToolCall("call_1", "echo", {"text": "x"})
    model = ScriptedProvider(
        [Streamed(["Let me ", "echo."], tool_calls=[call]), Streamed(["Do", "ne."])]
    )
    events = Recorder()
    outcome = await Agent(model, ToolRegistry([echo]), events=events).run("go")
    assert outcome.text == "Done."
    assert events.log == [
        ("delta", "Let me "),
        ("delta", "echo."),
        ("interim", "Let me echo."),
        ("started", "echo"),
        ("finished", ("echo", "ok", False)),
        ("delta", "Do"),
        ("delta", "ne."),
        ("final", "Done."),
    ]


async def test_cancelling_mid_stream_keeps_the_text_that_arrived_as_an_interrupted_answer() -> None:
    never = asyncio.Event()
    call = ToolCall("call_1", "echo", {})
    model = ScriptedProvider(
        [Streamed(["The plan: ", "first, ", never], tool_calls=[call]), reply("Continuing.")]
    )
    events = DeltaWatcher("first, ")
    agent = Agent(model, ToolRegistry([FakeTool("echo", returning("no"))]), events=events)
    turn = asyncio.create_task(agent.run("plan it"))
    async with asyncio.timeout(5):
        await events.seen.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    # What arrived stays, marked; the tool call that never finished arriving is dropped.
    assert agent.messages == [
        UserMessage("plan it"),
        AssistantMessage(text="The plan: first, ", interrupted="user"),
    ]
    assert ("started", "echo") not in events.log
    assert (await agent.run("go on")).text == "Continuing."
    sent = model.calls[1].messages
    assert [type(m).__name__ for m in sent] == ["UserMessage", "AssistantMessage", "UserMessage"]
    # Both APIs get a valid conversation that tells the model its answer was cut.
    assert anthropic_wire.to_wire(sent)[1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": f"The plan: first,\n\n{INTERRUPTED_NOTE}"}],
    }
    assert [m["role"] for m in openai_wire.to_wire("", sent)] == ["user", "assistant", "user"]
    assert INTERRUPTED_NOTE in openai_wire.to_wire("", sent)[1]["content"]


async def test_an_api_error_mid_stream_keeps_the_partial_answer_and_the_prompt() -> None:
    broken = ModelError("overloaded", "overloaded mid-answer")
    model = ScriptedProvider([Streamed(["Half ", "an answer"], error=broken), reply("Whole.")])
    agent = Agent(model, ToolRegistry(), retry=no_sleep_policy())
    outcome = await agent.run("ask")
    assert outcome.status == "error" and outcome.error is broken
    assert len(model.calls) == 1  # not retried: the text was already shown
    assert agent.messages == [
        UserMessage("ask"),
        AssistantMessage(text="Half an answer", interrupted="error"),
    ]
    assert (await agent.run("again")).text == "Whole."
    # The model is told its answer was cut by the error, not blamed on the user.
    sent = model.calls[1].messages
    assert anthropic_wire.to_wire(sent)[1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": f"Half an answer\n\n{API_ERROR_NOTE}"}],
    }
    assert openai_wire.to_wire("", sent)[1]["content"] == f"Half an answer\n\n{API_ERROR_NOTE}"
    assert API_ERROR_NOTE != INTERRUPTED_NOTE and "user" not in API_ERROR_NOTE


async def test_progress_reported_by_a_tool_reaches_the_events() -> None:
    async def chatty(arguments: dict[str, Any], progress: ProgressCallback | None) -> ToolResult:
        assert progress is not None
        progress(1, 2, "halfway")
        return ToolResult("done")

    events = Recorder()
    model = ScriptedProvider([use_tools(("chatty", {})), reply("ok")])
    await Agent(model, ToolRegistry([FakeTool("chatty", chatty)]), events=events).run("go")
    assert ("progress", ("chatty", 1, 2, "halfway")) in events.log


# -- with a real MCP server -------------------------------------------------------------


class RecordingTransport:
    """Wraps a real transport and records what the client sends; the rest passes through."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sent: list[JsonObject] = []
        self.changed = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _record(self, message: JsonObject) -> None:
        self.sent.append(message)
        self.changed.set()

    async def request(self, message: JsonObject, context: Any = NO_CONTEXT) -> JsonObject:
        self._record(message)
        return await self.inner.request(message, context)  # type: ignore[no-any-return]

    async def send(self, message: JsonObject, context: Any = NO_CONTEXT) -> None:
        self._record(message)
        await self.inner.send(message, context)

    async def wait_for(self, check: Callable[[JsonObject], bool]) -> JsonObject:
        async with asyncio.timeout(10):
            while True:
                for message in self.sent:
                    if check(message):
                        return message
                self.changed.clear()
                await self.changed.wait()


@pytest.fixture
def echo_config(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    path.write_text(json.dumps({"mcpServers": {"echo": entry}}))
    return path


async def test_cancelling_a_turn_sends_notifications_cancelled_to_the_mcp_server(
    echo_config: Path,
) -> None:
    transports: list[RecordingTransport] = []

    def factory(config: Any) -> Any:
        transports.append(RecordingTransport(default_transport(config)))
        return transports[-1]

    async with McpPool(load_config([echo_config]), transport_factory=factory) as pool:
        await pool.connect_all()
        registry = ToolRegistry()
        pool.register_into(registry)
        model = ScriptedProvider([use_tools(("mcp__echo__sleep", {"seconds": 60}))])
        agent = Agent(model, registry, permissions=Permissions(approve_all=True))
        turn = asyncio.create_task(agent.run("sleep a minute"))
        [transport] = transports
        call = await transport.wait_for(lambda m: m.get("method") == "tools/call")
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        note = await transport.wait_for(lambda m: m.get("method") == "notifications/cancelled")
        assert note["params"]["requestId"] == call["id"]
        [(_, content, is_error)] = results_sent(agent.messages[-1])
        assert is_error and content == CANCELLED_RESULT


async def test_a_dead_mcp_server_is_an_error_result_and_the_turn_goes_on(
    echo_config: Path,
) -> None:
    async with McpPool(load_config([echo_config])) as pool:
        await pool.connect_all()
        registry = ToolRegistry()
        pool.register_into(registry)
        client = pool.servers[0].client
        assert client is not None
        pid = client.transport.pid  # type: ignore[attr-defined]
        os.kill(pid, signal.SIGKILL)

        model = ScriptedProvider([use_tools(("mcp__echo__echo", {"text": "hi"})), reply("dead")])
        outcome = await Agent(model, registry).run("echo hi")

        assert outcome.text == "dead"
        [(_, content, is_error)] = results_sent(model.calls[1].messages[-1])
        assert is_error and "mcp__echo__echo" in content and "failed" in content


async def test_an_mcp_tool_result_goes_back_to_the_model(echo_config: Path) -> None:
    async with McpPool(load_config([echo_config])) as pool:
        await pool.connect_all()
        registry = ToolRegistry()
        pool.register_into(registry)
        ask = use_tools(("mcp__echo__echo", {"text": "你好"}), ("mcp__echo__add", {"a": 2, "b": 3}))
        model = ScriptedProvider([ask, reply("done")])
        await Agent(model, registry).run("go")
        sent = [content for _, content, _ in results_sent(model.calls[1].messages[-1])]
        assert sent == ["你好", "5"]


async def test_a_provider_that_raises_something_unexpected_ends_the_turn_with_an_error() -> None:
    def broken(messages: list[Message]) -> ModelResponse:
        raise TypeError("Could not resolve authentication method")

    agent = Agent(ScriptedProvider([broken, reply("fine again")]), ToolRegistry())
    outcome = await agent.run("hi")
    assert outcome.status == "error" and outcome.error is not None
    assert "TypeError: Could not resolve authentication method" in str(outcome.error)
    assert (await agent.run("again")).text == "fine again"


async def test_the_turn_limit_note_says_one_model_turn_in_the_singular() -> None:
    model = ScriptedProvider([use_tools(("echo", {}))])
    agent = Agent(model, ToolRegistry([FakeTool("echo", returning("again"))]), max_turns=1)

    outcome = await agent.run("loop forever")

    assert outcome.turn_limit_note == (
        "stopped after 1 model turn without a final answer (raise the limit with --max-turns)"
    )


async def test_notes_for_the_model_join_the_message_its_next_request_ends_with() -> None:
    echo = FakeTool("echo", returning("done"))
    model = ScriptedProvider([use_tools(("echo", {})), reply("ok")])
    agent = Agent(model, ToolRegistry([echo]))
    waiting = ["<system-notification>job 1 ended</system-notification>", ""]
    agent.notes_for_model = lambda: waiting.pop(0) if waiting else ""

    await agent.run("go")

    first = model.calls[0].messages[-1]
    assert isinstance(first, UserMessage)
    assert first.text == "go\n\n<system-notification>job 1 ended</system-notification>"
    second = model.calls[1].messages[-1]
    assert isinstance(second, UserMessage) and second.text == "" and second.tool_results
