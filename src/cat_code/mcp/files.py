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
"""

from __future__ import annotations

import contextlib
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
    follow_symlinks: bool = True,
    durable: bool = True,
) -> None:
    """Replace ``path`` with ``data`` (str is written as UTF-8) in one rename.

    ``mode``: the new file's permission bits; None keeps the old file's (0600 for a new
    file). ``durable=False`` skips the fsyncs, for a file worthless after a reboot (still
    atomic for readers). The folder must exist. Raises `OSError` (the temporary file
    removed, the old file untouched) when it cannot be written.
    """
    target = Path(os.path.realpath(path)) if follow_symlinks else path
    if mode is None:
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = PRIVATE_FILE_MODE
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
    "PRIVATE_FILE_MODE",
    "FileLockTimeout",
    "JsonTooDeep",
    "atomic_write",
    "file_lock",
    "parse_json",
    "same_file",
]
