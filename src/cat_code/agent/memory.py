"""Memory files: the project's standing instructions, read into the system prompt.

`load_memory` finds, in this order: ``$CAT_CODE_HOME/AGENTS.md`` (the user's, for every
project), then ``AGENTS.md`` in each folder from the git root down to the working
directory (outside a repository: the working directory only). The git root is the
settings search's (`cat_code.host.state.settings.project_root`): a ``.git`` of the user's
own, so one that another user left in a shared parent (``/tmp``) brings no memory file.
Where a folder has no
``AGENTS.md`` but a ``CLAUDE.md``, that is read instead, so a project set up for Claude
Code works as it is. Each file is cut at `MAX_MEMORY_CHARS`. Each carries its
`MemoryScope`, so the prompt says whose it is: the home one is the user's, the others
came with the project. Files are read once, when a session starts (``/memory`` lists
them); they are not watched.

A memory file passes read_file's checks, judged by its real path (every link and linked
parent resolved): a project's must stay inside the repository (git root, else the
working directory) and never reach ``$CAT_CODE_HOME`` or a file the tools protect (a hard
link too); the user's may live anywhere but must not be another file of the home; it must
be a regular file, read non-blocking and capped (`cat_code.base.files.read_bounded`). A
refused one keeps its place with a `MemoryRefusal` (``/memory`` lists it, the prompt
leaves it out) and is named in one warning.
"""

from __future__ import annotations

import enum
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from cat_code.base.files import UnreadableFile, read_bounded
from cat_code.base.safe_text import safe_line
from cat_code.host.state.settings import project_root

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


class MemoryProblem(enum.Enum):
    """Why a memory file is refused (the value is how messages say it)."""

    #: It leads (through a link, or a linked parent) out of the repository.
    OUTSIDE = "it leads outside the repository"
    #: It leads to one of cat-code's own files (tokens, settings, sessions...).
    PROTECTED = "it leads to one of cat-code's own files"
    #: A folder, FIFO, device or socket (``/dev/zero``): never opened for reading.
    NOT_REGULAR = "not a regular file"
    UNREADABLE = "cannot be read"


@dataclass(frozen=True, slots=True)
class MemoryRefusal:
    problem: MemoryProblem
    #: More on it, with its leading space: `` (/proc/self/environ)``.
    detail: str = ""


@dataclass(frozen=True, slots=True)
class MemoryFile:
    path: Path
    text: str
    #: The file was longer than `MAX_MEMORY_CHARS` and was cut.
    cut: bool = False
    scope: MemoryScope = MemoryScope.PROJECT
    #: Why it was not read (then ``text`` is empty); None for a file in the prompt.
    refused: MemoryRefusal | None = None


def real_path(path: Path) -> Path:
    """``path`` with every link and ``..`` resolved, as far as they exist."""
    return Path(os.path.realpath(path))


def memory_paths(cwd: Path, home: Path) -> list[Path]:
    """The memory files that are there (a link or a special file too: `load_memory`
    judges them), in the order they go into the prompt."""
    cwd = cwd.resolve()
    found: list[Path] = []
    user = home / MEMORY_FILE
    if os.path.lexists(user):
        found.append(user)
    top = project_root(cwd)
    folders = [cwd, *cwd.parents]
    folders = list(reversed(folders[: folders.index(top) + 1]))
    for folder in folders:
        for name in (MEMORY_FILE, FALLBACK_FILE):
            candidate = folder / name
            if os.path.lexists(candidate):
                if real_path(candidate) not in {real_path(p) for p in found}:
                    found.append(candidate)
                break
    return found


def load_memory(cwd: Path, home: Path) -> list[MemoryFile]:
    """The memory files for a session in ``cwd`` (see the module docstring); a refused
    one is in the list with its `MemoryRefusal` and no text, and named in one warning."""
    loaded = []
    user = home / MEMORY_FILE
    top = real_path(project_root(cwd.resolve()))
    for path in memory_paths(cwd, home):
        scope = MemoryScope.USER if path == user else MemoryScope.PROJECT
        refusal, text = _read(path, scope, top, home)
        if refusal is not None:
            logger.warning(
                "memory file %s not used: %s", path, refusal.problem.value + refusal.detail
            )
            loaded.append(MemoryFile(path, "", False, scope, refusal))
            continue
        cut = len(text) > MAX_MEMORY_CHARS
        loaded.append(MemoryFile(path, text[:MAX_MEMORY_CHARS], cut, scope))
    return loaded


def _read(
    path: Path, scope: MemoryScope, top: Path, home: Path
) -> tuple[MemoryRefusal | None, str]:
    """``path``'s text, or why it is refused (see the module docstring)."""
    from cat_code.host.state.home import private_files

    real = real_path(path)
    own_home = real_path(home)
    if scope is MemoryScope.USER:
        # The user's own file may live anywhere (dotfiles), but not be another home file.
        if real.is_relative_to(own_home) and real != own_home / MEMORY_FILE:
            return MemoryRefusal(MemoryProblem.PROTECTED, f" ({real})"), ""
    else:
        # The tools' own check too (by inode: a hard link to the token store), for this home.
        guarded = private_files({"CAT_CODE_HOME": str(home)})
        if real.is_relative_to(own_home) or guarded.covers(path):
            return MemoryRefusal(MemoryProblem.PROTECTED, f" ({real})"), ""
        if not real.is_relative_to(top):
            return MemoryRefusal(MemoryProblem.OUTSIDE, f" ({real})"), ""
    try:
        # By the real path just judged, not through the link the repository named.
        data = read_bounded(real, MAX_MEMORY_CHARS * 4 + 4, cut=True)
    except UnreadableFile as exc:
        return MemoryRefusal(MemoryProblem.NOT_REGULAR, f" ({exc.detail})"), ""
    except OSError as exc:
        return MemoryRefusal(MemoryProblem.UNREADABLE, f" ({exc.strerror or exc})"), ""
    # Four bytes a character at most: past the cap in bytes is past it in characters.
    return None, data.decode("utf-8", errors="replace")


def describe_memory(files: list[MemoryFile]) -> str:
    """What ``/memory`` shows."""
    if not files:
        return (
            f"memory files: none (cat-code reads {MEMORY_FILE} from the git root down to the "
            f"working directory, and $CAT_CODE_HOME/{MEMORY_FILE}; {FALLBACK_FILE} where no "
            f"{MEMORY_FILE} is beside it)"
        )
    used = [m for m in files if m.refused is None]
    lines = ["memory files in the system prompt:" if used else "memory files: none used"]
    for memory in used:
        size = f"{len(memory.text):,} characters" + (" (cut)" if memory.cut else "")
        lines.append(f"  {safe_line(str(memory.path))}  {size}")
    refused = [m for m in files if m.refused is not None]
    if refused:
        lines.append("refused (not in the system prompt):")
    for memory in refused:
        assert memory.refused is not None
        why = memory.refused.problem.value + memory.refused.detail
        lines.append(f"  {safe_line(str(memory.path))}  {safe_line(why)}")
    return "\n".join(lines)
