"""The ``agent`` tool: the model hands a task to a subagent and reads back its answer.

``agent {description, prompt, subagent_type?, model?, max_turns?, isolation?}`` (Claude
Code's names). Its description lists the definitions (name and description, each cut to
one short line, so the list costs little on every request: claude-code #18245). Starting a
subagent asks nothing (the tool is read-only): each of the subagent's own calls is decided
like the parent's. Several calls in one model turn run concurrently, as every tool call
does (`cat_code.agent.loop`). ``isolation: "worktree"`` is refused until a session has a
worktree isolation (`Subagents.isolations`).
"""

from __future__ import annotations

from typing import Any

from cat_code.agent.subagents.definitions import AGENT_TOOL, GENERAL_PURPOSE
from cat_code.agent.subagents.runs import ChildMeter
from cat_code.agent.subagents.spawn import Request, SpawnError, Subagents
from cat_code.tools.base import ProgressCallback, Tool, ToolResult

#: The longest description of a definition shown in the tool's description.
DESCRIPTION_CHARS = 200
#: The most definitions listed there (the rest: /agents).
LISTED = 40


class AgentTool(Tool):
    """Starts one subagent per call (``depth``: the depth of the agent that calls it)."""

    name = AGENT_TOOL
    read_only = True  # starting one changes nothing; its tool calls are asked about

    def __init__(
        self, subagents: Subagents, *, depth: int = 0, meter: ChildMeter | None = None
    ) -> None:
        self.subagents = subagents
        self.depth = depth
        #: The meter of the subagent this tool belongs to (None: the main agent's tool).
        self.meter = meter
        names = subagents.catalogue.names()
        self.description = describe(subagents)
        self.input_schema: dict[str, Any] = {
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "description": "A short (3-5 word) description of the task",
                },
                "prompt": {
                    "type": "string",
                    "description": "The task for the subagent, complete and self-contained: "
                    "it sees nothing of this conversation",
                },
                "subagent_type": {
                    "type": "string",
                    "enum": names,
                    "description": f"Which kind of subagent (default {GENERAL_PURPOSE})",
                },
                "model": {
                    "type": "string",
                    "description": "provider:model for the subagent (default: its "
                    "definition's, else this session's model)",
                },
                "max_turns": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "The most model turns it may take (lowers its budget)",
                },
                "isolation": {
                    "type": "string",
                    "enum": ["worktree"],
                    "description": "worktree: work in a git worktree of its own",
                },
            },
            "required": ["description", "prompt"],
            "additionalProperties": False,
        }

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        try:
            request = self._request(arguments)
            return await self.subagents.run(request, depth=self.depth + 1, enclosing=self.meter)
        except SpawnError as exc:
            return ToolResult.error(str(exc))

    def _request(self, arguments: dict[str, Any]) -> Request:
        prompt = arguments.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise SpawnError("Error: 'prompt' must be the task for the subagent (text)")
        description = arguments.get("description")
        if not isinstance(description, str):
            description = ""
        kind = arguments.get("subagent_type") or GENERAL_PURPOSE
        definition = self.subagents.catalogue.get(str(kind))
        if definition is None:
            known = ", ".join(self.subagents.catalogue.names())
            raise SpawnError(f"Error: no subagent type {kind!r}; the types are: {known}")
        model = arguments.get("model")
        if model is not None and not isinstance(model, str):
            raise SpawnError("Error: 'model' must be text (provider:model)")
        max_turns = arguments.get("max_turns")
        if max_turns is not None and (
            isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1
        ):
            raise SpawnError("Error: 'max_turns' must be a whole number of at least 1")
        isolation = arguments.get("isolation") or definition.isolation
        if isolation is not None and isolation not in self.subagents.isolations:
            raise SpawnError(
                f"Error: isolation {isolation!r} is not available yet in this cat-code; "
                "call agent without 'isolation' (the subagent then works in this checkout)"
            )
        return Request(
            description=" ".join(description.split())[:100] or definition.name,
            prompt=prompt,
            definition=definition,
            model=model,
            max_turns=max_turns,
            isolation=isolation,
        )


def describe(subagents: Subagents) -> str:
    """The tool's description: what it does and the definitions to pick from."""
    lines = [
        "Start a subagent: a fresh agent with its own context that works on one task with "
        "its own tools and returns only its final answer (with a usage line). Use it for "
        "searches and multi-step work whose details need not fill this conversation. It sees "
        "nothing of this conversation: put everything it needs in 'prompt'. Several agent "
        "calls in one message run concurrently. Each has budgets (turns, tokens, time); one "
        "that reaches a budget returns what it has.",
        "",
        "Subagent types (subagent_type):",
    ]
    definitions = list(subagents.catalogue.definitions.values())
    for definition in definitions[:LISTED]:
        text = definition.description
        if len(text) > DESCRIPTION_CHARS:
            text = text[: DESCRIPTION_CHARS - 1] + "…"
        lines.append(f"- {definition.name}: {text}")
    if len(definitions) > LISTED:
        lines.append(f"- … and {len(definitions) - LISTED} more (the user's /agents lists them)")
    return "\n".join(lines)


__all__ = ["AgentTool", "describe"]
