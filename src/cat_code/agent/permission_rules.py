"""Permission rules: what the settings files allow and deny, and the book that keeps them.

`RuleBook` reads ``{"permissions": {"allow": [...], "deny": [...]}}`` from the user's
``$CAT_CODE_HOME/settings.json`` and the project's ``.cat-code/settings.json`` (see
`cat_code.agent.permissions` for how the gate uses them): entry by entry, a bad entry named
in a warning and skipped; a project's allow rules only once approved; "always" answers
saved to the user's file only. A server rule ``mcp__<server>__*`` covers exactly that
server's tools.
"""

from __future__ import annotations

import enum
import fnmatch
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cat_code.base.files import same_file
from cat_code.base.safe_text import safe_line
from cat_code.host.config.project_trust import read_content
from cat_code.host.config.trust import ContentKind
from cat_code.host.state.settings import (
    Settings,
    SettingsError,
    project_settings_path,
    read_settings,
    update_settings,
    user_settings_path,
)
from cat_code.tools.base import Tool

logger = logging.getLogger(__name__)

Effect = Literal["allow", "deny"]
#: Where a rule comes from: a settings file, or an answer that could not be saved.
Source = Literal["user", "project", "session"]
EFFECTS: tuple[Effect, ...] = ("allow", "deny")


class Answer(enum.Enum):
    """The user's answer to "run this tool?"."""

    YES = "yes"
    NO = "no"
    ALWAYS_TOOL = "always_tool"
    ALWAYS_SERVER = "always_server"


#: Asks the user about one call. Cancelling it (Ctrl-C) cancels the turn.
Asker = Callable[[Tool, dict[str, Any]], Awaitable[Answer]]


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    #: Why: shown in logs when allowed, sent to the model when refused.
    reason: str
    #: One short line for the user when a rule refused the call.
    notice: str | None = None


def server_of(tool: Tool) -> str | None:
    """The MCP server a tool belongs to, or None for a built-in tool."""
    return tool.owner.server


#: Said of a file whose deny list could not be read (see `Permissions.standing_decision`).
_NO_YES = (
    "; its deny rules are unknown, so --yes approves nothing in this session "
    "(tool calls are asked about, and refused with -p)"
)


def server_rule(server: str) -> str:
    """The rule that covers every tool of ``server`` (named as the registry names them)."""
    from cat_code.host.mcp_tools.tool_adapter import sanitize

    return f"mcp__{sanitize(server)}__*"


_SERVER_RULE = re.compile(r"mcp__([A-Za-z0-9_-]+)__\*")


def ruled_server(pattern: str) -> str | None:
    """The (sanitised) server a server rule ``mcp__<server>__*`` is about, else None."""
    found = _SERVER_RULE.fullmatch(pattern)
    return found.group(1) if found else None


@dataclass(frozen=True, slots=True)
class Rule:
    """One ``allow`` or ``deny`` entry: a tool name or a glob over registered names."""

    pattern: str
    effect: Effect
    source: Source
    path: Path | None = None

    def matches(self, name: str, server: str | None = None) -> bool:
        """Whether the rule covers ``name`` — a tool of MCP server ``server`` when given,
        else a built-in tool or a name from `Tool.permission_subjects`."""
        ruled = ruled_server(self.pattern)
        if ruled is not None:
            from cat_code.host.mcp_tools.tool_adapter import sanitize

            if server is not None:  # the owner decides: "a" must not cover "a__b"'s tools
                return sanitize(server) == ruled and name.startswith(f"mcp__{ruled}__")
            if name.endswith("__*"):  # a whole server, as a resource tool names it
                return name == self.pattern
        return fnmatch.fnmatchcase(name, self.pattern)

    @property
    def origin(self) -> str:
        """Where it comes from, for the user: the file, or "this session"."""
        return str(self.path) if self.path is not None else "this session only"


