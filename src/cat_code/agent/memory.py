"""Memory files: the project's standing instructions, read into the system prompt.

`load_memory` finds, in this order: ``$CAT_CODE_HOME/AGENTS.md`` (the user's, for every
project), then ``AGENTS.md`` in each folder from the git root down to the working
directory (outside a repository: the working directory only). Where a folder has no
``AGENTS.md`` but a ``CLAUDE.md``, that is read instead, so a project set up for Claude
Code works as it is. Each file is cut at `MAX_MEMORY_CHARS`; one that cannot be read is
skipped with a log line. Each carries its `MemoryScope`, so the prompt says whose it is:
the home one is the user's, the others came with the project. Files are read once, when
a session starts (``/memory`` lists them); they are not watched.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from pathlib import Path

from cat_code.tools.builtin import git_root

logger = logging.getLogger(__name__)

MEMORY_FILE = "AGENTS.md"
#: Read where a folder has no AGENTS.md (Claude Code's name for the same file).
FALLBACK_FILE = "CLAUDE.md"
#: One memory file's most characters in the prompt (≈10k tokens).
MAX_MEMORY_CHARS = 40_000


class MemoryScope(enum.Enum):
    """Whose a memory file is: the user's own (``$CAT_CODE_HOME``), or the project's (it
    came with the repository, whoever wrote it)."""

    USER = "user"
    PROJECT = "project"


@dataclass(frozen=True, slots=True)
class MemoryFile:
    path: Path
    text: str
    #: The file was longer than `MAX_MEMORY_CHARS` and was cut.
    cut: bool = False
    scope: MemoryScope = MemoryScope.PROJECT


def memory_paths(cwd: Path, home: Path) -> list[Path]:
    """The memory files that exist, in the order they go into the prompt."""
    cwd = cwd.resolve()
    found: list[Path] = []
    user = home / MEMORY_FILE
    if user.is_file():
        found.append(user)
    top = git_root(cwd) or cwd
    folders = [cwd, *cwd.parents]
    folders = list(reversed(folders[: folders.index(top) + 1]))
    for folder in folders:
        for name in (MEMORY_FILE, FALLBACK_FILE):
            candidate = folder / name
            if candidate.is_file():
                if candidate.resolve() not in {p.resolve() for p in found}:
                    found.append(candidate)
                break
    return found


def load_memory(cwd: Path, home: Path) -> list[MemoryFile]:
    """The memory files for a session in ``cwd`` (see the module docstring)."""
    loaded = []
    user = home / MEMORY_FILE
    for path in memory_paths(cwd, home):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read(MAX_MEMORY_CHARS + 1)
        except OSError as exc:
            logger.warning("cannot read the memory file %s: %s", path, exc)
            continue
        cut = len(text) > MAX_MEMORY_CHARS
        scope = MemoryScope.USER if path == user else MemoryScope.PROJECT
        loaded.append(MemoryFile(path, text[:MAX_MEMORY_CHARS], cut, scope))
    return loaded


def describe_memory(files: list[MemoryFile]) -> str:
    """What ``/memory`` shows."""
    if not files:
        return (
            f"memory files: none (cat-code reads {MEMORY_FILE} from the git root down to the "
            f"working directory, and $CAT_CODE_HOME/{MEMORY_FILE}; {FALLBACK_FILE} where no "
            f"{MEMORY_FILE} is beside it)"
        )
    lines = ["memory files in the system prompt:"]
    for memory in files:
        size = f"{len(memory.text):,} characters" + (" (cut)" if memory.cut else "")
        lines.append(f"  {memory.path}  {size}")
    return "\n".join(lines)
