"""Writing cat-code's own files: `atomic_write`, `file_lock`, `same_file` (one copy of each).

`atomic_write` writes into a temporary file in the target's own folder (a rename across
file systems is not atomic), flushes and fsyncs it, gives it its mode (the one passed, else
the old file's, else `PRIVATE_FILE_MODE`) and moves it over the target with ``os.replace``:
a reader, or a crash, sees the old file or the new one, never half of one. A symlink at the
path is written through (its target is replaced, the link stays) unless the caller says
``follow_symlinks=False`` (the token store: a link there is replaced, never followed).
`file_lock` is an inter-process lock (``filelock``, one lock file) to hold across a
read–check–write, so two processes editing one file never lose each other's change; it
raises `FileLockTimeout` instead of waiting forever. `same_file` says whether two paths
name one file (links and ``..`` resolved), for files that may not exist yet. `parse_json`
reads one of these files' JSON, refusing nesting deeper than `MAX_JSON_DEPTH` with
`JsonTooDeep` (never a `RecursionError` out of the parser or the code walking the data).
`read_bounded` is the one way cat-code reads a file of its own (configs, settings,
approvals, memory, sessions, home state, tokens): a regular file once links are resolved,
opened non-blocking (a FIFO never hangs it), at most a cap of bytes (``/dev/zero`` or a
runaway file never fills memory); anything else raises `UnreadableFile`, an `OSError`
with the path and a `FileProblem`, so a caller's existing "cannot read" warning names it.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: A file cat-code creates is its owner's only (it may hold tokens), whatever the umask.
PRIVATE_FILE_MODE = 0o600
#: How long `file_lock` waits by default: holders keep it for one small read-modify-write
#: (milliseconds, an fsync included), so a longer wait means a stuck process.
LOCK_WAIT_S = 10.0
#: The deepest nesting `parse_json` accepts: a config or credentials file needs five or
#: six levels; far below the interpreter's recursion limit, so walking the data is safe.
MAX_JSON_DEPTH = 100
#: The most `read_bounded` reads by default: a config, settings or approvals file is a few
#: kilobytes; 8 MiB leaves room for a long session file's line and stops a runaway file.
MAX_OWN_FILE_BYTES = 8 * 1024 * 1024


class FileLockTimeout(OSError):
    """Another process held ``lock_path`` for longer than ``waited`` seconds."""

    def __init__(self, lock_path: Path, waited: float) -> None:
        super().__init__(f"{lock_path} is held by another process for more than {waited:g} s")
        self.lock_path = lock_path
        self.waited = waited


class JsonTooDeep(ValueError):
    """JSON text nested deeper than ``limit`` levels."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"nested more than {limit} levels deep")
        self.limit = limit


class FileProblem(enum.Enum):
    """Why `read_bounded` refused a file (the value is how messages say it)."""

    NOT_REGULAR = "not a regular file"
    TOO_LARGE = "too large"


