"""Subagent definitions: Markdown files with a YAML frontmatter, and the built-in one.

Read from ``$CAT_CODE_HOME/agents/`` (the user's), then the project's ``.claude/agents/``
and ``.cat-code/agents/`` (the nearest folder holding either, from the working directory
up to the git root); a later source replaces an earlier definition of the same name, and
the general-purpose agent is built in under everything. Claude Code's files work as they
are: ``tools: Read, Grep`` (a comma list or a YAML list) names its tools, mapped to ours
(`CLAUDE_TOOL_NAMES`); a name we do not have is dropped with a warning.

A file is read only when it is a regular file (not a symlink, FIFO or device) of at most
`MAX_DEFINITION_BYTES` (`cat_code.base.files.read_bounded`); its YAML goes through
cat-code's one safe reader (`cat_code.base.frontmatter`: no aliases, size and depth
capped). A bad file is skipped and named in ``warnings``, never fatal. What a project
file may grant is decided where the subagent starts (`cat_code.agent.subagents.spawn`): a
definition can narrow tools and permissions, never widen them.
"""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cat_code.base.files import UnreadableFile, read_bounded
from cat_code.base.frontmatter import YamlRefused, load_yaml

logger = logging.getLogger(__name__)

#: A definition file larger than this is not one (a prompt of a few pages is ~20 kB).
MAX_DEFINITION_BYTES = 256 * 1024
AGENTS_DIR = "agents"
_FRONTMATTER = re.compile(r"---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

#: The name of the agent tool, which a definition must list to let its subagent spawn more.
AGENT_TOOL = "agent"
GENERAL_PURPOSE = "general-purpose"

#: Claude Code's tool names → ours (its files work unchanged); case-insensitive.
CLAUDE_TOOL_NAMES: dict[str, str] = {
    "read": "read_file",
    "write": "write_file",
    "edit": "edit_file",
    "multiedit": "edit_file",
    "bash": "shell",
    "grep": "grep",
    "glob": "glob",
    "ls": "glob",
    "task": AGENT_TOOL,
    "agent": AGENT_TOOL,
}


class Source(enum.Enum):
    """Where a definition comes from; a project's are repository content, trusted less."""

    BUILTIN = "built-in"
    USER = "user"
    PROJECT_CLAUDE = "project (.claude/agents)"
    PROJECT = "project (.cat-code/agents)"

    @property
    def is_project(self) -> bool:
        return self in (Source.PROJECT, Source.PROJECT_CLAUDE)


class PermissionMode(enum.IntEnum):
    """Claude Code's permission modes, from the most careful to the most permissive: a
    subagent's mode is never more permissive than its session's."""

    PLAN = 0  # read-only tools only
    DONT_ASK = 1  # what the rules do not allow is refused, never asked
    DEFAULT = 2  # as the session: rules, then the user's answer
    ACCEPT_EDITS = 3  # file edits without asking
    BYPASS = 4  # everything (the session's --yes)

    @classmethod
    def parse(cls, text: str) -> PermissionMode | None:
        return _MODES.get(text.strip().lower().replace("-", "").replace("_", ""))

    @property
    def setting(self) -> str:
        return _MODE_NAMES[self]


_MODE_NAMES = {
    PermissionMode.PLAN: "plan",
    PermissionMode.DONT_ASK: "dontAsk",
    PermissionMode.DEFAULT: "default",
    PermissionMode.ACCEPT_EDITS: "acceptEdits",
    PermissionMode.BYPASS: "bypassPermissions",
}
_MODES = {name.lower(): mode for mode, name in _MODE_NAMES.items()}


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """One kind of subagent. ``tools`` None: the parent's tools (without ``agent``)."""

    name: str
    description: str
    #: The body of the file: instructions that go into the subagent's system prompt.
    instructions: str = ""
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    #: ``provider:model``; None (or ``inherit``): the parent's model.
    model: str | None = None
    max_turns: int | None = None
    permission_mode: PermissionMode | None = None
    #: ``worktree``: run in a git worktree of its own (not available yet).
    isolation: str | None = None
    source: Source = Source.BUILTIN
    path: Path | None = None
    #: Problems found in the file that did not stop it from loading (dropped tool names).
    notes: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return self.source.value if self.path is None else f"{self.source.value}: {self.path}"


BUILTIN_AGENTS = (
    AgentDefinition(
        name=GENERAL_PURPOSE,
        description=(
            "General-purpose agent for researching complex questions, searching for code and "
            "running multi-step tasks on its own; use it when a search or a job would take "
            "many steps and only its conclusion matters."
        ),
        instructions=(
            "You are a subagent of cat-code: another agent gave you the task in the user "
            "message. Work on it with the tools you have, on your own: nobody will answer "
            "questions. When you are done, answer with what the task asks for, complete and "
            "concise; only that final message goes back."
        ),
    ),
)


@dataclass(slots=True)
class Catalogue:
    """The definitions known to a session, by name, and what was wrong with the files."""

    definitions: dict[str, AgentDefinition] = field(default_factory=dict)
    #: Definitions replaced by one of the same name from a later source.
    shadowed: list[AgentDefinition] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> AgentDefinition | None:
        return self.definitions.get(name)

    def names(self) -> list[str]:
        return list(self.definitions)

    def add(self, definition: AgentDefinition) -> None:
        old = self.definitions.pop(definition.name, None)
        if old is not None:
            self.shadowed.append(old)
        self.definitions[definition.name] = definition


def project_agent_dirs(cwd: Path) -> list[tuple[Source, Path]]:
    """The project's definition folders: the nearest level from ``cwd`` up to the git root
    (or the home folder) that holds ``.claude/agents`` or ``.cat-code/agents``."""
    home = Path.home()
    for folder in [cwd, *cwd.parents]:
        found = [
            (source, folder / sub / AGENTS_DIR)
            for source, sub in ((Source.PROJECT_CLAUDE, ".claude"), (Source.PROJECT, ".cat-code"))
            if (folder / sub / AGENTS_DIR).is_dir()
        ]
        # Home's .claude/agents is the user's Claude Code folder, not a project's.
        if found and folder != home:
            return found
        if (folder / ".git").exists() or folder == home:
            break
    return []


def load_catalogue(cwd: Path, user_dir: Path | None) -> Catalogue:
    """Every definition for a session in ``cwd`` (see the module docstring)."""
    catalogue = Catalogue()
    for builtin in BUILTIN_AGENTS:
        catalogue.add(builtin)
    sources: list[tuple[Source, Path]] = []
    if user_dir is not None:
        sources.append((Source.USER, user_dir))
    sources += project_agent_dirs(cwd)
    for source, folder in sources:
        for definition in _read_folder(folder, source, catalogue.warnings):
            catalogue.add(definition)
    return catalogue


def _read_folder(folder: Path, source: Source, warnings: list[str]) -> Iterable[AgentDefinition]:
    try:
        names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".md"))
    except FileNotFoundError:
        return
    except OSError as exc:
        warnings.append(f"{folder}: cannot list it: {exc.strerror or exc}")
        return
    for name in names:
        path = folder / name
        try:
            yield parse_definition(read_definition_file(path), source=source, path=path)
        except (OSError, ValueError) as exc:
            warnings.append(f"{path}: skipped: {exc}")


