"""`Hooks`: a session's hooks, fired by event, for the loop and the front ends.

Each method fires one event: it picks the active hooks whose matcher covers the event's
subject, runs them concurrently (one process each, `run_hook`), and hands back the merged
`Verdict`. With no hook for an event nothing is built or started: a session without hooks
pays nothing. The input on stdin is Claude Code's: ``session_id``, ``transcript_path``,
``cwd``, ``permission_mode``, ``hook_event_name`` and the event's fields. What the user
must see (``systemMessage``, a failed or timed-out hook, a block's reason where it is the
user's) goes to ``on_notice``, escaped (a project's hook is repository content); what the
model must see is returned for the loop to place. Context from ``SessionStart`` waits
for the next prompt, which carries it with the prompt's own.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cat_code.agent.hooks.config import HookCommand, HookConfig, HookEvent, load_hooks
from cat_code.agent.hooks.decisions import PermissionDecision, Verdict, merge, read_run
from cat_code.agent.hooks.matching import matches
from cat_code.agent.hooks.runner import run_hook
from cat_code.base.safe_text import safe_text
from cat_code.host.state.settings import project_root
from cat_code.tools.base import ToolResult

logger = logging.getLogger(__name__)

#: How many times in a row a ``Stop`` hook may make the model go on (then it is not obeyed).
MAX_STOP_BLOCKS = 2


class Hooks:
    """The hooks of one session (see the module docstring)."""

    def __init__(
        self,
        config: HookConfig | None = None,
        *,
        cwd: Path | None = None,
        session_id: Callable[[], str] = lambda: "",
        transcript_path: Callable[[], Path | None] = lambda: None,
        permission_mode: Callable[[], str] = lambda: "default",
        trust_project: bool = False,
    ) -> None:
        self.cwd = cwd or Path.cwd()
        self.trust_project = trust_project
        self.config = config if config is not None else HookConfig()
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.permission_mode = permission_mode
        #: Where the user's lines go (the front ends print them).
        self.on_notice: Callable[[str], None] = lambda text: logger.warning("%s", text)
        #: Context for the model that waits for the next prompt (SessionStart's).
        self.pending_context: list[str] = []
        #: The first ``continue: false`` reason since `take_stop` (the loop ends the turn).
        self._stop: str | None = None
        #: A subagent's view (`for_subagent`): its stop is ``SubagentStop``, its task no prompt.
        self.subagent = False
        #: The project folder the hooks run in (``CAT_CODE_PROJECT_DIR``).
        self.project_dir = project_root(self.cwd)

    @classmethod
    def load(cls, cwd: Path, *, trust_project: bool = False, **kwargs: Any) -> Hooks:
        """The hooks of the settings files for ``cwd`` (`load_hooks`)."""
        config = load_hooks(cwd, trust_project=trust_project)
        return cls(config, cwd=cwd, trust_project=trust_project, **kwargs)

    def for_subagent(self) -> Hooks:
        """The same hooks for a subagent's `Agent`: its final answer fires ``SubagentStop``
        (not ``Stop``), its task fires no ``UserPromptSubmit``; tool events fire as usual."""
        view = copy.copy(self)
        view.subagent, view._stop = True, None
        return view

    def reload(self) -> None:
        """Read the settings files again (after an approval)."""
        self.config = load_hooks(self.cwd, trust_project=self.trust_project)

    @property
    def withheld(self) -> tuple[HookCommand, ...]:
        return self.config.withheld

    def withheld_line(self) -> str | None:
        """One line naming the project's hooks that wait for approval, or None."""
        waiting = self.config.withheld
        if not waiting:
            return None
        where = self.config.project_file.parent if self.config.project_file else "the project"
        state = "you rejected" if self.config.rejected else "you have not approved"
        return (
            f"skipped {len(waiting)} hook(s) of the project settings in {where} that "
            f"{state}: run cat-code project approve hooks"
        )

    # -- the events ------------------------------------------------------------------

    async def pre_tool_use(self, tool_name: str, tool_input: dict[str, Any]) -> Verdict:
        fields = {"tool_name": tool_name, "tool_input": _claude_input(tool_input)}
        return await self.fire(HookEvent.PRE_TOOL_USE, fields, subject=tool_name)

    async def before_tool(
        self, tool_name: str, tool_input: dict[str, Any]
    ) -> tuple[str | None, dict[str, Any], PermissionDecision | None]:
        """``PreToolUse``: the refusal the model reads (None: not blocked), the arguments to
        run the call with, and the hooks' permission decision for the gate."""
        verdict = await self.pre_tool_use(tool_name, tool_input)
        if verdict.blocked or verdict.permission == "deny":
            why = verdict.reason if verdict.blocked else verdict.permission_reason
            return f"Error: a PreToolUse hook blocked this call: {why}", tool_input, "deny"
        return None, verdict.updated_input or tool_input, verdict.permission

    async def after_tool(
        self, tool_name: str, tool_input: dict[str, Any], result: ToolResult
    ) -> ToolResult:
        """``PostToolUse``: ``result`` with what the hooks tell the model added to it."""
        if not self._for(HookEvent.POST_TOOL_USE, tool_name):
            return result
        fields = {
            "tool_name": tool_name,
            "tool_input": _claude_input(tool_input),
            "tool_response": {"content": result.content, "is_error": result.is_error},
        }
        verdict = await self.fire(HookEvent.POST_TOOL_USE, fields, subject=tool_name)
        notes = [*verdict.context]
        if verdict.blocked:
            notes.append(f"PostToolUse hook feedback: {verdict.reason}")
        if notes:
            result.content = "\n\n".join([result.content, *notes])
        return result

    async def user_prompt_submit(self, prompt: str) -> Verdict:
        verdict = await self.fire(HookEvent.USER_PROMPT_SUBMIT, {"prompt": prompt})
        verdict.context[:0] = self.pending_context
        self.pending_context = []
        if verdict.blocked:
            self.on_notice(safe_text(f"the prompt was blocked by a hook: {verdict.reason}"))
        return verdict

    async def prompt(self, prompt: str) -> tuple[str, str | None]:
        """A new turn: the prompt with the hooks' context for the model, and why it was
        blocked (None: it goes on). A stop asked for in an earlier turn is spent."""
        self.take_stop()
        if self.subagent:  # the task the main agent wrote is not the user's prompt
            return prompt, None
        verdict = await self.user_prompt_submit(prompt)
        if verdict.blocked or verdict.stop_reason is not None:
            return prompt, verdict.stop_reason or verdict.reason
        return "\n\n".join([prompt, *verdict.context]), None

    async def keep_going(self, blocks_in_row: int) -> str | None:
        """The model answered: what to tell it when a ``Stop`` (``SubagentStop``) hook
        blocks (it goes on), or None. One that blocked twice in a row is not obeyed again."""
        verdict = await self.stop(blocks_in_row > 0, subagent=self.subagent)
        if not verdict.blocked or blocks_in_row >= MAX_STOP_BLOCKS:
            return None
        return f"Stop hook feedback: {verdict.reason}"

    async def stop(self, active: bool, *, subagent: bool = False) -> Verdict:
        event = HookEvent.SUBAGENT_STOP if subagent else HookEvent.STOP
        return await self.fire(event, {"stop_hook_active": active})

    async def session_start(self, source: str) -> None:
        """``source``: startup, resume, clear or compact (also the matcher's subject)."""
        verdict = await self.fire(HookEvent.SESSION_START, {"source": source}, subject=source)
        self.pending_context += verdict.context

    async def session_end(self, reason: str) -> None:
        await self.fire(HookEvent.SESSION_END, {"reason": reason})

    async def pre_compact(self, trigger: str, instructions: str) -> None:
        fields = {"trigger": trigger, "custom_instructions": instructions}
        await self.fire(HookEvent.PRE_COMPACT, fields, subject=trigger)

    async def notification(self, message: str) -> None:
        await self.fire(HookEvent.NOTIFICATION, {"message": message})

    # -- running ---------------------------------------------------------------------

    def _for(self, event: HookEvent, subject: str | None) -> list[HookCommand]:
        chosen: list[HookCommand] = []
        seen: set[str] = set()
        for hook in self.config.for_event(event):
            if matches(hook.matcher, subject) and hook.command not in seen:
                seen.add(hook.command)  # the same command twice runs once (Claude Code's rule)
                chosen.append(hook)
        return chosen

    async def fire(
        self, event: HookEvent, fields: dict[str, Any], *, subject: str | None = None
    ) -> Verdict:
        """Run the hooks of ``event`` covering ``subject``; their merged verdict."""
        chosen = self._for(event, subject)
        if not chosen:
            return Verdict()
        payload = {
            "session_id": self.session_id(),
            "transcript_path": str(self.transcript_path() or ""),
            "cwd": str(self.cwd),
            "permission_mode": self.permission_mode(),
            "hook_event_name": str(event),
            **fields,
        }
        runs = await asyncio.gather(*(run_hook(h, payload, self.project_dir) for h in chosen))
        verdict = merge([read_run(run) for run in runs])
        for notice in verdict.notices:
            self.on_notice(safe_text(notice))
        if verdict.blocked and event not in _BLOCKING:
            # These events cannot block: what the hook said is the user's to read.
            self.on_notice(safe_text(f"{event} hook: {verdict.reason}"))
        if verdict.stop_reason is not None:
            self.on_notice(safe_text(verdict.stop_reason))
            self._stop = self._stop or verdict.stop_reason
        return verdict

    def take_stop(self) -> str | None:
        """Why a hook asked to end the turn (``continue: false``) since the last call."""
        stop, self._stop = self._stop, None
        return stop


#: The events an exit 2 changes something for (the others only show stderr to the user).
_BLOCKING = frozenset(
    {
        HookEvent.PRE_TOOL_USE,
        HookEvent.POST_TOOL_USE,
        HookEvent.USER_PROMPT_SUBMIT,
        HookEvent.STOP,
        HookEvent.SUBAGENT_STOP,
    }
)


def _claude_input(arguments: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments, plus ``file_path`` beside ``path`` (Claude Code's file tools
    name it so; a hook script written for them reads ``.tool_input.file_path``)."""
    if "path" in arguments and "file_path" not in arguments:
        return {**arguments, "file_path": arguments["path"]}
    return arguments
