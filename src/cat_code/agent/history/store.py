"""Saved sessions: one JSONL file per conversation, written as it goes, read back to resume.

``$CAT_CODE_HOME/sessions/<folder key>/<session id>.jsonl`` (folders 0700, files 0600): the
folder key names the working directory (`folder_key`), so each project lists its own
sessions. A file holds one JSON object per line, appended and never rewritten:

- ``{"type": "session", ...}`` first: the id, the folder, when it began, the model, the
  task list it uses (``task_list``);
- ``{"type": "task_list", "list": NAME}``: a resumed session went on with another list;
- ``{"type": "message", "message": {...}}`` for each message (`codec`), written by
  `SessionLog.sync` as soon as the agent has it: a crash or a ``kill -9`` loses at most
  the line being written;
- ``{"type": "rewind", "to": N}``: the agent took messages back (an unanswered prompt,
  a repaired turn); the conversation goes on from its first N messages;
- ``{"type": "compact", "messages": [...], "found_tools": [...]}``: the compaction point.
  The conversation goes on from these messages (the summary and the latest exchange);
  everything before stays in the file, as history.

`load` replays the records; a line that is not JSON (a torn last line) is skipped with a
warning, and a tool call left without its result (killed while tools ran) gets a
"cancelled" result, so the conversation loaded is always one an API takes.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cat_code.agent.history.codec import BadRecord, decode, encode
from cat_code.agent.providers.base import AssistantMessage, Message, UserMessage
from cat_code.base.files import PRIVATE_FILE_MODE, read_bounded
from cat_code.base.safe_text import safe_line
from cat_code.base.surrogates import json_without_surrogates
from cat_code.host.state.home import cat_code_home, ensure_home, keep_private
from cat_code.tools.base import ToolResult

logger = logging.getLogger(__name__)

SESSIONS_DIR = "sessions"
SUFFIX = ".jsonl"
FORMAT_VERSION = 1
#: The largest session file replayed: weeks of tool output fit; a runaway or special file
#: (a link to /dev/zero) is refused, never read into memory.
MAX_SESSION_BYTES = 256 * 1024 * 1024
#: The result a tool call gets on loading when the session ended before it finished.
ENDED_RESULT = "Error: the session ended before this tool call finished."
#: Longest folder-name part of a folder key (the rest of a long path is in the hash).
_KEY_CHARS = 80
_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


class SessionNotFound(Exception):
    """``--resume ID`` / ``--continue`` found nothing to resume; the text says what."""


def folder_key(cwd: Path) -> str:
    """The name of a folder's session folder: its path, readable, plus a short hash (two
    paths that read alike, ``/a-b`` and ``/a/b``, stay apart)."""
    real = os.path.realpath(cwd)
    readable = re.sub(r"[^A-Za-z0-9]+", "-", real).strip("-")[-_KEY_CHARS:] or "root"
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:8]
    return f"{readable}-{digest}"


def sessions_folder(cwd: Path) -> Path:
    """Where the sessions of ``cwd`` are kept (not made here)."""
    return cat_code_home() / SESSIONS_DIR / folder_key(cwd)


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def is_prompt(message: Message) -> bool:
    """Whether ``message`` is something the user typed (not only tool results)."""
    return isinstance(message, UserMessage) and bool(message.text.strip())


@dataclass(slots=True)
class LoadedSession:
    """A session file read back: the conversation to go on with, and what lists it."""

    id: str
    path: Path
    #: The conversation from the last compaction point on, ready to send.
    messages: list[Message]
    #: Tools found by search before the last compaction (their results were summarized).
    found_tools: tuple[str, ...] = ()
    #: Prompts the user sent, over the whole history (compactions do not reset it).
    turns: int = 0
    first_prompt: str = ""
    model: str | None = None
    #: The task list the session used (None: a file from before task lists, so its id).
    task_list: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def last_use(self) -> datetime.datetime:
        mtime = self.path.stat().st_mtime
        return datetime.datetime.fromtimestamp(mtime, datetime.UTC)


def load(path: Path) -> LoadedSession:
    """Replay a session file (see the module docstring). Raises `OSError` if unreadable."""
    data = read_bounded(path, MAX_SESSION_BYTES)
    loaded = LoadedSession(id=path.name.removesuffix(SUFFIX), path=path, messages=[])
    history: list[Message] = []  # every message ever in the conversation, for the counts
    base_at = 0  # where in `history` the messages after the last compaction start
    base_len = 0  # how many messages the compaction point put in `messages`
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
            if not isinstance(record, dict):
                raise BadRecord("not an object")
            kind = record.get("type")
            if kind == "session":
                loaded.id = str(record.get("id") or loaded.id)
                model = record.get("model")
                loaded.model = model if isinstance(model, str) else None
                task_list = record.get("task_list")
                loaded.task_list = task_list if isinstance(task_list, str) else None
            elif kind == "task_list":
                loaded.task_list = str(record["list"])
            elif kind == "message":
                message = decode(record.get("message"))
                loaded.messages.append(message)
                history.append(message)
            elif kind == "rewind":
                to = int(record["to"])
                del loaded.messages[to:]
                del history[base_at + max(0, to - base_len) :]
            elif kind == "compact":
                loaded.messages = [decode(m) for m in record.get("messages") or []]
                base_at, base_len = len(history), len(loaded.messages)
                loaded.found_tools = tuple(str(n) for n in record.get("found_tools") or [])
            else:
                logger.debug("%s:%d: skipping a record of type %r", path, number, kind)
        except (ValueError, KeyError, TypeError) as exc:
            torn = number == len(lines) or (number == len(lines) - 1 and not lines[-1])
            what = "a torn last line" if torn else f"line {number}"
            warning = f"{path}: skipped {what} ({exc})"
            logger.warning("%s", warning)
            loaded.warnings.append(warning)
    loaded.messages = repair(loaded.messages)
    prompts = [m.text for m in history if is_prompt(m)]
    loaded.turns = len(prompts)
    loaded.first_prompt = prompts[0] if prompts else ""
    return loaded


def repair(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with a result for every tool call: a call whose result was never
    saved (the session ended while it ran) gets `ENDED_RESULT`, so the pairs stay whole."""
    repaired: list[Message] = []
    for index, message in enumerate(messages):
        repaired.append(message)
        if not isinstance(message, AssistantMessage) or not message.tool_calls:
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        answered: set[str] = set()
        if isinstance(following, UserMessage):
            answered = {r.tool_call_id for r in following.tool_results}
        missing = [
            ToolResult(ENDED_RESULT, is_error=True, tool_call_id=call.id)
            for call in message.tool_calls
            if call.id not in answered
        ]
        if not missing:
            continue
        if isinstance(following, UserMessage) and following.tool_results:
            following.tool_results.extend(missing)
        else:
            repaired.append(UserMessage(tool_results=missing))
    return repaired


