"""Subagents: the ``agent`` tool runs a task in a fresh conversation with its own budgets.

`definitions` reads the kinds of subagent (Markdown files with a YAML frontmatter, Claude
Code's format; a general-purpose one is built in); `spawn` starts and runs one
(`Subagents`: tools, permissions, model, budgets, answer); `tool` is the ``agent`` tool;
`runs` keeps each run for the live lines, ``/cost`` and the ``-p`` json; `side_log`
saves a run's conversation in the session file; `budget` and `answer` are the limits.
`attach` wires them into a session.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cat_code.agent.cost import UsageMeter
from cat_code.agent.permissions import Permissions
from cat_code.agent.providers.base import Provider, RetryPolicy
from cat_code.agent.subagents.budget import Budget, EndedBy, budget_from_settings
from cat_code.agent.subagents.definitions import (
    AgentDefinition,
    Catalogue,
    PermissionMode,
    Source,
    load_catalogue,
    parse_definition,
)
from cat_code.agent.subagents.runs import RunBook, RunState, SubagentRun, asking_subagent
from cat_code.agent.subagents.side_log import RecordSink, side_conversations
from cat_code.agent.subagents.spawn import MAX_DEPTH, Isolation, Request, Subagents
from cat_code.agent.subagents.tool import AgentTool
from cat_code.tools.registry import ToolRegistry


def attach(
    *,
    cwd: Path,
    registry: ToolRegistry,
    permissions: Permissions,
    meter: UsageMeter,
    provider: Callable[[], Provider | None],
    retry: Callable[[], RetryPolicy],
    system_prompt: Callable[[], str],
    log: RecordSink | None,
    make_provider: Callable[[str], Provider] | None = None,
) -> Subagents:
    """A session's subagents, their ``agent`` tool registered in ``registry``."""
    from cat_code.host.state.home import cat_code_home

    subagents = Subagents(
        catalogue=load_catalogue(cwd, cat_code_home() / "agents"),
        registry=registry,
        permissions=permissions,
        meter=meter,
        budget=budget_from_settings(cwd),
        provider=provider,
        retry=retry,
        system_prompt=system_prompt,
        log=log,
        make_provider=make_provider,
    )
    subagents.agent_tool = lambda depth, meter: AgentTool(subagents, depth=depth, meter=meter)
    registry.register(AgentTool(subagents, depth=0))
    return subagents


__all__ = [
    "MAX_DEPTH",
    "AgentDefinition",
    "AgentTool",
    "Budget",
    "Catalogue",
    "EndedBy",
    "Isolation",
    "PermissionMode",
    "Request",
    "RunBook",
    "RunState",
    "Source",
    "SubagentRun",
    "Subagents",
    "asking_subagent",
    "attach",
    "budget_from_settings",
    "load_catalogue",
    "parse_definition",
    "side_conversations",
]
