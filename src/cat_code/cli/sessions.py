"""``cat-code sessions [--json]``: the conversations saved for this folder, newest first.

Text: one line per session (id, last use in local time, turns, the first prompt cut to
one line), or a note on stderr when there are none. ``--json``: an array of objects
(``id``, ``last_use`` as ISO 8601 UTC, ``turns``, ``first_prompt``, ``path``); ``[]``
when there are none. Prompts are untrusted text: they go through `safe_line`.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from cat_code.agent.history import LoadedSession, list_sessions, session_line
from cat_code.base.safe_text import safe_json
from cat_code.cli.options import Options

logger = logging.getLogger(__name__)


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


def run_sessions_command(args: Options) -> int:
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