def read_definition_file(path: Path) -> str:
    """The text of a definition file: a regular file, not a symbolic link (repository
    content must not lead the read elsewhere), at most `MAX_DEFINITION_BYTES`, UTF-8."""
    if path.is_symlink():
        raise ValueError("it is a symbolic link, not a regular file")
    try:
        data = read_bounded(path, MAX_DEFINITION_BYTES)
    except UnreadableFile as exc:
        raise ValueError(f"it is {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8 text") from None


def parse_definition(
    text: str, *, source: Source = Source.USER, path: Path | None = None
) -> AgentDefinition:
    """A definition from a file's text; `ValueError` saying what is wrong."""
    match = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    if match is None:
        raise ValueError("it does not begin with a --- delimited YAML frontmatter")
    try:
        meta = load_yaml(match.group(1))
    except YamlRefused as exc:
        raise ValueError(exc.reason) from None
    if not isinstance(meta, dict):
        raise ValueError("its frontmatter is not a mapping")
    body = text.removeprefix("\ufeff")[match.end() :].strip()
    name = _required_text(meta, "name")
    if not _NAME.match(name):
        raise ValueError(f"name {name!r} must be letters, digits, '.', '_' or '-' (at most 64)")
    description = _required_text(meta, "description")
    notes: list[str] = []
    tools = _tool_list(meta.get("tools"), "tools", notes)
    disallowed = _tool_list(meta.get("disallowedTools"), "disallowedTools", notes) or ()
    model = meta.get("model")
    if model is not None and not isinstance(model, str):
        raise ValueError("model must be text (provider:model, or inherit)")
    if isinstance(model, str) and model.strip().lower() in ("", "inherit"):
        model = None
    max_turns = meta.get("maxTurns")
    if max_turns is not None and (
        isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1
    ):
        raise ValueError("maxTurns must be a whole number of at least 1")
    mode: PermissionMode | None = None
    raw_mode = meta.get("permissionMode")
    if raw_mode is not None:
        mode = PermissionMode.parse(str(raw_mode))
        if mode is None:
            choices = ", ".join(_MODE_NAMES.values())
            raise ValueError(f"permissionMode {raw_mode!r} is not one of {choices}")
    isolation = meta.get("isolation")
    if isolation is not None and not isinstance(isolation, str):
        raise ValueError("isolation must be text (worktree)")
    return AgentDefinition(
        name=name,
        description=description,
        instructions=body,
        tools=tools,
        disallowed_tools=disallowed,
        model=model.strip() if isinstance(model, str) else None,
        max_turns=max_turns,
        permission_mode=mode,
        isolation=isolation,
        source=source,
        path=path,
        notes=tuple(notes),
    )


def _required_text(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"its frontmatter has no {key!r} (required)")
    return " ".join(value.split())


def _tool_list(raw: Any, key: str, notes: list[str]) -> tuple[str, ...] | None:
    """A tool list as Claude Code writes it (``Read, Grep`` or a YAML list), in our names."""
    if raw is None:
        return None
    if isinstance(raw, str):
        items: Sequence[Any] = [part for part in raw.split(",") if part.strip()]
    elif isinstance(raw, list):
        items = raw
    else:
        raise ValueError(f"{key} must be a list of tool names")
    names: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"{key} must be a list of tool names")
        name = tool_name(item)
        if name not in names:
            names.append(name)
    return tuple(names)


def tool_name(written: str) -> str:
    """Our name for a tool as a definition writes it (Claude Code's ``Read`` is
    ``read_file``; ``Bash(git:*)`` is ``shell``, its pattern ignored); others as written."""
    bare = written.strip().split("(", 1)[0].strip()
    return CLAUDE_TOOL_NAMES.get(bare.lower(), bare)


__all__ = [
    "AGENT_TOOL",
    "BUILTIN_AGENTS",
    "CLAUDE_TOOL_NAMES",
    "GENERAL_PURPOSE",
    "MAX_DEFINITION_BYTES",
    "AgentDefinition",
    "Catalogue",
    "PermissionMode",
    "Source",
    "load_catalogue",
    "parse_definition",
    "project_agent_dirs",
    "read_definition_file",
    "tool_name",
]