def _session_files(cwd: Path) -> list[Path]:
    """The session files saved for ``cwd``, the most recently used first (one stat each)."""
    folder = sessions_folder(cwd)
    try:
        paths = [p for p in folder.iterdir() if p.name.endswith(SUFFIX)]
    except FileNotFoundError:
        return []
    dated: list[tuple[float, str, Path]] = []
    for path in paths:
        try:
            dated.append((path.stat().st_mtime, path.name.removesuffix(SUFFIX), path))
        except OSError as exc:
            logger.warning("%s: cannot read it: %s", path, exc.strerror or exc)
    dated.sort(reverse=True)
    return [path for _, _, path in dated]


def _loaded(paths: Iterable[Path]) -> Iterator[LoadedSession]:
    """Each of ``paths`` read back, in order; one that cannot be read is skipped (said)."""
    for path in paths:
        try:
            yield load(path)
        except OSError as exc:
            logger.warning("%s: cannot read it: %s", path, exc.strerror or exc)


def list_sessions(cwd: Path) -> list[LoadedSession]:
    """The sessions saved for ``cwd``, the most recently used first."""
    return list(_loaded(_session_files(cwd)))


def find(cwd: Path, ident: str) -> LoadedSession:
    """The session of ``cwd`` whose id is ``ident`` (or starts with it, when only one does);
    `SessionNotFound` otherwise."""
    ident = ident.strip()
    folder = sessions_folder(cwd)
    hint = "cat-code sessions lists them"
    if _ID.match(ident):
        exact = folder / f"{ident}{SUFFIX}"
        if exact.is_file():
            return load(exact)
        try:
            matches = [p for p in folder.iterdir() if p.name.startswith(ident)]
        except FileNotFoundError:
            matches = []
        matches = [p for p in matches if p.name.endswith(SUFFIX)]
        if len(matches) == 1:
            return load(matches[0])
        if len(matches) > 1:
            raise SessionNotFound(
                f"session id {ident!r} is ambiguous here ({len(matches)} sessions start "
                f"with it); {hint}"
            )
    raise SessionNotFound(f"no saved session {ident!r} in this folder ({cwd}); {hint}")


