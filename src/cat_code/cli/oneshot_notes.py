"""How ``-p`` shows the session's notes: on stderr, and as stream-json lines.

The run drains the queue between outputs (before each model request, after each set of
tool results, at the end), so notes posted meanwhile fold by key first. In text and json
mode each note is one ``cat-code: ...`` line on stderr; stream-json adds a
``{"type": "system", "subtype": "notification", ...}`` line on stdout. Everything goes
through `safe_text` / `safe_json`: a note may carry a server's or a command's words.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from cat_code.base.safe_text import safe_text
from cat_code.host.notifications import NotificationQueue


class NotePrinter:
    """Drains ``queue`` for the user of a ``-p`` run."""

    def __init__(self, queue: NotificationQueue, line: Callable[[dict[str, Any]], None]) -> None:
        self.queue = queue
        #: Writes one stream-json line (a no-op in the other formats).
        self.line = line

    def drain(self) -> None:
        for note in self.queue.take_for_user():
            say(f"cat-code: {note.text}")
            self.line({"type": "system", "subtype": "notification", **note.to_json()})


def say(text: str) -> None:
    try:
        sys.stderr.write(safe_text(text) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed stderr: the note is not worth failing over
        pass


__all__ = ["NotePrinter"]
