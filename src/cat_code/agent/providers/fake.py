"""`ScriptedProvider`: a model that plays a script, for tests and benchmarks.

Each call to ``complete`` takes the next step: a `ModelResponse` is returned, a
`ModelError` is raised, and a callable is called with the conversation so far (sync or
async), so a step can look at the tool results it was sent and block on events. A
`Streamed` step sends its text in pieces to the caller's ``on_text`` first, waiting on
the `asyncio.Event` s placed between them, so a test can hold an answer mid-stream. Every
call is recorded (a copy of the messages and the tool names) for assertions. Running
out of script is an error, never a silent default.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cat_code.agent.providers.base import (
    AssistantMessage,
    Message,
    ModelError,
    ModelResponse,
    TextSink,
    ToolCall,
    ToolSpec,
)

logger = logging.getLogger(__name__)

StepFunction = Callable[[list[Message]], ModelResponse | Awaitable[ModelResponse]]


@dataclass(slots=True)
class Streamed:
    """An answer sent piece by piece: each string goes to ``on_text``, each event is
    waited for. Then ``error`` is raised if set, else the response is returned (by
    default a final answer of the pieces' text, with ``tool_calls`` if given)."""

    pieces: list[str | asyncio.Event]
    response: ModelResponse | None = None
    error: ModelError | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)

    async def play(self, on_text: TextSink | None) -> ModelResponse:
        for piece in self.pieces:
            if isinstance(piece, asyncio.Event):
                await piece.wait()
            elif on_text is not None:
                on_text(piece)
        if self.error is not None:
            raise self.error
        if self.response is not None:
            return self.response
        text = "".join(p for p in self.pieces if isinstance(p, str))
        message = AssistantMessage(text=text, tool_calls=list(self.tool_calls))
        return ModelResponse(message, stop_reason="tool_use" if self.tool_calls else "end_turn")


Step = ModelResponse | ModelError | Streamed | StepFunction

_ids = itertools.count(1)


@dataclass(slots=True)
class RecordedCall:
    system: str
    messages: list[Message]
    tools: list[str]


class ScriptedProvider:
    """Plays ``steps`` in order, one per model call."""

    def __init__(self, steps: Iterable[Step], *, name: str = "fake:scripted") -> None:
        self.name = name
        self._steps = list(steps)
        self.calls: list[RecordedCall] = []
        self.closed = False

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
        snapshot = copy.deepcopy(list(messages))
        self.calls.append(RecordedCall(system, snapshot, [t.name for t in tools]))
        if not self._steps:
            raise AssertionError(f"the script has no step left for call {len(self.calls)}")
        step = self._steps.pop(0)
        if isinstance(step, ModelError):
            raise step
        if isinstance(step, ModelResponse):
            return step
        if isinstance(step, Streamed):
            return await step.play(on_text)
        outcome = step(snapshot)
        if inspect.isawaitable(outcome):
            return await outcome
        return outcome

    async def close(self) -> None:
        self.closed = True


def reply(text: str) -> ModelResponse:
    """A final answer."""
    return ModelResponse(AssistantMessage(text=text), stop_reason="end_turn")


def use_tools(*calls: tuple[str, dict[str, Any]], text: str = "") -> ModelResponse:
    """A turn asking for ``(tool name, arguments)`` calls, with fresh ids."""
    tool_calls = [ToolCall(f"toolu_{next(_ids)}", name, args) for name, args in calls]
    return ModelResponse(AssistantMessage(text=text, tool_calls=tool_calls), stop_reason="tool_use")