def resolve(cwd: Path, *, resume: str | None, continue_latest: bool) -> LoadedSession | None:
    """What ``--resume ID`` or ``--continue`` asks for (None: neither was given)."""
    if resume is not None:
        return find(cwd, resume)
    if continue_latest:
        # Only the newest is read (the others stay on disk unread).
        newest = next(_loaded(_session_files(cwd)), None)
        if newest is None:
            raise SessionNotFound(f"no saved session to continue in this folder ({cwd})")
        return newest
    return None


#: Longest first prompt shown in a session's line.
PROMPT_CHARS = 60


def session_line(session: LoadedSession, *, prompt_chars: int = PROMPT_CHARS) -> str:
    """One session on one line, as ``cat-code sessions`` and ``/resume`` list it: id, last
    use (local time), turns, the first prompt (cut; made safe to print)."""
    when = session.last_use.astimezone().strftime("%Y-%m-%d %H:%M")
    prompt = " ".join(session.first_prompt.split())
    if len(prompt) > prompt_chars:
        prompt = prompt[: prompt_chars - 1] + "…"
    turns = f"{session.turns} turn{'' if session.turns == 1 else 's'}"
    return safe_line(f"{session.id}  {when}  {turns:>9}  {prompt}")


def unchanged_prefix(written: Sequence[Any], encoded: Sequence[Any]) -> int:
    """How many records at the start of ``encoded`` are those already ``written`` (what a
    sync appends after; a shorter prefix than ``written`` means the conversation went back)."""
    same = 0
    for old, new in zip(written, encoded, strict=False):
        if old != new:
            break
        same += 1
    return same


