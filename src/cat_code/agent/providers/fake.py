"""`ScriptedProvider`: a model that plays a script, for tests and benchmarks.

Each call to ``complete`` takes the next step: a `ModelResponse` is returned, a
`ModelError` is raised, and a callable is called with the conversation so far (sync or
async), so a step can look at the tool results it was sent and block on events. Every
call is recorded (a copy of the messages and the tool names) for assertions. Running
out of script is an error, never a silent default.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cat_code.agent.providers.base import (
    AssistantMessage,
    Message,
    ModelError,
    ModelResponse,
    ToolCall,
    ToolSpec,
)

logger = logging.getLogger(__name__)

StepFunction = Callable[[list[Message]], ModelResponse | Awaitable[ModelResponse]]
Step = ModelResponse | ModelError | StepFunction

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
        self, system: str, messages: Sequence[Message], tools: Sequence[ToolSpec]
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
