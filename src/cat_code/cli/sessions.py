"""``cat-code sessions [--json]``: the conversations saved for this folder, newest first.

Text: one line per session (id, last use in local time, turns, the first prompt cut to
one line), or a note on stderr when there are none. ``--json``: an array of objects
(``id``, ``last_use`` as ISO 8601 UTC, ``turns``, ``first_prompt``, ``path``); ``[]``
when there are none. Prompts are untrusted text: they go through `safe_line`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from cat_code.agent.history import LoadedSession, list_sessions
from cat_code.host.safe_text import safe_json, safe_line

logger = logging.getLogger(__name__)

#: Longest first prompt shown in the text listing.
PROMPT_CHARS = 60


def session_record(session: LoadedSession) -> dict[str, Any]:
    """One session as ``--json`` shows it."""
    return {
        "id": session.id,
        "session_id": session.id,
        "last_use": session.last_use.isoformat(timespec="seconds"),
        "turns": session.turns,
        "first_prompt": session.first_prompt,
        "path": str(session.path),
    }


def session_line(session: LoadedSession, *, prompt_chars: int = PROMPT_CHARS) -> str:
    """One session as the text listing (and the REPL's /resume) shows it."""
    when = session.last_use.astimezone().strftime("%Y-%m-%d %H:%M")
    prompt = " ".join(session.first_prompt.split())
    if len(prompt) > prompt_chars:
        prompt = prompt[: prompt_chars - 1] + "…"
    turns = f"{session.turns} turn{'' if session.turns == 1 else 's'}"
    return safe_line(f"{session.id}  {when}  {turns:>9}  {prompt}")


def run_sessions_command(args: argparse.Namespace) -> int:
    sessions = list_sessions(Path.cwd())
    if args.json:
        records = [session_record(s) for s in sessions]
        sys.stdout.write(safe_json(records) + "\n")
        return 0
    if not sessions:
        sys.stderr.write("no saved sessions in this folder\n")
        return 0
    for session in sessions:
        sys.stdout.write(session_line(session) + "\n")
    return 0
