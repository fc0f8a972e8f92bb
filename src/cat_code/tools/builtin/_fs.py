"""What the file tools share: paths, protected files, bounded reads, text codecs, atomic writes.

Invariants every file tool keeps through these helpers:

- Nothing blocks for good: a path is `os.stat`-ed before it is opened, anything but a
  regular file is refused, the open is non-blocking (a FIFO swapped in after the stat
  still cannot hang it), and no read takes more than a cap. The blocking work runs on a
  *daemon* thread (`in_thread`), never on asyncio's default executor, whose threads
  ``asyncio.run`` joins at exit: a wedged read can never keep cat-code from ending.
- Every decision is made on the real target of a path (`real_path`: all links, every
  parent). `Protected` paths (``$CAT_CODE_HOME``, given by whoever builds the tools; see
  `_protected`) are never read, listed or written, whatever the permission rules say, by
  any name: a link, ``..``, a hard link. `FileTool.refusal` says so before anyone is asked,
  and the tools check again when they run. A NUL byte in a path is a plain error.
- A write is atomic (a temporary file beside the target, fsync, rename) and goes through
  a symlink to the file it points at; an existing file keeps its mode.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import threading
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from cat_code.base.files import UnreadableFile, read_regular_file
from cat_code.tools.base import ProgressCallback, Tool, ToolResult

# Re-exported (``X as X``): the tools import what they share from here.
from cat_code.tools.builtin._protected import (
    FileToolError as FileToolError,
    Protected as Protected,
    ProtectedCheck as ProtectedCheck,
    nul_refusal,
    real_path as real_path,
    refusal,
)
from cat_code.tools.threads import in_daemon_thread

_T = TypeVar("_T")

#: Output beyond this many characters is cut; the model rarely needs more and context is dear.
MAX_OUTPUT_CHARS = 30_000
#: The most read_file, edit_file and write_file read of one file: a 10 GB log or
#: /dev/zero cannot exhaust memory, and no model needs more of one file at once.
MAX_READ_BYTES = 16 * 1024 * 1024
#: A file whose first bytes hold a NUL is taken as binary (git and ripgrep do the same).
BINARY_PROBE_BYTES = 8192


def cut(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """``text``, cut to ``limit`` characters with a note saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit} more characters cut]"


def in_thread(function: Callable[[], _T]) -> asyncio.Future[_T]:
    """Run ``function`` on a daemon thread (`cat_code.tools.threads`): a read stuck in the
    kernel (a FIFO, a dead NFS mount) must not keep the process alive after SIGTERM."""
    return in_daemon_thread(function, name="cat-code-file-tool")


def absolute(raw: str, cwd: Path | None) -> Path:
    """The path the model gave, absolute (relative to ``cwd``; ``~`` expanded). A ``~user``
    that names no user stays as written (never raises: permission checks call this);
    `home_refusal` refuses such a call before it runs."""
    path = Path(raw)
    try:
        path = path.expanduser()
    except RuntimeError:  # ~nosuchuser, or no home folder at all
        pass
    if not path.is_absolute():
        path = (cwd or Path.cwd()) / path
    return Path(os.path.normpath(path))


def home_refusal(raw: str) -> str | None:
    """The error for a path starting with a ``~`` or ``~user`` that cannot be expanded (no
    such user, no home folder), else None."""
    if not raw.startswith("~"):
        return None
    try:
        Path(raw).expanduser()
    except RuntimeError:
        user = raw[1:].split("/", 1)[0]
        who = f"user '{user}'" if user else "home folder"
        return f"Error: cannot expand '~{user}' in 'path': no such {who}; nothing was done."
    return None


def shown(path: Path, cwd: Path | None) -> str:
    """How a path is shown to the model: relative to the working directory when inside it."""
    base = cwd or Path.cwd()
    try:
        return str(path.relative_to(base)) or "."
    except ValueError:
        return str(path)


def shown_target(path: Path, cwd: Path | None) -> str:
    """`shown`, followed by where the path really leads when a link takes it elsewhere
    (``cfg/mcp.json → /home/me/.cat-code/mcp.json``): what an approval is really about."""
    name = shown(path, cwd)
    target = real_path(path)
    return name if target == path else f"{name} → {target}"


def path_argument(arguments: dict[str, object], key: str = "path") -> str:
    raw = arguments.get(key)
    if not isinstance(raw, str) or not raw.strip():
        raise FileToolError(f"Error: '{key}' must be a non-empty string")
    problem = nul_refusal(arguments, (key,))
    if problem is not None:
        raise FileToolError(problem)
    return raw


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A regular file's bytes (at most `MAX_READ_BYTES`) and what it was when read."""

    data: bytes
    size: int
    mode: int
    mtime_ns: int

    @property
    def whole(self) -> bool:
        return len(self.data) >= self.size

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def read_regular(path: Path, name: str, limit: int = MAX_READ_BYTES) -> Snapshot:
    """The first ``limit`` bytes of the regular file ``path``; `FileToolError` for anything
    else (missing, a folder, a FIFO, a device). Never blocks on a special file."""
    try:
        data, info = read_regular_file(path, limit, cut=True)
    except UnreadableFile as exc:
        try:
            _require_regular(os.stat(path).st_mode, name)  # the tools' words for each kind
        except OSError:
            pass
        raise FileToolError(f"Error: cannot read {name}: {exc.strerror}") from None
    except FileNotFoundError:
        raise FileToolError(f"Error: {name} does not exist") from None
    except OSError as exc:
        raise FileToolError(f"Error: cannot read {name}: {exc.strerror or exc}") from None
    return Snapshot(data, info.st_size, stat.S_IMODE(info.st_mode), info.st_mtime_ns)


