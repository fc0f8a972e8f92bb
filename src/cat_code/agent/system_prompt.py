"""The system prompt: who the agent is, where it works, how to use its file tools, the
memory files (AGENTS.md), what each MCP server says, the skills the servers offer (named,
not loaded), and the user's ``--append-system-prompt``.

Servers may send ``instructions`` (at ``initialize`` in the handshake era, in
``server/discover`` in the 2026-07-28 era); they are appended, each cut to
`MAX_INSTRUCTIONS_CHARS` so one verbose server cannot take over the context. The
prompt is rebuilt for each model call, so servers that connect, reconnect or go away
mid-session are followed.
"""

from __future__ import annotations

import logging
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path

from cat_code.agent.memory import MemoryFile, MemoryScope

logger = logging.getLogger(__name__)

MAX_INSTRUCTIONS_CHARS = 2000

BASE_PROMPT = """\
You are cat-code, a coding agent working in the user's terminal.
Working directory: {cwd}
Platform: {platform}

Use the tools to look at files, run commands and call services instead of guessing. \
Tools named mcp__<server>__<tool> come from MCP servers the user configured. A tool \
result that starts with "Error:" failed; read it and adapt rather than repeating the \
same call. Answer concisely; your text is shown in a terminal as Markdown.

Working with files:
- Find files with glob (e.g. **/*.py) and search their contents with grep; do not use \
find, grep, rg, cat, head or sed in the shell for that.
- Read a file with read_file before you change it; edit_file and write_file refuse a \
file you have not read, or one that changed since you read it (then read it again).
- Prefer edit_file to change part of a file: old_string must be copied exactly from the \
file (without read_file's line numbers) and occur once, so include enough surrounding \
lines. Use write_file only for new files or a complete rewrite.
- Keep to the style of the code around you. Do not create files the task does not need."""


def build_system_prompt(
    cwd: Path,
    instructions: Mapping[str, str] | None = None,
    *,
    memory: Sequence[MemoryFile] = (),
    append: str | None = None,
    skills: str = "",
    guidance: Sequence[str] = (),
) -> str:
    """The system prompt for ``cwd``: ``guidance`` on using the tools, the memory files
    (each with its path), each server's instructions (server → text), the servers'
    ``skills`` (a block naming each skill and what it is for), then ``append``
    (``--append-system-prompt``)."""
    text = BASE_PROMPT.format(cwd=cwd, platform=f"{platform.system()} {platform.release()}")
    for paragraph in guidance:  # how to use tools beyond the file tools (tasks, ...)
        text += f"\n\n{paragraph}"
    for memory_file in memory:
        if memory_file.refused is None and memory_file.text.strip():
            cut = " (cut)" if memory_file.cut else ""
            whose = "the user's" if memory_file.scope is MemoryScope.USER else "the project's"
            text += (
                f"\n\nInstructions from {memory_file.path}{cut} ({whose} memory file; "
                f"follow them):\n{memory_file.text.strip()}"
            )
    for server, note in (instructions or {}).items():
        note = note.strip()
        if not note:
            continue
        if len(note) > MAX_INSTRUCTIONS_CHARS:
            note = note[:MAX_INSTRUCTIONS_CHARS] + " …[cut]"
        text += f"\n\nInstructions from MCP server '{server}':\n{note}"
    if skills:
        text += f"\n\n{skills}"
    if append and append.strip():
        text += f"\n\n{append.strip()}"
    return text
