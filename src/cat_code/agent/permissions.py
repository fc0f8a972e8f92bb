"""Which tool calls may run: read-only tools freely, the rest with the user's approval.

Order of the rules: a ``deny`` rule matching the registered name — or one of the names
the tool gives for a call (`Tool.permission_subjects`: the resource tools name the
server they would read, as ``mcp__<server>__*``) — refuses, without asking and whatever
else says yes (read-only, ``--yes``, an allow rule); the mode rules next (plan mode
refuses changes whatever allows them, `permission_modes`); a read-only tool runs — a file tool
only when every path it names (`Tool.file_paths`) is inside the session's ``workspace``
(the working directory, the ``--add-dir`` folders; outside, it is decided like any
other call); ``--yes``
approves everything, unless a settings file's deny list could not be read (then nobody
knows what is denied, so ``--yes`` approves nothing that session); an ``--allow-tool``
glob approves; an ``allow`` rule approves; otherwise the asker (the REPL's question)
decides, and with no asker (one-shot mode) the call is refused. A refusal is never an
exception: the loop turns it into an error result the model reads, worded so the model
knows why and what the user can do; a refusal by a rule also carries a short ``notice``
for the user.

First, a call its tool refuses (`Tool.refusal`: cat-code's own files) is refused; a write
outside the workspace or to a trust-bearing file asks unless a rule names it (`write_guard`).

Rules (`RuleBook`) are tool names or globs read from the user's
``$CAT_CODE_HOME/settings.json`` and the project's ``.cat-code/settings.json`` (the
nearest up to the git root, see `project_settings_path`), as
``{"permissions": {"allow": [...], "deny": [...]}}``. A server rule ``mcp__<server>__*``
covers exactly that server's tools (by the tool's owner, so server ``a`` never covers
server ``a__b``'s); other globs match the registered name.

A project file comes with whatever was cloned, so it is trusted less: its ``deny`` rules
cover everything, always; its ``allow`` rules apply only once the user approved them as
written (`cat_code.host.config.project_trust`; ``--trust-project``: for one run), and even then
only ever cover MCP tools, never built-in ones (``shell`` and the like), whatever the glob.
"Always" answers are saved to the user's file; only that file is ever written. ``allow``
and ``deny`` are read separately and entry by entry: a bad entry is named in a warning and
skipped, the others hold. A file
that cannot be read at all is named in a warning, left untouched, and its rules
ignored; the answers then last for this session only.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from cat_code.agent import write_guard
from cat_code.agent.permission_modes import PermissionMode, mode_ruling
from cat_code.agent.permission_rules import (
    EFFECTS as EFFECTS,
    Answer as Answer,
    Asker as Asker,
    Decision as Decision,
    Effect as Effect,
    Problem as Problem,
    Rule as Rule,
    RuleBook as RuleBook,
    RuleError as RuleError,
    Source as Source,
    ruled_server as ruled_server,
    rules_in as rules_in,
    server_of as server_of,
    server_rule as server_rule,
)
from cat_code.tools.base import Tool
from cat_code.tools.builtin import real_path

logger = logging.getLogger(__name__)


class Permissions:
    """The approval rules of one session (see the module docstring)."""

    def __init__(
        self,
        *,
        approve_all: bool = False,
        allow_patterns: Iterable[str] = (),
        asker: Asker | None = None,
        rules: RuleBook | None = None,
        workspace: Callable[[], Iterable[Path]] | None = None,
        trusted: Callable[[], Iterable[Path]] | None = None,
    ) -> None:
        self.approve_all = approve_all
        #: The trust-bearing locations (`write_guard.trust_locations`): writes always ask.
        self.trusted = trusted
        #: The folders read-only file tools read without asking (None: anywhere).
        self.workspace = workspace
        self.allow_patterns = list(allow_patterns)
        self.asker = asker
        #: No book given: no files, so "always" answers last for the session.
        self.rules = rules if rules is not None else RuleBook()
        #: Told when an "always" answer could not be saved (the REPL shows it).
        self.on_warning: Callable[[str], None] = lambda text: logger.warning("%s", text)
        #: Asked right after the deny rules: plan mode refuses whatever else allows.
        self.mode = PermissionMode.DEFAULT

    def standing_decision(
        self, tool: Tool, arguments: dict[str, Any] | None = None
    ) -> Decision | None:
        """The decision the rules make without asking, or None when the user must be asked."""
        if (refused := tool.refusal(arguments or {})) is not None:
            return Decision(False, refused)
        server = server_of(tool)
        subjects = [(tool.name, server)]
        subjects += [(name, None) for name in tool.permission_subjects(arguments or {})]
        for name, owner in subjects:
            deny = self.rules.find("deny", name, owner)
            if deny is None:
                continue
            what = tool.name if name == tool.name else f"{tool.name} ({name})"
            return Decision(
                False,
                f"Error: '{what}' is denied by the permission rule '{deny.pattern}' in "
                f"{deny.origin}, so it was not run. Do not call it again; continue without it, "
                "or tell the user that this rule blocks it (/permissions shows the rules).",
                notice=f"refused {what}: denied by rule '{deny.pattern}' ({deny.origin})",
            )
        if ruled := mode_ruling(self.mode, tool, arguments or {}, self.workspace):
            return Decision(ruled.allowed, ruled.reason, ruled.notice)
        if tool.read_only and not self.outside(tool, arguments or {}):
            return Decision(True, "read-only")
        if rule := write_guard.naming_rule(tool, arguments or {}, self.allow_patterns, self.rules):
            return Decision(True, f"allowed by {rule}, which names the path")
        if write_guard.guarded_writes(tool, arguments or {}, self.workspace, self.trusted):
            return None  # outside the workspace, or a trust-bearing file: asked every time
        if self.approve_all and not self.rules.deny_unknown:
            return Decision(True, "--yes")
        for pattern in self.allow_patterns:
            if fnmatch.fnmatchcase(tool.name, pattern):
                return Decision(True, f"--allow-tool {pattern}")
        allow = self.rules.find("allow", tool.name, server)
        if allow is not None:
            return Decision(True, f"allowed by rule {allow.pattern} ({allow.origin})")
        return None

    def outside(self, tool: Tool, arguments: dict[str, Any]) -> list[Path]:
        """The paths of this call outside the workspace (none when there is no workspace)."""
        if self.workspace is None:
            return []
        paths = tool.file_paths(arguments)
        if not paths:
            return []
        folders = [real_path(f) for f in self.workspace()]
        found = []
        for path in paths:
            target = real_path(path)
            if not any(target == f or target.is_relative_to(f) for f in folders):
                found.append(path)
        return found

    async def authorize(
        self, tool: Tool, arguments: dict[str, Any], *, hook: str | None = None
    ) -> Decision:
        """Decide one call, asking the user when the rules do not settle it. A PreToolUse
        ``hook`` saying ``allow`` settles a question, ``ask`` asks even what rules allow."""
        decision = self.standing_decision(tool, arguments)
        if decision is not None and not (hook == "ask" and decision.allowed):
            return decision
        if hook == "allow":
            return Decision(True, "allowed by a PreToolUse hook")
        if self.asker is None:
            if guarded := write_guard.guarded_writes(tool, arguments, self.workspace, self.trusted):
                return Decision(False, write_guard.refusal(tool, guarded))
            how = f"--yes or --allow-tool '{tool.name}'."
            if self.approve_all:  # --yes was given but is off: say why
                unknown = ", ".join(map(str, self.rules.deny_unknown))
                how = (
                    f"--allow-tool '{tool.name}' (--yes is off in this session: the deny "
                    f"rules of {unknown} cannot be read)."
                )
            why = "needs the user's approval"
            if tool.read_only and (outside := self.outside(tool, arguments)):
                why = (
                    f"reads {', '.join(map(write_guard.where, outside))}, outside the working "
                    "directory and the --add-dir folders, so it needs the user's approval"
                )
                how = f"--add-dir, {how}"
            return Decision(
                False,
                f"Error: '{tool.name}' {why}, and this non-interactive "
                f"session cannot ask. The user can allow it with {how}",
            )
        answer = await self.asker(tool, arguments)
        if answer in (Answer.ALWAYS_TOOL, Answer.ALWAYS_SERVER):
            server = server_of(tool)
            if answer is Answer.ALWAYS_SERVER and server is not None:
                warning = self.rules.remember(server_rule(server))
            else:
                warning = self.rules.remember(tool.name)
            if warning is not None:
                self.on_warning(warning)
        if answer is Answer.NO:
            return Decision(
                False,
                f"Error: the user refused to run '{tool.name}'. Do not retry the same call; "
                "continue without it or ask the user what to do instead.",
            )
        logger.debug("%s approved: %s", tool.name, answer.value)
        return Decision(True, answer.value)

    def denies_server(self, server: str) -> bool:
        """Whether a deny rule covers every tool of MCP ``server`` (its resources then too)."""
        return self.rules.find("deny", server_rule(server)) is not None


__all__ = [
    "Answer",
    "Asker",
    "Decision",
    "Permissions",
    "Problem",
    "Rule",
    "RuleBook",
    "RuleError",
    "ruled_server",
    "server_of",
    "server_rule",
]
