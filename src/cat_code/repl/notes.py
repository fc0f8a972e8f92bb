"""How the REPL shows the session's notes: between outputs, never through what is typed.

The queue's listener may run on any thread (a job's watcher); it only schedules
`NoteDisplay.arrived` on the REPL's loop. There, while the prompt is up, the notes are
printed at once: the prompt runs under ``patch_stdout``, so the line lands above it and
the prompt is drawn again with what the user was typing. While a turn runs they wait for
the next boundary (`show`, called between the model's outputs and after the turn), so a
streamed answer is never cut in two, and notes with the same key fold meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from cat_code.host.notifications import Note, NotificationQueue, Priority

_STYLES = {Priority.HIGH: "yellow", Priority.NORMAL: "cyan", Priority.LOW: "bright_black"}


class NoteDisplay:
    """Prints ``queue``'s notes on ``console`` when nothing else is being written."""

    def __init__(
        self, console: Console, queue: NotificationQueue, busy: Callable[[], bool]
    ) -> None:
        self.console = console
        self.queue = queue
        #: True while a turn writes to the terminal: the notes wait for a boundary.
        self.busy = busy
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: Callable[[], None] | None = None

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Listen to the queue; notes are handled on ``loop``."""
        self._loop = loop
        self._stop = self.queue.listen(self._posted)

    def detach(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None

    def _posted(self, note: Note) -> None:
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: we are exiting
                loop.call_soon_threadsafe(self.arrived)

    def arrived(self) -> None:
        if not self.busy():
            self.show()

    def show(self) -> None:
        """Print every waiting note now (a boundary between outputs)."""
        for note in self.queue.take_for_user():
            self.console.print(Text(f"◆ {note.text}", style=_STYLES[note.priority]))


__all__ = ["NoteDisplay"]
