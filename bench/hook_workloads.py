"""Hook workloads: what a command hook costs a tool call.

``hooks.pre_tool_use`` times one tool call through the agent loop (a scripted model
answering at once, a tool that returns at once) with one no-op ``PreToolUse`` command
hook (``true``): the median call of each repetition, since process starts on a shared
machine have a long tail of slow ones that would swamp a mean (both sides alike). The
floor is the hook's own process start: the same ``/bin/sh -c true`` spawned with asyncio,
the event's JSON written to its stdin, waited for. The difference is what cat-code adds
around the process: choosing the hook, the payload, its own session, reading the verdict,
and the loop's own tool call.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from workloads import Sizes, _check, _clock

#: Calls per repetition (a process start is ~1-3 ms: enough to average the jitter out).
CALLS = 40
HOOK_COMMAND = "true"
_PAYLOAD = {
    "session_id": "bench",
    "transcript_path": "",
    "cwd": ".",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "noop",
    "tool_input": {"text": "hello"},
}


async def pre_tool_use(impl: str, sizes: Sizes) -> dict[str, float]:
    if impl == "cat_code":
        return await _cat_code()
    if impl == "floor":
        return await _floor()
    return {}


async def _cat_code() -> dict[str, float]:
    from cat_code.agent.hooks import HookConfig, Hooks, HookScope, parse_hooks
    from cat_code.agent.loop import Agent
    from cat_code.agent.permissions import Permissions
    from cat_code.agent.providers.fake import ScriptedProvider, reply, use_tools
    from cat_code.tools.base import Tool, ToolResult
    from cat_code.tools.registry import ToolRegistry

    class Noop(Tool):
        name = "noop"
        description = "returns at once"
        input_schema: dict[str, Any] = {"type": "object"}  # noqa: RUF012
        read_only = True

        async def execute(self, arguments: dict[str, Any], *, progress: Any = None) -> ToolResult:
            return ToolResult("ok")

    entry = {"type": "command", "command": HOOK_COMMAND}
    raw = {"PreToolUse": [{"matcher": "noop", "hooks": [entry]}]}
    found, _ = parse_hooks(raw, Path("bench-settings.json"), HookScope.USER)
    hooks = Hooks(HookConfig(tuple(found)), cwd=Path.cwd())
    steps = []
    for _ in range(CALLS):
        steps += [use_tools(("noop", {"text": "hello"})), reply("done")]
    agent = Agent(
        ScriptedProvider(steps), ToolRegistry([Noop()]), permissions=Permissions(), hooks=hooks
    )
    times = []
    _clock()
    for _ in range(CALLS):
        start = time.perf_counter()
        outcome = await agent.run("go")
        times.append(time.perf_counter() - start)
        _check(outcome.text == "done", f"wrong outcome: {outcome}")
        agent.clear()
    return {"hooks.pre_tool_use": statistics.median(times)}


async def _floor() -> dict[str, float]:
    data = json.dumps(_PAYLOAD).encode()
    times = []
    _clock()
    for _ in range(CALLS):
        start = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            HOOK_COMMAND,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        await process.communicate(data)
        times.append(time.perf_counter() - start)
        _check(process.returncode == 0, "the hook failed")
    return {"hooks.pre_tool_use": statistics.median(times)}
