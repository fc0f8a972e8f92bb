"""The system prompt: who the agent is, where it works, and what each MCP server says.

Servers may send ``instructions`` (at ``initialize`` in the handshake era, in
``server/discover`` in the 2026-07-28 era); they are appended, each cut to
`MAX_INSTRUCTIONS_CHARS` so one verbose server cannot take over the context. The
prompt is rebuilt for each model call, so servers that connect, reconnect or go away
mid-session are followed.
"""

from __future__ import annotations

import logging
import platform
from collections.abc import Mapping
from pathlib import Path

logger = logging.getLogger(__name__)

MAX_INSTRUCTIONS_CHARS = 2000

BASE_PROMPT = """\
You are cat-code, a coding agent working in the user's terminal.
Working directory: {cwd}
Platform: {platform}

Use the tools to look at files, run commands and call services instead of guessing. \
Tools named mcp__<server>__<tool> come from MCP servers the user configured. A tool \
result that starts with "Error:" failed; read it and adapt rather than repeating the \
same call. Answer concisely; your text is shown in a terminal as Markdown."""


def build_system_prompt(cwd: Path, instructions: Mapping[str, str] | None = None) -> str:
    """The system prompt for ``cwd``, with each server's instructions (server → text)."""
    text = BASE_PROMPT.format(cwd=cwd, platform=f"{platform.system()} {platform.release()}")
    for server, note in (instructions or {}).items():
        note = note.strip()
        if not note:
            continue
        if len(note) > MAX_INSTRUCTIONS_CHARS:
            note = note[:MAX_INSTRUCTIONS_CHARS] + " …[cut]"
        text += f"\n\nInstructions from MCP server '{server}':\n{note}"
    return text
