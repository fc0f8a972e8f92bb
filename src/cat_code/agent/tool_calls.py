"""Running the tool calls of one model message: authorize each in turn, then run them all.

Each call is decided on its own, in the order the model asked (an unknown tool, unusable
arguments, a PreToolUse hook's refusal, the permission gate), then the checkpoint before the
first change is taken, then every allowed call runs concurrently. A tool never ends the turn:
whatever it raises becomes an error result the model reads. On cancellation the calls that
finished keep their results and the others are marked cancelled, so the conversation stays
one the APIs accept.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from cat_code.agent.providers.base import ToolCall, UserMessage
from cat_code.tools.base import Tool, ToolResult

if TYPE_CHECKING:
    from cat_code.agent.loop import Agent

logger = logging.getLogger(__name__)

CANCELLED_RESULT = "Error: the user cancelled this tool call."

#: The tool to run (or None), the error the model gets instead, the arguments it runs with.
Planned = tuple[Tool | None, str | None, dict[str, Any]]


async def run_tools(agent: Agent, calls: list[ToolCall]) -> list[ToolResult]:
    done: list[ToolResult | None] = [None] * len(calls)
    try:
        planned: list[Planned] = []
        for call in calls:
            planned.append(await _authorize(agent, call))
        if agent.checkpoints is not None:  # before any of them changes a file
            # The arguments as they will run (a PreToolUse hook may have changed them).
            await agent.checkpoints.before_tools([(t, args) for t, _, args in planned if t])
        async with asyncio.TaskGroup() as group:
            for index, (call, plan) in enumerate(zip(calls, planned, strict=True)):
                group.create_task(
                    _run_one(agent, call, *plan, done, index), name=f"tool:{call.name}"
                )
    except asyncio.CancelledError:
        # Calls that finished keep their results; the others are marked cancelled.
        results = []
        for call, result in zip(calls, done, strict=True):
            if result is None:
                result = ToolResult(CANCELLED_RESULT, is_error=True, tool_call_id=call.id)
                agent.events.tool_finished(call, result)
            results.append(result)
        agent.messages.append(UserMessage(tool_results=results))
        raise
    return [r for r in done if r is not None]


async def _authorize(
    agent: Agent, call: ToolCall
) -> tuple[Tool | None, str | None, dict[str, Any]]:
    """The tool to run (or None and the error the model gets) and its arguments."""
    tool = agent.registry.get(call.name) or agent.tool_search.tool(call.name)
    if tool is None:
        # What the model was sent: with tool search on, search_tools and not 500 names.
        sent = agent.tool_search.tools_for_request(agent.messages)
        available = ", ".join(t.name for t in sent) or "none"
        unknown = f"Error: unknown tool '{call.name}'. Available tools: {available}"
        return None, unknown, call.arguments
    if call.error is not None:
        return None, f"Error: cannot call '{call.name}': {call.error}", call.arguments
    refusal, arguments, hook = await agent.hooks.before_tool(call.name, call.arguments)
    if refusal is not None:
        agent.events.tool_refused(call, f"refused {call.name}: blocked by a PreToolUse hook")
        return None, refusal, arguments
    decision = await agent.permissions.authorize(tool, arguments, hook=hook)
    if decision.notice is not None:
        agent.events.tool_refused(call, decision.notice)
    return (tool, None, arguments) if decision.allowed else (None, decision.reason, arguments)


async def _run_one(
    agent: Agent,
    call: ToolCall,
    tool: Tool | None,
    refusal: str | None,
    arguments: dict[str, Any],
    done: list[ToolResult | None],
    index: int,
) -> None:
    if tool is None:
        result = ToolResult.error(refusal or f"Error: cannot run '{call.name}'")
    else:
        agent.events.tool_started(call)

        def progress(done: float, total: float | None, message: str | None) -> None:
            agent.events.tool_progress(call, done, total, message)

        try:
            result = await tool.execute(arguments, progress=progress)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool must not end the turn, whatever it does
            logger.exception("tool %s raised", call.name)
            result = ToolResult.error(f"Error: tool '{call.name}' failed: {exc!r}")
        result = await agent.hooks.after_tool(call.name, arguments, result)
    result.tool_call_id = call.id
    done[index] = result
    agent.events.tool_finished(call, result)
