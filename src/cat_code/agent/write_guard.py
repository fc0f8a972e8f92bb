"""Writes that no blanket approval covers: outside the workspace, or to a trust-bearing file.

``--yes``, an ``--allow-tool`` glob, an ``allow`` rule or an "always" answer for a tool that
changes files (not read-only, naming them in `Tool.file_paths`: ``write_file``,
``edit_file``) covers the workspace only: the working directory and the ``--add-dir``
folders, compared by real path (every link and parent resolved, so ``out/x`` with
``out`` → ``/elsewhere`` is a write to ``/elsewhere/x``). A write whose real target lies
outside the workspace, or that changes one of the project's trust-bearing files
(`TRUST_FILES`: what they say decides which servers start and which tools run unasked), is
asked about every time; with nobody to ask (``-p``) it is refused, unless a rule names
that path: ``write_file(/abs/path)`` or a glob like ``write_file(/tmp/out/*)``, matched
against the tool's name and the real target (`FileTool.permission_subjects`), in the
user's settings or an ``--allow-tool``.

Trust-bearing is decided on the write's REAL target (every link resolved, hard links by
inode), never on the name the model wrote alone: a write is guarded when the name or its
target is one of `TRUST_FILES`, lies under a repository's ``.git`` (a ``core.fsmonitor``
in ``.git/config`` runs code at the next ``git status``), or is the same file as one of the
session's trust-bearing locations (`trust_locations`: each root's ``.mcp.json``,
``.cat-code/settings*.json`` and ``.git`` — so ``servers.json`` with ``.mcp.json`` →
``servers.json`` is guarded —, the ``--mcp-config`` files, and the user-level files other
hosts' servers are imported from). A project's rules never name a path for a write
(its allow rules never cover built-in tools). cat-code's own files (``$CAT_CODE_HOME``) are
not decided here: no tool touches them at all (`cat_code.tools.builtin.Protected`).
"""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cat_code.base.files import same_file
from cat_code.tools.base import Tool
from cat_code.tools.builtin import real_path

if TYPE_CHECKING:  # permissions imports this module
    from cat_code.agent.permissions import RuleBook

#: The project's files whose content widens what cat-code does once written: its servers
#: (``.mcp.json``) and its settings (``.cat-code/settings*.json``), as (folder, name);
#: a folder of None matches a file of that name in any folder.
TRUST_FILES: tuple[tuple[str | None, str], ...] = (
    (None, ".mcp.json"),
    (".cat-code", "settings.json"),
    (".cat-code", "settings.local.json"),
)


class Why(enum.Enum):
    """Why a write is guarded."""

    OUTSIDE = "outside the working directory and the --add-dir folders"
    TRUST_FILE = "a trust-bearing file (servers, permission rules, a repository's .git)"


@dataclass(frozen=True, slots=True)
class GuardedWrite:
    """One path of a call that only the user, or a rule naming it, may approve."""

    path: Path
    #: Where ``path`` really leads (what is written).
    target: Path
    why: Why

    def describe(self) -> str:
        """``path`` (→ its real target when a link takes it elsewhere) and why it is guarded."""
        return f"{where(self.path)}, {self.why.value}"


def where(path: Path) -> str:
    """``path`` as a question or a refusal names it: with where it leads when a link takes
    it elsewhere (``/p/sl.txt → /etc/passwd``), since that is what is read or written."""
    target = real_path(path)
    return str(path) if target == path else f"{path} → {target}"


def trust_locations(roots: Iterable[Path], extra: Iterable[Path] = ()) -> list[Path]:
    """The trust-bearing locations of a session working in ``roots`` (its working directory,
    its git root, the ``--add-dir`` folders): each one's ``.mcp.json``, ``.cat-code``
    settings and ``.git``; the ``extra`` files (``--mcp-config``); and the user-level files
    ``mcp import`` reads (``~/.claude.json``, Claude Desktop's, Cursor's, VS Code's and
    Gemini's user files)."""
    from cat_code.host.config.imports import user_source_files

    found = list(extra)
    for root in roots:
        found.append(root / ".git")
        found += [root / p / f if p else root / f for p, f in TRUST_FILES]
    try:
        found += user_source_files(Path.home())
    except RuntimeError:  # no home folder can be determined: no user files either
        pass
    return found


