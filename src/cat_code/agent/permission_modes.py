"""Permission modes: how much the gate lets through before the rules are asked.

`PermissionMode` is Claude Code's four: ``default`` (the rules decide), ``acceptEdits``
(built-in file edits inside the workspace need no question), ``plan`` (read-only) and
``bypassPermissions`` (everything runs; only ever from the command line). `mode_ruling` is
what `Permissions.standing_decision` asks after the deny rules and before anything else,
so in plan mode no allow rule, ``--allow-tool`` or ``--yes`` can let a change through:
``write_file``, ``edit_file``, a background ``shell`` job, any ``shell`` command not on the
read-only list (`cat_code.agent.readonly_shell`) and every MCP tool without
``readOnlyHint`` are refused; read-only calls go on to the usual rules.

The starting mode (`starting_mode`) is ``--permission-mode``, else the user's
``permissions.defaultMode``; a project's ``defaultMode`` may only narrow it (plan is
narrowest), never widen it, and ``bypassPermissions`` from any file is ignored.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cat_code.agent import write_guard
from cat_code.agent.readonly_shell import is_read_only
from cat_code.host.state.settings import Settings, SettingsError, read_settings
from cat_code.tools.base import Tool


class PermissionMode(enum.StrEnum):
    DEFAULT = "default"
    ACCEPT_EDITS = "acceptEdits"
    PLAN = "plan"
    BYPASS = "bypassPermissions"


#: What Shift+Tab steps through, in order (bypass is never entered from the keyboard).
CYCLE = (PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS, PermissionMode.PLAN)
#: From the narrowest to the widest: a project file may only move left.
_WIDTH = (
    PermissionMode.PLAN,
    PermissionMode.DEFAULT,
    PermissionMode.ACCEPT_EDITS,
    PermissionMode.BYPASS,
)
#: The built-in tools that only change files (what acceptEdits lets through).
EDIT_TOOLS = frozenset({"write_file", "edit_file"})
#: The tool the model ends plan mode with (`cat_code.agent.plan_tool`).
PLAN_TOOL = "exit_plan_mode"


def next_mode(mode: PermissionMode) -> PermissionMode:
    """The mode after ``mode`` in the Shift+Tab cycle (bypass goes back to default)."""
    if mode not in CYCLE:
        return PermissionMode.DEFAULT
    return CYCLE[(CYCLE.index(mode) + 1) % len(CYCLE)]


def parse_mode(text: str) -> PermissionMode | None:
    """The mode named ``text`` (as Claude Code spells it), or None."""
    try:
        return PermissionMode(text)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class ModeRuling:
    """What the mode decided about one call (`Permissions` turns it into a `Decision`)."""

    allowed: bool
    reason: str
    notice: str | None = None


def _refused(tool: Tool, why: str) -> ModeRuling:
    return ModeRuling(
        False,
        f"Error: plan mode is on, so '{tool.name}' was not run: {why}. In plan mode you may "
        "only read: explore, then present your plan with exit_plan_mode (argument: plan); "
        "nothing changes until the user approves it.",
        notice=f"plan mode refused {tool.name}: {why}",
    )


def mode_ruling(
    mode: PermissionMode,
    tool: Tool,
    arguments: dict[str, Any],
    workspace: Callable[[], Iterable[Path]] | None,
) -> ModeRuling | None:
    """The mode's decision on one call, or None when the usual rules decide it. Writes no
    blanket approval covers (outside the ``workspace``, a trust-bearing file:
    `write_guard.guarded_writes`) no mode lets through unasked either."""

    def guarded(tool: Tool, arguments: dict[str, Any]) -> bool:
        return bool(write_guard.guarded_writes(tool, arguments, workspace))

    builtin = tool.owner.server is None
    if mode is PermissionMode.BYPASS:
        return None if guarded(tool, arguments) else ModeRuling(True, "bypassPermissions")
    if mode is PermissionMode.ACCEPT_EDITS:
        if builtin and tool.name in EDIT_TOOLS and not guarded(tool, arguments):
            return ModeRuling(True, "acceptEdits")
        return None
    if mode is not PermissionMode.PLAN:
        return None
    if builtin and tool.name == PLAN_TOOL:
        return ModeRuling(True, "plan mode")
    if builtin and tool.name == "shell":
        if arguments.get("run_in_background"):
            return _refused(tool, "background jobs are not run in plan mode")
        command = arguments.get("command")
        if not isinstance(command, str) or not is_read_only(command):
            return _refused(tool, "the command is not on the read-only list")
        return None
    if tool.read_only:
        return None
    if not builtin:
        return _refused(tool, "the MCP tool is not marked read-only (readOnlyHint)")
    return _refused(tool, "it changes files")


def _setting(path: Path | None) -> tuple[PermissionMode | None, str | None]:
    """A settings file's ``permissions.defaultMode`` and what is wrong with it."""
    if path is None:
        return None, None
    try:
        settings: Settings = read_settings(path)
    except SettingsError:
        return None, None  # the rule book names a broken file
    block = settings.get("permissions")
    value = block.get("defaultMode") if isinstance(block, dict) else None
    if value is None:
        return None, None
    mode = parse_mode(value) if isinstance(value, str) else None
    if mode is None:
        names = ", ".join(m.value for m in PermissionMode)
        return None, f"{path}: permissions.defaultMode {value!r} is not one of {names}; ignored"
    if mode is PermissionMode.BYPASS:
        return None, f"{path}: bypassPermissions is only taken from the command line; ignored"
    return mode, None


def starting_mode(
    given: PermissionMode | None, user_file: Path | None, project_file: Path | None
) -> tuple[PermissionMode, list[str]]:
    """The session's first mode and the warnings about the settings files' modes."""
    user, user_problem = _setting(user_file)
    project, project_problem = _setting(project_file)
    warnings = [p for p in (user_problem, project_problem) if p is not None]
    if given is not None:
        return given, warnings
    mode = user or PermissionMode.DEFAULT
    if project is not None:
        if _WIDTH.index(project) <= _WIDTH.index(mode):
            mode = project
        else:
            warnings.append(
                f"{project_file}: permissions.defaultMode {project.value!r} would widen "
                f"the mode ({mode.value}); a project file may only narrow it; ignored"
            )
    return mode, warnings


_PROMPTS = {
    PermissionMode.PLAN: (
        "Plan mode is on: the user wants a plan before any change. Only read and explore "
        "(read_file, grep, glob, read-only shell commands such as ls, cat, git status); "
        "do not write, edit, or run commands that change anything: they are refused. When "
        "the plan is ready, call exit_plan_mode with the plan as Markdown; the user "
        "approves it or answers with feedback."
    ),
    PermissionMode.ACCEPT_EDITS: (
        "Permission mode acceptEdits: file edits inside the working directory run "
        "without asking; other tool calls may still ask."
    ),
    PermissionMode.BYPASS: "Permission mode bypassPermissions: tool calls run without asking.",
}


def mode_prompt(mode: PermissionMode) -> str:
    """What the system prompt says about ``mode`` ("" for default)."""
    return _PROMPTS.get(mode, "")


__all__ = [
    "CYCLE",
    "EDIT_TOOLS",
    "PLAN_TOOL",
    "ModeRuling",
    "PermissionMode",
    "mode_prompt",
    "mode_ruling",
    "next_mode",
    "parse_mode",
    "starting_mode",
]
