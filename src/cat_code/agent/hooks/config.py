"""Which hooks a session has: read from the settings files, project ones only once approved.

Claude Code's shape, under ``hooks`` in a settings file::

    {"hooks": {"PreToolUse": [{"matcher": "shell|Bash",
                               "hooks": [{"type": "command", "command": "…", "timeout": 60}]}]}}

Files, in order: the user's ``$CAT_CODE_HOME/settings.json``, the project's
``.cat-code/settings.json`` and the ``settings.local.json`` beside it. Hooks of every file
add up (none replaces another). A project's hooks are repository content: they run only
once the user approved them as written (`ContentKind.HOOKS`, one digest over both project
files), or for one run with ``--trust-project``; until then they are listed as waiting.
A bad entry is named in a warning with its file and skipped; the others hold. An unreadable
``settings.json`` is named once, by the permission rules' warning; its hooks do not run.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cat_code.agent.hooks.matching import valid_matcher
from cat_code.host.config.project_trust import hooks_files, read_content
from cat_code.host.config.trust import ContentKind, TrustDecision, TrustStore
from cat_code.host.state.settings import (
    SETTINGS_FILE,
    SettingsError,
    project_settings_path,
    read_settings,
    user_settings_path,
)

#: Claude Code's default: a hook that runs longer is ended.
DEFAULT_TIMEOUT_S = 60.0


class HookEvent(enum.StrEnum):
    """The events hooks can listen to (Claude Code's names)."""

    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    STOP = "Stop"
    SUBAGENT_STOP = "SubagentStop"
    SESSION_START = "SessionStart"
    SESSION_END = "SessionEnd"
    PRE_COMPACT = "PreCompact"
    NOTIFICATION = "Notification"


class HookScope(enum.StrEnum):
    """Whose file a hook comes from."""

    USER = "user"
    PROJECT = "project"


#: The events whose matcher is a tool name (the others run for every occurrence).
TOOL_EVENTS = frozenset({HookEvent.PRE_TOOL_USE, HookEvent.POST_TOOL_USE})


@dataclass(frozen=True, slots=True)
class HookCommand:
    """One command hook as configured."""

    event: HookEvent
    matcher: str
    command: str
    timeout_s: float
    file: Path
    scope: HookScope
    #: False while a project's hook waits for the user's approval (it never runs then).
    approved: bool = True

    def as_json(self) -> dict[str, Any]:
        return {
            "event": str(self.event),
            "matcher": self.matcher,
            "command": self.command,
            "timeout": self.timeout_s,
            "file": str(self.file),
            "scope": str(self.scope),
            "approved": self.approved,
        }


@dataclass(frozen=True, slots=True)
class HookConfig:
    """Every hook a session knows of; ``active`` are those that run."""

    hooks: tuple[HookCommand, ...] = ()
    #: Bad entries and unreadable files, each naming its file.
    warnings: tuple[str, ...] = ()
    #: The project's settings file approvals are keyed by (for the messages).
    project_file: Path | None = None
    #: The user rejected the project's hooks as written (said once, not asked).
    rejected: bool = False

    @property
    def active(self) -> tuple[HookCommand, ...]:
        return tuple(h for h in self.hooks if h.approved)

    @property
    def withheld(self) -> tuple[HookCommand, ...]:
        return tuple(h for h in self.hooks if not h.approved)

    def for_event(self, event: HookEvent) -> tuple[HookCommand, ...]:
        return tuple(h for h in self.active if h.event is event)


def parse_hooks(
    raw: Any, file: Path, scope: HookScope, *, approved: bool = True
) -> tuple[list[HookCommand], list[str]]:
    """The command hooks of one file's ``hooks`` value, and a warning per bad entry."""
    if raw is None:
        return [], []
    if not isinstance(raw, dict):
        return [], [f"{file}: 'hooks' must be an object of events, not {type(raw).__name__}"]
    found: list[HookCommand] = []
    warnings: list[str] = []
    for name, groups in raw.items():
        try:
            event = HookEvent(name)
        except ValueError:
            known = ", ".join(HookEvent)
            warnings.append(f"{file}: unknown hook event {name!r} (known: {known}); skipped")
            continue
        if not isinstance(groups, list):
            warnings.append(f"{file}: hooks.{name} must be a list of matcher groups; skipped")
            continue
        for group in groups:
            hooks = group.get("hooks") if isinstance(group, dict) else None
            matcher = group.get("matcher", "") if isinstance(group, dict) else None
            if not isinstance(hooks, list) or not isinstance(matcher, str):
                warnings.append(
                    f'{file}: hooks.{name}: each group needs a "hooks" list and a text '
                    '"matcher"; skipped'
                )
                continue
            if not valid_matcher(matcher):
                warnings.append(
                    f"{file}: hooks.{name}: matcher {matcher!r} is not a valid regular "
                    "expression; it matches nothing"
                )
            for entry in hooks:
                hook, problem = _command(entry, event, matcher, file, scope, approved)
                if hook is not None:
                    found.append(hook)
                else:
                    warnings.append(f"{file}: hooks.{name}: {problem}; skipped")
    return found, warnings


def _command(
    entry: Any, event: HookEvent, matcher: str, file: Path, scope: HookScope, approved: bool
) -> tuple[HookCommand | None, str]:
    if not isinstance(entry, dict):
        return None, "a hook must be an object"
    if entry.get("type", "command") != "command":
        return None, f'hook type {entry.get("type")!r} is not supported (only "command")'
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        return None, 'a command hook needs a "command"'
    timeout = entry.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        return None, f"timeout {timeout!r} must be a positive number of seconds"
    return HookCommand(event, matcher, command, float(timeout), file, scope, approved), ""


def load_hooks(
    cwd: Path | None = None, *, trust_project: bool = False, store: TrustStore | None = None
) -> HookConfig:
    """The hooks of the user's and the project's settings files (see the module docstring)."""
    hooks: list[HookCommand] = []
    warnings: list[str] = []
    user_file = user_settings_path()
    _read(user_file, HookScope.USER, True, hooks, warnings)
    project_file = project_settings_path(cwd)
    rejected = False
    if not _same(project_file, user_file):
        approved = trust_project
        if not trust_project:
            content = read_content(ContentKind.HOOKS, project_file, store)
            approved = content is not None and content.approved
            rejected = content is not None and content.decision is TrustDecision.REJECTED
        for path in hooks_files(project_file):
            _read(path, HookScope.PROJECT, approved, hooks, warnings)
    return HookConfig(tuple(hooks), tuple(warnings), project_file, rejected)


def _read(
    path: Path, scope: HookScope, approved: bool, into: list[HookCommand], warnings: list[str]
) -> None:
    try:
        raw = read_settings(path).get("hooks")
    except SettingsError as exc:
        if path.name != SETTINGS_FILE:  # a settings.json's is named once, by the rule book
            warnings.append(f"{exc}; its hooks do not run")
        return
    found, problems = parse_hooks(raw, path, scope, approved=approved)
    into.extend(found)
    warnings.extend(problems)


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