def _require_regular(mode: int, name: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise FileToolError(
            f"Error: {name} is a directory, not a file; use glob to list its files "
            "or grep to search them"
        )
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    raise FileToolError(f"Error: {name} is {kind}; only regular files can be read or edited")


def is_binary(data: bytes) -> bool:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False  # UTF-16 text has NULs everywhere
    return b"\0" in data[:BINARY_PROBE_BYTES]


@dataclass(frozen=True, slots=True)
class Codec:
    """How a file's text was stored: its encoding and whether it began with a BOM."""

    encoding: str = "utf-8"
    bom: bytes = b""

    def decode(self, data: bytes) -> str:
        return data[len(self.bom) :].decode(self.encoding)

    def encode(self, text: str, name: str) -> bytes:
        try:
            return self.bom + text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise FileToolError(
                f"Error: the new text of {name} has {exc.object[exc.start : exc.end]!r}, which "
                f"its encoding ({self.encoding}) cannot store; nothing was written"
            ) from None


_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def detect_codec(data: bytes) -> Codec:
    """The file's encoding: a BOM's, else UTF-8 when it decodes, else Latin-1 (which maps
    every byte, so the parts an edit leaves alone are written back byte for byte)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return Codec(encoding, bom)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return Codec("latin-1")
    return Codec()


def decode_text(data: bytes, name: str) -> tuple[str, Codec]:
    if is_binary(data):
        raise FileToolError(f"Error: {name} is a binary file; only text files can be read")
    codec = detect_codec(data)
    try:
        return codec.decode(data), codec
    except UnicodeDecodeError:
        raise FileToolError(f"Error: {name} is not valid {codec.encoding} text") from None


@dataclass(frozen=True, slots=True)
class _Seen:
    digest: str
    size: int
    mtime_ns: int
    whole: bool


class FileLedger:
    """Which files the model has read in this conversation, as they were then.

    edit_file and write_file change an existing file only when the model has read it
    (read_file) and it is unchanged on disk since — so the agent never overwrites an edit
    the user made meanwhile. A file the tools wrote counts as read, as written.
    """

    def __init__(self) -> None:
        self._seen: dict[Path, _Seen] = {}
        self._lock = threading.Lock()

    def record(self, path: Path, snapshot: Snapshot) -> None:
        seen = _Seen(snapshot.digest, snapshot.size, snapshot.mtime_ns, snapshot.whole)
        with self._lock:
            self._seen[real_path(path)] = seen

    def record_written(self, path: Path, data: bytes) -> None:
        info = os.stat(path)
        seen = _Seen(hashlib.sha256(data).hexdigest(), info.st_size, info.st_mtime_ns, True)
        with self._lock:
            self._seen[real_path(path)] = seen

    def check(self, path: Path, current: Snapshot, name: str) -> None:
        """`FileToolError` unless ``path`` was read and is still as it was then."""
        with self._lock:
            seen = self._seen.get(real_path(path))
        if seen is None:
            raise FileToolError(
                f"Error: {name} has not been read in this conversation. Read it with read_file "
                "first, then make the change; nothing was written."
            )
        if seen.whole and current.whole:
            unchanged = seen.digest == current.digest
        else:  # too big to compare whole: its size and time must match
            unchanged = (seen.size, seen.mtime_ns) == (current.size, current.mtime_ns)
        if not unchanged:
            raise FileToolError(
                f"Error: {name} has changed on disk since it was last read (the user or "
                "another program edited it). Read it again with read_file, then make the "
                "change; nothing was written."
            )

    def forget_all(self) -> None:
        """A new conversation: nothing has been read in it."""
        with self._lock:
            self._seen.clear()


class FileTool(Tool):
    """A built-in tool that works on files: it knows the working directory, the protected
    paths and the conversation's `FileLedger`; a `FileToolError` becomes an error result."""

    read_only = True

    def __init__(
        self,
        cwd: Path | None = None,
        *,
        protected: Protected | None = None,
        ledger: FileLedger | None = None,
    ) -> None:
        self.cwd = cwd
        self.protected = protected or Protected()
        self.ledger = ledger or FileLedger()

    def file_paths(self, arguments: dict[str, Any]) -> list[Path]:
        raw = arguments.get("path")
        if isinstance(raw, str) and "\0" in raw:
            return []  # names no file: `refusal` refuses the call
        if isinstance(raw, str) and raw.strip():
            return [absolute(raw, self.cwd)]
        return [self.cwd or Path.cwd()]

    def permission_subjects(self, arguments: dict[str, Any]) -> list[str]:
        """``name(real target)`` per path, so a rule can name a path: ``write_file(/tmp/*)``."""
        return [f"{self.name}({real_path(path)})" for path in self.file_paths(arguments)]

    def refusal(self, arguments: dict[str, Any]) -> str | None:
        """A NUL byte in the path, or a path that is cat-code's own (`Protected`, for a
        write even a saved output): refused before anyone is asked."""
        problem = nul_refusal(arguments)
        if problem is not None:
            return problem
        raw = arguments.get("path")
        if not isinstance(raw, str) or not raw.strip():
            return None  # the default folder, or a bad argument the tool will name
        if (problem := home_refusal(raw)) is not None:
            return problem
        path = absolute(raw, self.cwd)
        if self.protected.covers(path, named_read=self.read_only):
            return refusal(shown(path, self.cwd))
        return None

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        problem = self.refusal(arguments)
        if problem is not None:
            return ToolResult.error(problem)
        try:
            return await self.run(arguments)
        except FileToolError as exc:
            return ToolResult.error(str(exc))

    @abstractmethod
    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        """Do the work; raise `FileToolError` for what the model should read as an error."""
