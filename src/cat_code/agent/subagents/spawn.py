"""Starting and running one subagent: its tools, permissions, model, budgets and answer.

A subagent is a fresh `Agent`: its system prompt is the session's with the definition's
instructions and how to answer after it, and its first user message is the prompt exactly
as the parent model wrote it; nothing of the parent's history. Invariants:

- Tools: the definition's (Claude Code names mapped), by default the parent's without
  ``agent``; never a tool the parent lacks; ``agent`` only when a user's definition lists
  it and the child is not at `MAX_DEPTH` (a project file cannot grant it).
- Permissions: the session's rules, ``--allow-tool`` globs and asker (the question names
  the subagent, `runs.asking_subagent`); a ``permissionMode`` more permissive than the
  session's is ignored with a warning; ``plan`` keeps only read-only tools.
- Budgets (`budget`): turns through the agent's turn limit, tokens through its meter
  (its own requests and its subagents'; the run is cancelled at the request that crosses
  the budget), wall time through a bounded wait. A run that reaches one returns what it
  has and names the budget.
- A model request is retried by the parent's `RetryPolicy`; a failure ends only this run,
  as an error result. Cancelling `Subagents.run` cancels the subagent and waits for it.
- Its tokens count in the session's meter; its conversation goes to the session file
  (`side_log`); its progress to the `RunBook` (the REPL's live lines), its start, end and
  tool calls to ``on_change`` / ``on_tool`` (``-p`` prints them on stderr).
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from cat_code.agent.cost import UsageMeter
from cat_code.agent.hooks import Hooks
from cat_code.agent.loop import Agent, AgentEvents, Outcome
from cat_code.agent.permission_modes import PermissionMode as GateMode
from cat_code.agent.permissions import Permissions
from cat_code.agent.providers.base import (
    AssistantMessage,
    ModelError,
    Provider,
    RetryPolicy,
    ToolCall,
)
from cat_code.agent.subagents.answer import cap_answer
from cat_code.agent.subagents.budget import Budget, EndedBy
from cat_code.agent.subagents.definitions import (
    AGENT_TOOL,
    AgentDefinition,
    Catalogue,
    PermissionMode,
)
from cat_code.agent.subagents.runs import (
    ChildMeter,
    RunBook,
    SubagentRun,
    enter_subagent,
)
from cat_code.agent.subagents.side_log import RecordSink, SideLog
from cat_code.tools.base import Tool, ToolResult
from cat_code.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

#: The modes the permission gate knows (dontAsk is the asker's business, not the gate's).
_GATE_MODES = frozenset(m.value for m in GateMode)

#: The deepest a subagent may be: the main agent's children are 1, theirs 2 (no more).
MAX_DEPTH = 2
#: How long a cancelled subagent gets to stop (its tools cancelled, its files saved).
STOP_GRACE_S = 5.0
#: Claude Code's model aliases: the session's model here (cat-code has no alias table).
_CLAUDE_ALIASES = frozenset({"sonnet", "opus", "haiku"})

ANSWER_INSTRUCTIONS = """\
# You are a subagent
Another agent started you for one task, given in the user message; it sees nothing of \
your work but your final message, and nobody answers questions. Work with your tools \
until the task is done, then answer with what it asks for: complete, concise, with the \
facts (paths, names, numbers) the other agent needs. Keep your final message under about \
4,000 tokens."""


class SpawnError(Exception):
    """A subagent cannot start (an unknown type, a model that cannot be used); the text
    is what the parent model reads."""


@dataclass(frozen=True, slots=True)
class Request:
    """What the ``agent`` tool was asked for."""

    description: str
    prompt: str
    definition: AgentDefinition
    model: str | None = None
    max_turns: int | None = None
    #: A key of `Subagents.isolations` (``worktree``), checked by the tool.
    isolation: str | None = None


class Isolation(Protocol):
    """Where an isolated subagent works (``isolation: "worktree"``:
    `cat_code.agent.worktree_isolation.WorktreeIsolation`): a fresh
    checkout with tools of its own, left with a summary (branch, files changed)."""

    cwd: Path

    def tools(self) -> list[Tool]: ...

    async def leave(self) -> str: ...


IsolationFactory = Callable[[str], Awaitable[Isolation]]


@dataclass(slots=True)
class Subagents:
    """A session's subagents: what they inherit, their definitions, their runs."""

    catalogue: Catalogue
    registry: ToolRegistry
    permissions: Permissions
    meter: UsageMeter
    budget: Budget
    #: The session's model now (``/model`` may change it); None without one.
    provider: Callable[[], Provider | None]
    retry: Callable[[], RetryPolicy]
    #: The session's system prompt, read for each request.
    system_prompt: Callable[[], str]
    log: RecordSink | None = None
    runs: RunBook = field(default_factory=RunBook)
    #: ``isolation`` value → how to make that place (the session sets ``worktree``).
    isolations: dict[str, IsolationFactory] = field(default_factory=dict)
    #: Makes a provider for a ``model`` a definition or a call names.
    make_provider: Callable[[str], Provider] | None = None
    #: The ``agent`` tool a subagent at a depth gets when its definition lets it nest.
    agent_tool: Callable[[int, ChildMeter], Tool] | None = None
    #: Told when a run starts and when it ends (``-p`` says so on stderr).
    on_change: Callable[[SubagentRun], None] = lambda run: None
    #: Told of each finished tool call of a subagent (``-p`` shows it on stderr).
    on_tool: Callable[[SubagentRun, ToolCall, ToolResult], None] = lambda run, call, result: None
    #: The session's hooks: a subagent's tool calls fire them, its end fires SubagentStop.
    hooks: Hooks | None = None

    # -- tools and permissions -----------------------------------------------------------

    def tools_for(
        self,
        definition: AgentDefinition,
        depth: int,
        warn: list[str],
        meter: ChildMeter | None = None,
    ) -> list[Tool]:
        """The tools of a subagent of ``definition`` at ``depth`` (see the module docstring);
        ``meter``: its own, which its subagents' tokens count against too."""
        available = [t for t in self.registry.list() if t.name != AGENT_TOOL]
        if definition.tools is None:
            chosen = available
        else:
            chosen = []
            for pattern in definition.tools:
                if pattern == AGENT_TOOL:
                    continue
                hits = [t for t in available if fnmatch.fnmatchcase(t.name, pattern)]
                if not hits:
                    warn.append(f"tool {pattern!r} is not available; left out")
                chosen += [t for t in hits if t not in chosen]
        chosen = [
            t
            for t in chosen
            if not any(fnmatch.fnmatchcase(t.name, p) for p in definition.disallowed_tools)
        ]
        mode = self.mode_for(definition, warn)
        if mode is PermissionMode.PLAN:
            chosen = [t for t in chosen if t.read_only]
        wants_agent = definition.tools is not None and AGENT_TOOL in definition.tools
        if wants_agent and AGENT_TOOL not in definition.disallowed_tools:
            if definition.source.is_project:
                warn.append("a project's definition cannot let its subagent start subagents")
            elif depth < MAX_DEPTH and self.agent_tool is not None:
                chosen.append(self.agent_tool(depth, meter or ChildMeter(session=self.meter)))
        return chosen

    def session_mode(self) -> PermissionMode:
        # The session's gate mode (Shift+Tab, --permission-mode); --yes counts as bypass.
        gate = PermissionMode.parse(self.permissions.mode.value)
        if gate is None:  # never `or`: PLAN is 0, and falsy
            gate = PermissionMode.DEFAULT
        if gate is PermissionMode.DEFAULT and self.permissions.approve_all:
            return PermissionMode.BYPASS
        return gate

    def mode_for(self, definition: AgentDefinition, warn: list[str]) -> PermissionMode:
        """The definition's permission mode, unless it is more permissive than the session's."""
        session = self.session_mode()
        wanted = definition.permission_mode
        if wanted is None:
            return session
        if wanted > session:
            warn.append(
                f"permissionMode {wanted.setting} is more permissive than this session's "
                f"({session.setting}); ignored"
            )
            return session
        return wanted

    def permissions_for(self, mode: PermissionMode) -> Permissions:
        parent = self.permissions
        allow = list(parent.allow_patterns)
        if mode is PermissionMode.ACCEPT_EDITS:
            allow += ["edit_file", "write_file"]
        child = Permissions(
            approve_all=mode is PermissionMode.BYPASS,
            allow_patterns=allow,
            asker=None if mode is PermissionMode.DONT_ASK else parent.asker,
            rules=parent.rules,  # saved rules apply, and "always" answers are saved
            workspace=parent.workspace,
            trusted=parent.trusted,  # a subagent writes to trust-bearing files only when asked
        )
        child.on_warning = parent.on_warning
        # The child's gate enforces its mode too: plan mode refuses changes whatever allows.
        child.mode = GateMode(mode.setting) if mode.setting in _GATE_MODES else GateMode.DEFAULT
        return child

    # -- running -------------------------------------------------------------------------

    def _provider_for(self, spec: str | None) -> tuple[Provider, bool]:
        """The model to use and whether it is ours to close."""
        parent = self.provider()
        if spec is None or spec.strip().lower() in _CLAUDE_ALIASES | {"inherit", ""}:
            if parent is None:
                raise SpawnError("Error: no model is configured for subagents")
            return parent, False
        if parent is not None and spec.strip() == parent.name:
            return parent, False
        if self.make_provider is None:
            raise SpawnError(f"Error: model {spec!r} is not available to subagents")
        try:
            return self.make_provider(spec.strip()), True
        except Exception as exc:  # a bad spec, missing credentials: the model reads why
            raise SpawnError(f"Error: cannot use model {spec!r} for a subagent: {exc}") from exc

    async def run(
        self, request: Request, *, depth: int, enclosing: ChildMeter | None = None
    ) -> ToolResult:
        """Run one subagent to its end; its answer (capped) and usage line, or an error
        result. Raises only `asyncio.CancelledError`, after the subagent has stopped.
        ``enclosing``: the meter of the subagent that started this one (its token budget
        counts this one's tokens too)."""
        definition = request.definition
        warnings: list[str] = []
        meter = ChildMeter(session=self.meter, enclosing=enclosing)
        tools = self.tools_for(definition, depth, warnings, meter)
        provider, owned = self._provider_for(request.model or definition.model)
        place: Isolation | None = None
        if request.isolation is not None:
            # The seam for isolated subagents: their own checkout's tools replace the
            # session's of the same name, and what they leave behind is told after the answer.
            place = await self.isolations[request.isolation](definition.name)
            own = {t.name: t for t in place.tools()}
            tools = [own.get(t.name, t) for t in tools]
        mode = self.mode_for(definition, [])
        budget = self.budget.with_turns(request.max_turns, definition.max_turns)
        run = SubagentRun(
            id=uuid.uuid4().hex[:12],
            name=definition.name,
            description=request.description,
            model=provider.name,
            budget=budget,
            depth=depth,
            meter=meter,
        )
        for warning in warnings:
            logger.warning("subagent %s: %s", definition.name, warning)
        side = SideLog(self.log, run.id) if self.log is not None else None
        if side is not None:
            side.event(
                "start",
                name=run.name,
                description=run.description,
                model=run.model,
                depth=depth,
                prompt=request.prompt,
            )
        left = ""
        try:
            outcome, task_messages = await self._drive(run, request, provider, tools, mode, side)
        finally:
            if owned:
                await provider.close()
            if place is not None:
                left = await place.leave()
            if side is not None:
                side.event(
                    "end",
                    status=run.state.value,
                    ended_by=run.ended_by.value if run.ended_by else None,
                    turns=run.turns,
                    tokens=run.tokens,
                    seconds=round(run.elapsed, 3),
                )
            self.on_change(run)
        result = self._result(run, outcome, task_messages, warnings)
        if left:
            result.content += f"\n{left}"
        return result

    async def _drive(
        self,
        run: SubagentRun,
        request: Request,
        provider: Provider,
        tools: list[Tool],
        mode: PermissionMode,
        side: SideLog | None,
    ) -> tuple[Outcome | None, list[AssistantMessage]]:
        """Run the child agent under its budgets; its outcome (None: cut by a budget)."""
        meter = run.meter
        assert isinstance(meter, ChildMeter)
        agent = Agent(
            provider,
            ToolRegistry(tools),
            permissions=self.permissions_for(mode),
            system_prompt=lambda: self._system_prompt(request.definition),
            max_turns=run.budget.max_turns,
            events=_RunEvents(run, self.on_tool),
            retry=self.retry(),
            log=side,
            meter=meter,
            hooks=self.hooks.for_subagent() if self.hooks is not None else None,
        )
        self.runs.add(run)
        self.on_change(run)

        async def child() -> Outcome:
            enter_subagent(run.name)  # this task's context: the questions it asks name it
            return await agent.run(request.prompt)

        task = asyncio.create_task(child(), name=f"subagent:{run.name}")

        def on_tokens(total: int) -> None:
            if total >= run.budget.max_tokens and run.ended_by is None:
                run.ended_by = EndedBy.TOKENS
                task.cancel()

        meter.on_tokens = on_tokens
        try:
            done, _ = await asyncio.wait({task}, timeout=run.budget.max_seconds)
        except asyncio.CancelledError:
            run.ended_by = EndedBy.CANCELLED
            await _stop(task, run)
            run.finish(EndedBy.CANCELLED)
            raise
        if not done:
            run.ended_by = EndedBy.TIME
            await _stop(task, run)
        said = [m for m in agent.messages if isinstance(m, AssistantMessage)]
        if task.cancelled() or not task.done():  # not done: it ignored the cancel (said)
            last = agent.messages[-1] if agent.messages else None
            if isinstance(last, AssistantMessage) and not last.tool_calls and not last.interrupted:
                run.finish(EndedBy.ANSWER)  # the answer came with the request that crossed
                return Outcome(status="done", text=last.text, model_turns=run.turns), said
            run.finish(run.ended_by or EndedBy.CANCELLED)
            return None, said
        outcome = task.result()
        if outcome.status == "done":
            run.finish(EndedBy.ANSWER)
        elif outcome.status == "max_turns":
            run.finish(EndedBy.TURNS)
        else:
            run.finish(EndedBy.ERROR, str(outcome.error))
        return outcome, said

    def _system_prompt(self, definition: AgentDefinition) -> str:
        parts = [self.system_prompt(), ANSWER_INSTRUCTIONS]
        if definition.instructions.strip():
            parts.append(f"# Your instructions ({definition.name})\n{definition.instructions}")
        return "\n\n".join(parts)

    def _result(
        self,
        run: SubagentRun,
        outcome: Outcome | None,
        said: list[AssistantMessage],
        warnings: list[str],
    ) -> ToolResult:
        usage = run.usage_line()
        if warnings:
            usage += "\n[" + "; ".join(warnings) + "]"
        if run.ended_by is EndedBy.ANSWER and outcome is not None:
            text = outcome.text.strip() or "(the subagent's final message was empty)"
            return ToolResult(f"{cap_answer(text)}\n\n{usage}")
        so_far = "\n\n".join(m.text.strip() for m in said if m.text.strip())
        had = (
            f" What it had written so far:\n\n{cap_answer(so_far)}"
            if so_far
            else " It had written nothing yet."
        )
        if run.ended_by is EndedBy.ERROR:
            return ToolResult.error(
                f"Error: subagent {run.name} failed: {run.error}.{had}\n\n{usage}"
            )
        if run.ended_by is EndedBy.CANCELLED:
            return ToolResult.error(f"Error: subagent {run.name} was cancelled.{had}\n\n{usage}")
        assert run.ended_by is not None
        why = run.budget.describe(run.ended_by)
        return ToolResult(
            f"The subagent {run.name} stopped before it finished: it reached {why}.{had}\n\n{usage}"
        )


