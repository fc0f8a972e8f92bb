"""`NotificationQueue`: the one queue for what happens in the background.

MCP servers connected, failed, restarted or given up, a tool list changed, a background
job ended, a task unblocked, a compaction, a sign-in needed: each is a `Note` with a
`NoteKind`, a `Priority` and a ``key``. Invariants:

- A newer note with the same key replaces the older one still waiting (a flapping server
  is one line, not a hundred); it takes the newer note's place in the order.
- The user's and the model's sides are drained separately: every note waits for the user
  (the REPL shows it between outputs, ``-p`` on stderr or as a stream-json line); only a
  note ``for_model`` (a job's result) also waits for the model, which is told before its
  next request. `withdraw` takes a note back from the model's side (it read the same news
  through a tool already).
- Drained notes come highest priority first, then in the order they were posted.
- Listeners hear each post at once (the REPL prints while the prompt is up). Posting and
  draining are safe from any thread; listeners run on the poster's thread.
"""

from __future__ import annotations

import enum
import itertools
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

logger = logging.getLogger(__name__)


class NoteKind(enum.StrEnum):
    """What a note is about (stream-json's ``kind``)."""

    SERVER_CONNECTED = "server_connected"
    SERVER_FAILED = "server_failed"
    SERVER_RESTARTED = "server_restarted"
    SERVER_GAVE_UP = "server_gave_up"
    LIST_CHANGED = "list_changed"
    SIGN_IN_NEEDED = "sign_in_needed"
    JOB_ENDED = "job_ended"
    TASK_UNBLOCKED = "task_unblocked"
    COMPACTED = "compacted"


class Priority(enum.IntEnum):
    """Drained highest first."""

    LOW = 0
    NORMAL = 1
    HIGH = 2


@dataclass(frozen=True, slots=True)
class Note:
    """One thing to tell. ``text`` is for the user (one line); ``model_text``, when the
    note is ``for_model``, is what the model reads (several lines allowed)."""

    kind: NoteKind
    key: str
    text: str
    priority: Priority = Priority.NORMAL
    for_model: bool = False
    model_text: str = ""
    #: Extra fields for stream-json (a job's id and exit code, a server's name).
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The stream-json ``{"type": "system", "subtype": "notification", ...}`` fields."""
        return {
            "kind": str(self.kind),
            "key": self.key,
            "priority": self.priority.name.lower(),
            "text": self.text,
            **self.data,
        }


class NoteSink(Protocol):
    """Where a part of the runtime posts its notes (the queue, or the log without one)."""

    def post(self, note: Note) -> None: ...


class LogNotes:
    """The sink of a command with no queue (``cat-code mcp call``): notes become log lines."""

    def post(self, note: Note) -> None:
        level = logging.INFO if note.priority is Priority.LOW else logging.WARNING
        logger.log(level, "%s", note.text)


#: The one `LogNotes` (it holds no state).
LOG_NOTES = LogNotes()


class NotificationQueue:
    """The runtime's notes, waiting for the user and (some) for the model."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._order = itertools.count()
        # key → (sequence, note); insertion order does not matter, the sequence does.
        self._user: dict[str, tuple[int, Note]] = {}
        self._model: dict[str, tuple[int, Note]] = {}
        self._listeners: list[Callable[[Note], None]] = []

    def post(self, note: Note) -> None:
        """Queue ``note``, replacing a waiting one with the same key; tell the listeners."""
        with self._lock:
            number = next(self._order)
            self._user[note.key] = (number, note)
            if note.for_model:
                self._model[note.key] = (number, note)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(note)
            except Exception:  # a listener's bug must not lose the note or hurt the poster
                logger.debug("a notification listener failed", exc_info=True)

    def listen(self, listener: Callable[[Note], None]) -> Callable[[], None]:
        """Call ``listener`` on every post from now on; returns what stops that."""
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop

    def withdraw(self, key: str) -> None:
        """Take the note ``key`` back from the model's side (it knows already)."""
        with self._lock:
            self._model.pop(key, None)

    def take_for_user(self) -> list[Note]:
        """Every note waiting for the user, highest priority first; they stop waiting."""
        with self._lock:
            waiting, self._user = self._user, {}
        return _ordered(waiting)

    def take_for_model(self) -> list[Note]:
        """Every note waiting for the model, highest priority first; they stop waiting."""
        with self._lock:
            waiting, self._model = self._model, {}
        return _ordered(waiting)

    def waiting(self) -> int:
        """How many notes wait for the user."""
        with self._lock:
            return len(self._user)


def _ordered(waiting: dict[str, tuple[int, Note]]) -> list[Note]:
    return [note for _, note in sorted(waiting.values(), key=lambda p: (-p[1].priority, p[0]))]


def model_block(notes: list[Note]) -> str:
    """What the model reads of ``notes``: one tagged block, or "" for none."""
    if not notes:
        return ""
    body = "\n\n".join(note.model_text or note.text for note in notes)
    return f"<system-notification>\n{body}\n</system-notification>"


_SERVER_PRIORITY = {
    NoteKind.SERVER_CONNECTED: Priority.NORMAL,
    NoteKind.SERVER_RESTARTED: Priority.NORMAL,
    NoteKind.LIST_CHANGED: Priority.LOW,
}


def server_note(kind: NoteKind, server: str, text: str) -> Note:
    """A note about MCP server ``server``: one key per server for its state (the newest
    wins: a flapping server is one line), another for its tool list."""
    key = f"mcp:{server}:tools" if kind is NoteKind.LIST_CHANGED else f"mcp:{server}"
    priority = _SERVER_PRIORITY.get(kind, Priority.HIGH)
    return Note(kind, key, text, priority, data={"server": server})


def task_unblocked(task_id: int, subject: str, *, task_list: str = "") -> Note:
    """The note the task store posts when completing a task leaves ``task_id`` ready."""
    where = f" in list {task_list}" if task_list else ""
    return Note(
        NoteKind.TASK_UNBLOCKED,
        key=f"task:{task_list}:{task_id}",
        text=f"task {task_id} is ready: {subject}{where}",
        priority=Priority.LOW,
        data={"task_id": task_id, "subject": subject, "task_list": task_list},
    )


__all__ = [
    "LOG_NOTES",
    "LogNotes",
    "Note",
    "NoteKind",
    "NoteSink",
    "NotificationQueue",
    "Priority",
    "model_block",
    "server_note",
    "task_unblocked",
]