class RuleError(ValueError):
    """``/permissions remove`` could not remove what it was given; the message says why."""


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong in a settings file, as a phrase following its path."""

    path: Path
    text: str
    #: Its deny list could not be read at all: what is denied is unknown.
    deny_unknown: bool = False


def rules_in(settings: Settings, source: Source, path: Path) -> tuple[list[Rule], list[Problem]]:
    """The usable rules of one settings file and what is wrong with the rest: ``allow``
    and ``deny`` are read separately and entry by entry, so one bad entry costs only
    itself."""
    block = settings.get("permissions")
    if block is None:
        return [], []
    if not isinstance(block, dict):
        problem = '"permissions" must be an object with "allow" and "deny" lists'
        return [], [Problem(path, f"{problem}: its permission rules are ignored", True)]
    rules: list[Rule] = []
    problems: list[Problem] = []
    for effect in EFFECTS:
        entries = block.get(effect, [])
        if not isinstance(entries, list):
            text = f'"permissions.{effect}" must be a list of tool names or globs'
            lost = effect == "deny"
            problems.append(Problem(path, f"{text}: its {effect} rules are ignored", lost))
            continue
        for entry in entries:
            if isinstance(entry, str) and entry.strip():
                rules.append(Rule(entry, effect, source, path))
            else:
                shown = json.dumps(entry, ensure_ascii=False)
                problems.append(
                    Problem(
                        path,
                        f'"permissions.{effect}" entry {shown} is not a tool name or glob: '
                        "that entry is ignored, the others hold",
                    )
                )
    return rules, problems


class RuleBook:
    """The permission rules of a session: both files' and the answers not saved."""

    def __init__(
        self,
        user_file: Path | None = None,
        project_file: Path | None = None,
        *,
        trust_project: bool = False,
    ) -> None:
        self.user_file = user_file
        #: The project's allow rules apply without an approval (``--trust-project``).
        self.trust_project = trust_project
        #: The project's allow rules held back until the user approves them.
        self.withheld: list[Rule] = []
        # The project file may be the user's own (cat-code started in the home folder).
        same = (
            project_file is not None
            and user_file is not None
            and same_file(project_file, user_file)
        )
        self.project_file = None if same else project_file
        self.rules: list[Rule] = []
        #: What is wrong with each file that could not be used at all, by file.
        self.problems: dict[Path, str] = {}
        #: Bad parts of files that were read (bad entries, a list that is not one).
        self.faults: list[Problem] = []
        self._session: list[Rule] = []
        self.reload()

    @classmethod
    def from_settings(cls, cwd: Path | None = None, *, trust_project: bool = False) -> RuleBook:
        """The user's settings file and the project's (of ``cwd``)."""
        return cls(user_settings_path(), project_settings_path(cwd), trust_project=trust_project)

    def reload(self) -> None:
        """Read both files again (another cat-code may have saved an answer meanwhile)."""
        rules: list[Rule] = []
        self.problems = {}
        self.faults = []
        sources: tuple[tuple[Source, Path | None], ...] = (
            ("user", self.user_file),
            ("project", self.project_file),
        )
        for source, path in sources:
            if path is None:
                continue
            try:
                settings = read_settings(path)
            except SettingsError as exc:
                self.problems[path] = exc.problem
                continue
            found, faults = rules_in(settings, source, path)
            if source == "project":
                found = self._approved_only(path, found)
            rules.extend(found)
            self.faults.extend(faults)
        self.rules = rules + self._session

    def _approved_only(self, path: Path, found: list[Rule]) -> list[Rule]:
        """A project's rules without its allow rules until they are approved as written."""
        content = None if self.trust_project else read_content(ContentKind.RULES, path)
        approved = content is None or content.approved
        self.withheld = [] if approved else [r for r in found if r.effect == "allow"]
        return [r for r in found if r not in self.withheld]

    @property
    def deny_unknown(self) -> list[Path]:
        """The files whose deny list could not be read at all (``--yes`` is off then)."""
        return [*self.problems, *(f.path for f in self.faults if f.deny_unknown)]

    def warnings(self) -> list[str]:
        """One line per problem in the files: what is wrong and what follows."""
        lines = []
        for path, problem in self.problems.items():
            line = f"settings file {path} {problem}: its permission rules are ignored"
            if path == self.user_file:
                line += ', and it will not be changed ("always" answers last for this session)'
            lines.append(line + _NO_YES)
        for fault in self.faults:
            lines.append(f"settings file {fault.path}: {fault.text}" + _NO_YES * fault.deny_unknown)
        return lines

    def project_allows(self) -> str | None:
        """The note shown at start when the project's file allows tools, else None."""
        if self.withheld:
            return (
                f"project settings {self.project_file} have allow rules you have not approved: "
                f"{', '.join(safe_line(r.pattern) for r in self.withheld)}; they do not apply "
                "until you do (cat-code project approve); its deny rules apply"
            )
        allowed = [r.pattern for r in self.rules if r.source == "project" and r.effect == "allow"]
        if not allowed:
            return None
        return (
            f"project settings {self.project_file} allow without asking: {', '.join(allowed)} "
            "(a project's allow rules cover MCP tools only, never built-in tools such as shell)"
        )

    def find(self, effect: Effect, name: str, server: str | None = None) -> Rule | None:
        """The first rule of ``effect`` covering ``name`` (see `Rule.matches`); a project
        allow rule never covers a built-in tool (``server`` None: not an MCP tool)."""
        for rule in self.rules:
            if rule.effect != effect:
                continue
            if effect == "allow" and rule.source == "project" and server is None:
                continue
            if rule.matches(name, server):
                return rule
        return None

    def remember(self, pattern: str) -> str | None:
        """Save an ``allow`` rule to the user's file; a warning when it lasts only for this
        session (no file, a broken one, or a failed write)."""
        if any(r.effect == "allow" and r.pattern == pattern for r in self.rules):
            return None
        problem = self._save(pattern)
        if problem is None:
            self.reload()
            return None
        self._session.append(Rule(pattern, "allow", "session"))
        self.reload()
        return f"could not save the rule {pattern!r} ({problem}); it holds for this session only"

    def _save(self, pattern: str) -> str | None:
        path = self.user_file
        if path is None:
            return "no settings file"
        if path in self.problems:
            return f"{path} {self.problems[path]}"

        def add(settings: Settings) -> None:
            block = settings.setdefault("permissions", {})
            if not isinstance(block, dict):
                raise SettingsError(path, '"permissions" is not an object')
            allow = block.setdefault("allow", [])
            if not isinstance(allow, list):
                raise SettingsError(path, '"permissions.allow" is not a list')
            if pattern not in allow:
                allow.append(pattern)

        try:
            update_settings(path, add)
        except SettingsError as exc:
            return str(exc)
        return None

    def remove(self, spec: str) -> str:
        """Remove one rule — by its number in `describe`, or by its text — from the user's
        file (or from this session); what was done, as one line. `RuleError` otherwise."""
        self.reload()
        spec = spec.strip()
        if not spec:
            raise RuleError("usage: /permissions remove RULE (or its number from /permissions)")
        if spec.isdigit():
            number = int(spec)
            if not 1 <= number <= len(self.rules):
                raise RuleError(f"there is no rule {number} (/permissions lists {len(self.rules)})")
            targets = [self.rules[number - 1]]
        else:
            targets = [r for r in self.rules if r.pattern == spec]
            if not targets:
                raise RuleError(f"no permission rule {spec!r} (/permissions lists them)")
            if len({r.effect for r in targets}) > 1:
                numbers = ", ".join(
                    f"{n} ({r.effect})" for n, r in enumerate(self.rules, 1) if r.pattern == spec
                )
                raise RuleError(
                    f"{spec!r} is both an allow and a deny rule (numbers {numbers}): "
                    "say which with /permissions remove N"
                )
        removable = [r for r in targets if r.source != "project"]
        if not removable:
            project = targets[0]
            raise RuleError(
                f"{project.pattern!r} comes from the project's {project.path}, which cat-code "
                "only reads; edit that file to remove it"
            )
        for rule in removable:
            if rule.source == "session":
                self._session = [r for r in self._session if r != rule]
            else:
                self._unsave(rule)
        self.reload()
        effects = " and ".join(sorted({r.effect for r in removable}))
        where = removable[0].origin
        note = f"removed {effects} rule {removable[0].pattern!r} ({where})"
        if len(removable) < len(targets):
            note += "; the project's rule of that name stays (its file is read-only here)"
        return note

    def _unsave(self, rule: Rule) -> None:
        path = rule.path
        assert path is not None
        if path in self.problems:
            raise RuleError(f"cannot change {path}: it {self.problems[path]}")

        def drop(settings: Settings) -> None:
            block = settings.get("permissions")
            entries = block.get(rule.effect) if isinstance(block, dict) else None
            if isinstance(entries, list):
                block[rule.effect] = [e for e in entries if e != rule.pattern]  # type: ignore[index]

        try:
            update_settings(path, drop)
        except SettingsError as exc:
            raise RuleError(f"could not remove {rule.pattern!r}: {exc}") from None

    def describe(self) -> str:
        """The rules, numbered, with where each comes from (what ``/permissions`` shows)."""
        self.reload()
        lines = []
        if not self.rules:
            lines.append("permission rules: none")
        else:
            lines.append("permission rules (deny wins over allow and over --yes):")
            width = max(len(r.pattern) for r in self.rules)
            for number, rule in enumerate(self.rules, 1):
                where = rule.origin
                if rule.source == "project":
                    where += " (project, read-only here"
                    where += "; MCP tools only)" if rule.effect == "allow" else ")"
                lines.append(
                    f"  {number:>2}. {rule.effect:<5}  {rule.pattern.ljust(width)}  {where}"
                )
        lines.extend(f"  ! {warning}" for warning in self.warnings())
        if (withheld := self.project_allows()) is not None and self.withheld:
            lines.append(f"  ! {withheld}")
        lines.append("  " + self._files_line())
        lines.append(
            "  a project's allow rules cover MCP tools (mcp__…) only, never built-in tools such "
            "as shell; its deny rules cover every tool"
        )
        lines.append("  /permissions remove RULE (or its number) removes one from your file")
        return "\n".join(lines)

    def _files_line(self) -> str:
        """Which settings files the rules come from, naming only files that exist (a
        missing user file is where "always" answers will go; a missing project file is
        just absent)."""
        user, project = self.user_file, self.project_file
        found = []
        if user is not None and user.is_file():
            found.append(f"{user} (yours)")
        if project is not None and project.is_file():
            found.append(f"{project} (the project's)")
        parts = ["read from " + " and ".join(found)] if found else []
        if user is not None and not user.is_file():
            parts.append(f"your rules are saved to {user} (not created yet)")
        if project is None or not project.is_file():
            parts.append("no project settings file found")
        return "; ".join(parts)