async def _stop(task: asyncio.Task[Outcome], run: SubagentRun) -> None:
    """Cancel a subagent's task and wait for it, bounded: a tool that ignores cancellation
    must not hang the parent (nor Ctrl-C); it is left to finish alone, and said."""
    task.cancel()
    await asyncio.wait({task}, timeout=STOP_GRACE_S)
    if not task.done():
        logger.warning("subagent %s did not stop within %.0f s", run.name, STOP_GRACE_S)


class _RunEvents(AgentEvents):
    """A subagent's agent events, kept in its `SubagentRun` for the live line."""

    def __init__(
        self, run: SubagentRun, on_tool: Callable[[SubagentRun, ToolCall, ToolResult], None]
    ) -> None:
        self.run = run
        self.on_tool = on_tool

    def model_started(self) -> None:
        self.run.writing = False

    def assistant_delta(self, text: str) -> None:
        self.run.writing = True

    def assistant_message(self, message: AssistantMessage) -> None:
        self.run.turns += 1
        self.run.writing = False

    def tool_started(self, call: ToolCall) -> None:
        self.run.running_tools[call.id] = call.name

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        self.run.running_tools.pop(call.id, None)
        self.on_tool(self.run, call, result)

    def retrying(self, error: ModelError, delay: float, attempt: int) -> None:
        logger.info("subagent %s: %s; retrying in %.1f s", self.run.name, error, delay)


__all__ = [
    "ANSWER_INSTRUCTIONS",
    "MAX_DEPTH",
    "Isolation",
    "Request",
    "SpawnError",
    "Subagents",
]