class SessionLog:
    """The file the conversation of one session is appended to, as it goes.

    `sync` is told the agent's messages after every change and appends what is new (or
    a ``rewind`` first, when the agent took messages back). The file is made with the
    first message, so a session that never sent anything leaves none. A failing disk
    never ends a conversation: the first error is logged and saving stops.
    """

    def __init__(self, cwd: Path, *, model: str | None = None) -> None:
        self.cwd = cwd
        self.model = model
        self._fd: int | None = None
        self._written: list[dict[str, Any]] = []
        self._broken = False
        self.id = ""
        self.path = Path()
        self.start_new()

    # -- which file ----------------------------------------------------------------------

    def start_new(self) -> None:
        """Go on in a new session (a new id; its file is made with the first message)."""
        import uuid

        self.close()
        self.id = str(uuid.uuid4())
        self.path = sessions_folder(self.cwd) / f"{self.id}{SUFFIX}"
        self._written = []
        self._broken = False
        self.task_list: str | None = None

    def adopt(self, loaded: LoadedSession) -> None:
        """Go on in ``loaded``'s file: what is appended joins its conversation."""
        self.close()
        self.id, self.path = loaded.id, loaded.path
        self._broken = False
        self.task_list = loaded.task_list
        # What the file replays to as written, so the next sync appends only what is new
        # (the results a repair gave calls the old session never finished, first).
        self._written = self._replayed_without_repair(loaded.path)

    def _replayed_without_repair(self, path: Path) -> list[dict[str, Any]]:
        """The file's messages as written (no repair), for diffing against the agent's."""
        records: list[dict[str, Any]] = []
        for raw in read_bounded(path, MAX_SESSION_BYTES).split(b"\n"):
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(record, dict):
                continue
            if record.get("type") == "message":
                records.append(record.get("message") or {})
            elif record.get("type") == "rewind":
                del records[int(record.get("to", 0)) :]
            elif record.get("type") == "compact":
                records = list(record.get("messages") or [])
        return records

    def use_task_list(self, name: str) -> None:
        """Record that this session keeps its tasks in the list ``name`` (in the header of a
        new file; a record in a resumed one, when the list changed)."""
        if name == self.task_list:
            return
        self.task_list = name
        if self.saved:
            self._append([{"type": "task_list", "list": name}])

    @property
    def saved(self) -> bool:
        """Whether the file exists (something was said in this session)."""
        return self.path.is_file()

    # -- writing -------------------------------------------------------------------------

    def sync(self, messages: Sequence[Message]) -> None:
        """Append what changed in ``messages`` since the last sync."""
        encoded = [encode(m) for m in messages]
        same = unchanged_prefix(self._written, encoded)
        if same == len(self._written) == len(encoded):
            return
        records: list[dict[str, Any]] = []
        if same < len(self._written):
            records.append({"type": "rewind", "to": same})
        records.extend({"type": "message", "message": m} for m in encoded[same:])
        if self._append(records):
            self._written = encoded

    def compacted(
        self, messages: Sequence[Message], found_tools: Sequence[str], **details: Any
    ) -> None:
        """Mark the compaction point: the conversation goes on from ``messages``."""
        encoded = [encode(m) for m in messages]
        record = {
            "type": "compact",
            "at": _now(),
            **details,
            "found_tools": list(found_tools),
            "messages": encoded,
        }
        if self._append([record]):
            self._written = encoded

    def append_records(self, records: list[dict[str, Any]]) -> bool:
        """Append records of another kind (a subagent's side conversation) as they are;
        `load` skips them. False when the file cannot be written (said once)."""
        return self._append(records)

    def _append(self, records: list[dict[str, Any]]) -> bool:
        if self._broken:
            return False
        try:
            fd = self._open()
            data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
            try:
                raw = data.encode()
            except UnicodeEncodeError:  # a lone surrogate (a name that is not UTF-8): escaped
                clean = json_without_surrogates(records)
                raw = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in clean).encode()
            _write_all(fd, raw)
        except OSError as exc:
            self._broken = True
            logger.warning(
                "cannot save this session in %s: %s; it goes on unsaved",
                self.path,
                exc.strerror or exc,
            )
            return False
        return True

    def _open(self) -> int:
        if self._fd is not None:
            return self._fd
        ensure_home(SESSIONS_DIR)  # each level 0700: ensure_home tightens only the last
        ensure_home(SESSIONS_DIR, self.path.parent.name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC
        fd = os.open(self.path, flags, PRIVATE_FILE_MODE)
        keep_private(self.path)  # a resumed session's file an old version left open
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                header = {
                    "type": "session",
                    "version": FORMAT_VERSION,
                    "id": self.id,
                    "cwd": str(self.cwd),
                    "created": _now(),
                    "model": self.model,
                    "task_list": self.task_list,
                }
                _write_all(fd, (json.dumps(header, ensure_ascii=False) + "\n").encode())
            elif not _ends_with_newline(self.path):
                # A torn last line (a killed writer): end it, so our first line is whole.
                _write_all(fd, b"\n")
        except OSError:
            os.close(fd)
            raise
        self._fd = fd
        return fd

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as file:
        file.seek(-1, os.SEEK_END)
        return file.read(1) == b"\n"


__all__ = [
    "LoadedSession",
    "SessionLog",
    "SessionNotFound",
    "find",
    "folder_key",
    "list_sessions",
    "load",
    "resolve",
    "session_line",
    "sessions_folder",
]
