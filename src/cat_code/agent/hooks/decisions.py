"""What the hooks of one event decided, merged into one `Verdict`.

Each run is read by Claude Code's rules: exit 0 with JSON on stdout may carry
``continue`` / ``stopReason``, ``suppressOutput``, ``systemMessage``, ``decision:
"block"`` with ``reason``, and ``hookSpecificOutput`` (``permissionDecision`` allow | deny
| ask and its reason, ``updatedInput``, ``additionalContext``); plain stdout of
``UserPromptSubmit`` and ``SessionStart`` is context for the model. Exit 2 blocks, with
stderr as the reason. Any other exit, a timeout or a command that cannot start is a
non-blocking error the user is shown; the work goes on (exit 1 never blocks).

Several hooks' verdicts merge: one block blocks (every reason kept), ``deny`` wins over
``ask`` over ``allow``, contexts and notices add up in the hooks' order, the first
``updatedInput`` stands.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from cat_code.agent.hooks.config import HookEvent
from cat_code.agent.hooks.runner import HookRun

PermissionDecision = Literal["allow", "deny", "ask"]
_RANK: dict[PermissionDecision, int] = {"allow": 0, "ask": 1, "deny": 2}
#: The exit code by which a hook blocks (Claude Code's).
BLOCK_EXIT = 2
#: Where plain stdout is context for the model.
_PLAIN_CONTEXT = frozenset({HookEvent.USER_PROMPT_SUBMIT, HookEvent.SESSION_START})


@dataclass(slots=True)
class Verdict:
    """The merged answer of every hook that ran for one event."""

    #: Exit 2 or ``decision: "block"``: what "block" means is the event's (see the loop).
    blocked: bool = False
    reasons: list[str] = field(default_factory=list)
    permission: PermissionDecision | None = None
    permission_reason: str = ""
    updated_input: dict[str, Any] | None = None
    #: Text for the model (``additionalContext``, plain stdout where that counts).
    context: list[str] = field(default_factory=list)
    #: Lines for the user: ``systemMessage``, non-blocking errors, what a block said.
    notices: list[str] = field(default_factory=list)
    #: ``continue: false``: the turn ends, with this said to the user.
    stop_reason: str | None = None
    ran: int = 0

    @property
    def reason(self) -> str:
        return "\n".join(r for r in self.reasons if r) or "blocked by a hook"

    def merge(self, other: Verdict) -> None:
        self.blocked = self.blocked or other.blocked
        self.reasons += other.reasons
        if other.permission is not None and (
            self.permission is None or _RANK[other.permission] > _RANK[self.permission]
        ):
            self.permission, self.permission_reason = other.permission, other.permission_reason
        if self.updated_input is None:
            self.updated_input = other.updated_input
        self.context += other.context
        self.notices += other.notices
        if self.stop_reason is None:
            self.stop_reason = other.stop_reason
        self.ran += other.ran


def read_run(run: HookRun) -> Verdict:
    """One hook run's verdict (see the module docstring)."""
    verdict = Verdict(ran=1)
    hook = run.hook
    name = f"{hook.event} hook {hook.command!r}"
    if run.timed_out:
        verdict.notices.append(f"{name} timed out after {hook.timeout_s:g} s; it was ended")
        return verdict
    if run.exit_code is None:
        verdict.notices.append(f"{name} could not start: {run.error}")
        return verdict
    if run.exit_code == BLOCK_EXIT:
        verdict.blocked = True
        verdict.reasons.append(run.stderr.strip())
        return verdict
    if run.exit_code != 0:
        tail = run.stderr.strip().splitlines()[-1:] or ["(no stderr)"]
        verdict.notices.append(f"{name} failed with exit {run.exit_code}: {tail[0]}")
        return verdict
    output = _json_object(run.stdout)
    if output is None:
        if hook.event in _PLAIN_CONTEXT and run.stdout.strip():
            verdict.context.append(run.stdout.strip())
        return verdict
    _read_output(output, hook.event, verdict)
    return verdict


def _json_object(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _read_output(output: dict[str, Any], event: HookEvent, verdict: Verdict) -> None:
    if output.get("continue") is False:
        verdict.stop_reason = _text(output.get("stopReason")) or f"a {event} hook stopped the turn"
    if message := _text(output.get("systemMessage")):
        verdict.notices.append(message)
    decision = output.get("decision")
    if decision == "block":
        verdict.blocked = True
        verdict.reasons.append(_text(output.get("reason")))
    elif decision == "approve" and event is HookEvent.PRE_TOOL_USE:  # Claude Code's older word
        verdict.permission, verdict.permission_reason = "allow", _text(output.get("reason"))
    specific = output.get("hookSpecificOutput")
    if not isinstance(specific, dict):
        return
    wanted = specific.get("permissionDecision")
    if event is HookEvent.PRE_TOOL_USE and wanted in _RANK:
        verdict.permission = wanted
        verdict.permission_reason = _text(specific.get("permissionDecisionReason"))
    updated = specific.get("updatedInput")
    if event is HookEvent.PRE_TOOL_USE and isinstance(updated, dict):
        verdict.updated_input = updated
    if context := _text(specific.get("additionalContext")):
        verdict.context.append(context)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def merge(verdicts: list[Verdict]) -> Verdict:
    """Several hooks' verdicts as one, in the hooks' order."""
    merged = Verdict()
    for verdict in verdicts:
        merged.merge(verdict)
    return merged
