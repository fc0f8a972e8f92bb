"""``agent.spawn``: from the ``agent`` tool call to the subagent's first model request.

A real `Session` (built-in tools, permission rules, memory, the session file in a
temporary ``$CAT_CODE_HOME``, the definitions read from disk at its start) whose model is
a provider that answers at once and notes when each request arrives. Timed: the ``agent``
tool's ``execute`` called until the child's first ``complete`` (its tool set, permissions,
budgets, system prompt, the side conversation's first records written, its task started).
The parent's conversation exists already (its session file open), as it does in a real
turn. Target: at most 20 ms.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from cat_code.agent.providers.base import (
    AssistantMessage,
    Message,
    ModelResponse,
    TextSink,
    ToolSpec,
    UserMessage,
)

#: The target the row is held to (seconds).
SPAWN_TARGET_S = 0.020


class _StampingProvider:
    """Answers every request at once, noting when the first of each conversation came."""

    name = "anthropic:claude-sonnet-4-5"

    def __init__(self) -> None:
        self.first_request: asyncio.Future[float] | None = None

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
        stamp = time.perf_counter()
        if self.first_request is not None and not self.first_request.done():
            self.first_request.set_result(stamp)
        return ModelResponse(AssistantMessage(text="done"))

    async def close(self) -> None:
        pass


async def _spawn_samples(count: int) -> list[float]:
    from cat_code.agent.session import Session

    folder = Path(tempfile.mkdtemp(prefix="cat-code-bench-spawn-"))
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench-not-used")
    session = Session(model="anthropic:claude-sonnet-4-5", approve_all=False,
                      allow_patterns=None, cwd=folder)  # fmt: skip
    provider = _StampingProvider()
    session.provider = provider
    session.log.sync([UserMessage(text="look around")])  # the parent's file is open
    tool = session.registry.get("agent")
    assert tool is not None
    samples: list[float] = []
    for index in range(count + 3):  # three untimed warm-ups
        provider.first_request = asyncio.get_running_loop().create_future()
        arguments = {"description": "look", "prompt": f"Look at {index}"}
        started = time.perf_counter()
        result = await tool.execute(arguments)
        assert not result.is_error, result.content
        first = await provider.first_request
        if index >= 3:
            samples.append(first - started)
    session.log.close()
    return samples


def spawn_latency(count: int) -> list[float]:
    """``count`` spawn times in seconds (the tool call to the child's first request)."""
    return asyncio.run(_spawn_samples(count))