def is_trust_file(path: Path, locations: Iterable[Path] = ()) -> bool:
    """Whether ``path`` (or where it really leads) is trust-bearing: one of `TRUST_FILES`,
    under a ``.git`` folder, or the same file as (or under) one of ``locations``
    (`trust_locations`), compared by real path and by inode."""
    target = real_path(path)
    for candidate in (path, target):
        name, folder = candidate.name.casefold(), candidate.parent.name.casefold()
        if any(name == f and p in (None, folder) for p, f in TRUST_FILES):
            return True
        if ".git" in (part.casefold() for part in candidate.parts):
            return True
    for location in locations:
        real = real_path(location)
        if target == real or target.is_relative_to(real) or same_file(target, real):
            return True
    return False


def guarded_writes(
    tool: Tool,
    arguments: dict[str, Any],
    workspace: Callable[[], Iterable[Path]] | None,
    trusted: Callable[[], Iterable[Path]] | None = None,
) -> list[GuardedWrite]:
    """The paths this call would change that no blanket approval covers (none for a
    read-only tool). ``workspace``: `Permissions.workspace`, the folders writes may go to
    (None: anywhere); ``trusted``: `Permissions.trusted`, the trust-bearing locations."""
    if tool.read_only:
        return []
    folders = None if workspace is None else [real_path(f) for f in workspace()]
    locations = [] if trusted is None else list(trusted())
    found = []
    for path in tool.file_paths(arguments):
        target = real_path(path)
        if is_trust_file(path, locations):
            found.append(GuardedWrite(path, target, Why.TRUST_FILE))
        elif folders is not None and not any(target.is_relative_to(f) for f in folders):
            found.append(GuardedWrite(path, target, Why.OUTSIDE))
    return found


def naming_rule(
    tool: Tool, arguments: dict[str, Any], allow_patterns: Iterable[str], rules: RuleBook
) -> str | None:
    """The first ``--allow-tool`` pattern or allow rule (the user's, never a project's) that
    names a path (``tool(path-glob)``) and covers every path of the call by its real target;
    None when there is none, or the call names no path."""
    subjects = [f"{tool.name}({real_path(path)})" for path in tool.file_paths(arguments)]
    if not subjects:
        return None
    own = [r.pattern for r in rules.rules if r.effect == "allow" and r.source != "project"]
    for pattern in [*allow_patterns, *own]:
        if "(" in pattern and all(fnmatch.fnmatchcase(s, pattern) for s in subjects):
            return pattern
    return None


def refusal(tool: Tool, guarded: list[GuardedWrite]) -> str:
    """What the model reads when ``-p`` cannot ask about a guarded write."""
    first = guarded[0]
    what = "; ".join(write.describe() for write in guarded)
    return (
        f"Error: '{tool.name}' writes {what}, which only the user may approve, and this "
        "non-interactive session cannot ask (--yes and allow rules cover writes inside the "
        "working directory only). The user can allow it with --add-dir (for a folder outside), "
        f"or with a permission rule naming the path, such as --allow-tool "
        f"'{tool.name}({first.target})'."
    )


def question_notes(
    tool: Tool, arguments: dict[str, Any], workspace: Callable[[], Iterable[Path]] | None
) -> list[str]:
    """Lines for the approval question: where each path really leads when a link takes
    it elsewhere, and why a guarded write is asked about whatever was answered before.
    ``workspace``: `Permissions.workspace`."""
    notes = []
    guarded = {write.path: write for write in guarded_writes(tool, arguments, workspace)}
    for path in tool.file_paths(arguments):
        target = real_path(path)
        if path in guarded:
            notes.append(
                f"{target} is {guarded[path].why.value}: asked every time "
                '("always" covers the working directory only)'
            )
        elif target != path:
            notes.append(f"{path} leads to {target}")
    return notes


__all__ = [
    "TRUST_FILES",
    "GuardedWrite",
    "Why",
    "guarded_writes",
    "is_trust_file",
    "naming_rule",
    "question_notes",
    "refusal",
    "trust_locations",
    "where",
]