class UnreadableFile(OSError):
    """``path`` is not a file cat-code reads: ``problem`` says why, ``detail`` says more
    (what it is instead, or the cap it passed)."""

    def __init__(self, path: Path, problem: FileProblem, detail: str) -> None:
        super().__init__(f"{path} is {problem.value} ({detail})")
        #: Without the path, for messages that already name it (as an `OSError`'s).
        self.strerror = f"{problem.value} ({detail})"
        self.path = path
        self.problem = problem
        self.detail = detail


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _umasked(mode: int) -> int:
    """``mode`` less the process's umask (read without changing it: /proc, else a probe)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return mode & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return mode & ~umask


def read_regular_file(path: Path, limit: int, *, cut: bool) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``path`` (links followed), at most ``limit``, with its
    ``fstat``: the one bounded read of the code (`read_bounded`, the file tools).

    `UnreadableFile` when it is anything but a regular file, or (unless ``cut``: then its
    first ``limit`` bytes come back) holds more than ``limit`` bytes; `OSError` as usual
    when it is missing or not readable. Never blocks on a FIFO, never reads past the cap.
    """
    flags = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)  # non-blocking: opening a FIFO with no writer returns at once
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFile(path, FileProblem.NOT_REGULAR, _kind(info.st_mode))
        if info.st_size > limit and not cut:
            raise UnreadableFile(path, FileProblem.TOO_LARGE, f"{info.st_size:,} bytes")
        chunks: list[bytes] = []
        left = limit + 1  # one byte more: a file whose size lies (/proc) still shows it is over
        while left > 0:
            chunk = os.read(fd, min(left, 1024 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        if not cut:
            raise UnreadableFile(path, FileProblem.TOO_LARGE, f"over {limit:,} bytes")
        data = data[:limit]
    return data, info


def read_bounded(path: Path, limit: int = MAX_OWN_FILE_BYTES, *, cut: bool = False) -> bytes:
    """The bytes of the regular file ``path`` (links followed), at most ``limit``: a file
    cat-code reads itself (`read_regular_file`'s rules)."""
    return read_regular_file(path, limit, cut=cut)[0]


def parse_json(text: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)``, but nesting deeper than ``max_depth`` raises `JsonTooDeep`
    (`json.JSONDecodeError` as usual for text that is not JSON)."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise JsonTooDeep(max_depth) from None
    level: list[Any] = [data]
    for _ in range(max_depth + 1):
        level = [
            child
            for value in level
            if isinstance(value, dict | list)
            for child in (value.values() if isinstance(value, dict) else value)
        ]
        if not level:
            return data
    raise JsonTooDeep(max_depth)


def atomic_write(
    path: Path,
    data: bytes | str,
    *,
    mode: int | None = None,
    new_file_mode: int | None = PRIVATE_FILE_MODE,
    follow_symlinks: bool = True,
    durable: bool = True,
) -> None:
    """Replace ``path`` with ``data`` (str is written as UTF-8) in one rename: the one
    atomic write of the code (cat-code's own files and the file tools alike).

    ``mode``: the new file's permission bits; None keeps the old file's, and a new file
    gets ``new_file_mode`` (None: 0666 less the umask, as any program's new file).
    ``durable=False`` skips the fsyncs, for a file worthless after a reboot (still atomic
    for readers). The folder must exist. Raises `OSError` (the temporary file removed, the
    old file untouched) when it cannot be written.
    """
    target = Path(os.path.realpath(path)) if follow_symlinks else path
    if mode is None:
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = new_file_mode if new_file_mode is not None else _umasked(0o666)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    import tempfile  # here: loading a config (before any server starts) writes nothing

    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(raw)
            out.flush()
            os.fchmod(out.fileno(), mode)
            if durable:
                os.fsync(out.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if durable:
        _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every file system allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def file_lock(lock_path: Path, *, timeout: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the inter-process lock on ``lock_path`` (created 0600 if missing, kept after)
    for the ``with`` block, waiting at most ``timeout`` seconds (`FileLockTimeout`)."""
    # Imported here: only commands that edit a file pay for it (``mcp list`` never does).
    import filelock

    lock = filelock.FileLock(str(lock_path), timeout=timeout, mode=PRIVATE_FILE_MODE)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise FileLockTimeout(lock_path, timeout) from None
    try:
        yield
    finally:
        lock.release()


def same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file: the same inode when both exist (hard links
    too), else the same path once links and ``..`` are resolved."""
    with contextlib.suppress(OSError, ValueError):
        return os.path.samefile(a, b)
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return a == b


__all__ = [
    "LOCK_WAIT_S",
    "MAX_JSON_DEPTH",
    "MAX_OWN_FILE_BYTES",
    "PRIVATE_FILE_MODE",
    "FileLockTimeout",
    "FileProblem",
    "JsonTooDeep",
    "UnreadableFile",
    "atomic_write",
    "file_lock",
    "parse_json",
    "read_bounded",
    "same_file",
]
