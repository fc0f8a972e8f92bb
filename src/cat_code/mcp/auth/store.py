"""Token stores: `MemoryTokenStore` (tests, conformance) and, on disk, `FileTokenStore`.

Tokens are kept per MCP server (its `canonical_server_url`), registrations per
authorization server (its issuer): a registration is never reused at another server.
On disk, ``credentials.json`` is ``{"servers": {url: tokens}, "clients": {issuer:
registration}, "dpop_keys": {url: PEM}}`` (the last once a server uses DPoP),
mode 0600 in a 0700 folder. Every read re-reads the file (another
cat-code may have refreshed); every change is a read-modify-write under an ``fcntl`` lock
on ``credentials.json.lock``, held for that write only (a bounded wait), written with
`cat_code.base.files.atomic_write` (a symlink there is replaced, never followed), so two
processes never lose each other's changes or leave half a file. A file that is not valid
JSON is never silently overwritten: it is moved aside first. `locked` (held across a
refresh's token request) is another lock, one file per server
(``credentials.json.<hash>.lock``), waited for with polls that yield to the event loop: a
refresh never holds up another process's writes, nor a refresh of another server. These
locks are not `cat_code.base.files.file_lock`: a lock file here is opened ``O_NOFOLLOW``
(a symlink at it is replaced) and waited for without blocking the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import stat
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from cat_code.base.files import JsonTooDeep, atomic_write, parse_json, read_bounded
from cat_code.mcp.auth.types import ClientRegistration, Tokens

logger = logging.getLogger(__name__)

CREDENTIALS_FILE = "credentials.json"
#: The file's section of DPoP private keys (PEM), by server; written only once one exists.
DPOP_KEYS = "dpop_keys"
FILE_MODE = 0o600
DIR_MODE = 0o700
#: Polling a lock: first and longest pause between tries.
_LOCK_POLL_FIRST_S = 0.001
_LOCK_POLL_MAX_S = 0.1
#: How long `locked` waits for another process's refresh of the same server (one token
#: request, bounded by its own 30 s timeout) before giving up.
LOCK_WAIT_S = 60.0
#: How long a write may hold the event loop waiting for the write lock: every holder
#: holds it for one read-modify-write of a small file (milliseconds, an fsync included).
WRITE_LOCK_WAIT_S = 2.0
#: Files already warned about (once per process, however many stores read them).
_warned: set[Path] = set()
_T = TypeVar("_T")


class MemoryTokenStore:
    """A `TokenStore` that lives as long as the process."""

    def __init__(self) -> None:
        self._tokens: dict[str, Tokens] = {}
        self._registrations: dict[str, ClientRegistration] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._dpop_keys: dict[str, str] = {}

    def tokens(self, server: str) -> Tokens | None:
        return self._tokens.get(server)

    def save_tokens(self, server: str, tokens: Tokens) -> None:
        self._tokens[server] = tokens

    def forget(self, server: str) -> None:
        self._tokens.pop(server, None)

    def registration(self, issuer: str) -> ClientRegistration | None:
        return self._registrations.get(issuer)

    def save_registration(self, registration: ClientRegistration) -> None:
        self._registrations[registration.issuer] = registration

    def dpop_key(self, server: str) -> str | None:
        return self._dpop_keys.get(server)

    def save_dpop_key(self, server: str, pem: str, *, replace: bool = False) -> str:
        if replace:
            self._dpop_keys[server] = pem
        return self._dpop_keys.setdefault(server, pem)

    @asynccontextmanager
    async def locked(self, server: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(server, asyncio.Lock())
        async with lock:
            yield


class CredentialsLocked(OSError):
    """Another cat-code process held a lock on ``credentials.json`` for too long."""


class FileTokenStore:
    """A `TokenStore` in one JSON file (cat-code's is ``$CAT_CODE_HOME/credentials.json``),
    shared safely by every process that uses the same file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        #: Guards one read-modify-write of the file, nothing longer.
        self.lock_path = path.with_name(path.name + ".lock")
        #: One refresh at a time per server within this store (the file lock is for
        #: other processes and other stores).
        self._refreshing: dict[str, asyncio.Lock] = {}

    # -- the TokenStore protocol ---------------------------------------------------------

    def tokens(self, server: str) -> Tokens | None:
        return _load(self._read()["servers"].get(server), Tokens.from_json, self.path, server)

    def save_tokens(self, server: str, tokens: Tokens) -> None:
        self._update(lambda data: data["servers"].__setitem__(server, tokens.to_json()))

    def forget(self, server: str) -> None:
        self._update(lambda data: data["servers"].pop(server, None))

    def registration(self, issuer: str) -> ClientRegistration | None:
        raw = self._read()["clients"].get(issuer)
        return _load(raw, ClientRegistration.from_json, self.path, issuer)

    def save_registration(self, registration: ClientRegistration) -> None:
        self._update(
            lambda data: data["clients"].__setitem__(registration.issuer, registration.to_json())
        )

    def dpop_key(self, server: str) -> str | None:
        raw = self._read().get(DPOP_KEYS)
        pem = raw.get(server) if isinstance(raw, dict) else None
        return pem if isinstance(pem, str) else None

    def save_dpop_key(self, server: str, pem: str, *, replace: bool = False) -> str:
        kept: list[str] = []

        def change(data: dict[str, Any]) -> None:
            keys = data.get(DPOP_KEYS)
            if not isinstance(keys, dict):
                keys = data[DPOP_KEYS] = {}
            if replace or not isinstance(keys.get(server), str):
                keys[server] = pem
            kept.append(keys[server])

        self._update(change)
        return kept[0]

    @asynccontextmanager
    async def locked(self, server: str) -> AsyncIterator[None]:
        """Hold ``server``'s refresh lock (one refresh of it at a time, in every process),
        waiting for it without blocking the event loop, at most `LOCK_WAIT_S`."""
        async with self._refreshing.setdefault(server, asyncio.Lock()):
            self._prepare_folder()
            where = self.refresh_lock_path(server)
            fd = self._open_lock(where)
            try:
                await _acquire_async(fd, where, LOCK_WAIT_S)
                try:
                    yield
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def refresh_lock_path(self, server: str) -> Path:
        """The file `locked` locks for ``server``: its name does not reveal the URL."""
        digest = hashlib.sha256(server.encode()).hexdigest()[:16]
        return self.path.with_name(f"{self.path.name}.{digest}.lock")

    # -- the file ------------------------------------------------------------------------

    def _read(self) -> dict[str, dict[str, Any]]:
        """The file's contents, shaped; missing or corrupt is empty (corrupt warns once)."""
        try:
            text = read_bounded(self.path).decode("utf-8", "replace")
        except FileNotFoundError:
            return _empty()
        except OSError as exc:
            self._warn_once(f"{self.path}: cannot read it ({exc.strerror or exc}); ignoring it")
            return _empty()
        if not self.path.is_symlink():  # never chmod what a link points at
            self._fix_mode(self.path, FILE_MODE)
        data = _parse(text)
        if data is None:
            self._warn_once(f"{self.path} is not valid JSON; ignoring it — sign in again")
            return _empty()
        return data

    def _update(self, change: Callable[[dict[str, dict[str, Any]]], object]) -> None:
        """Read, change and write the file back atomically, under the lock."""
        self._prepare_folder()
        with self._write_lock():
            data = self._read_for_update()
            change(data)
            self._write(data)

    def _read_for_update(self) -> dict[str, dict[str, Any]]:
        try:
            text = read_bounded(self.path).decode("utf-8", "replace")
        except FileNotFoundError:
            return _empty()
        data = _parse(text)
        if data is None:
            # Never overwrite what cannot be read: it may hold other servers' tokens.
            aside = self.path.with_name(f"{self.path.name}.invalid-{int(time.time())}")
            os.replace(self.path, aside)
            self._fix_mode(aside, FILE_MODE)
            logger.warning("%s is not valid JSON; moved it to %s", self.path, aside.name)
            _warned.add(self.path)
            return _empty()
        return data

    def _write(self, data: dict[str, dict[str, Any]]) -> None:
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        atomic_write(self.path, text, mode=FILE_MODE, follow_symlinks=False)
        _warned.discard(self.path)  # valid again: a later corruption is news

    @contextlib.contextmanager
    def _write_lock(self) -> Iterator[None]:
        """The write lock, for one read-modify-write (a refresh in progress, here or in
        another process, holds another lock and never delays this one)."""
        fd = self._open_lock(self.lock_path)
        try:
            _acquire_blocking(fd, self.lock_path, WRITE_LOCK_WAIT_S)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _open_lock(self, path: Path) -> int:
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        try:
            fd = os.open(path, flags, FILE_MODE)
        except OSError as exc:
            if exc.errno != errno.ELOOP:
                raise
            # A symlink where a lock file belongs: replace it, never follow it.
            logger.warning("%s is a symlink; replacing it with a lock file", path)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            fd = os.open(path, flags, FILE_MODE)
        with contextlib.suppress(OSError):  # tighten one made by hand or by an old version
            if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
                os.fchmod(fd, FILE_MODE)
        return fd

    def _prepare_folder(self) -> None:
        folder = self.path.parent
        folder.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        self._fix_mode(folder, DIR_MODE)

    @staticmethod
    def _fix_mode(path: Path, mode: int) -> None:
        """Tighten a file or folder others can read (made by hand, or by an old version)."""
        try:
            current = stat.S_IMODE(path.stat().st_mode)
            if current != mode:
                path.chmod(mode)
        except OSError as exc:
            logger.warning("%s: cannot set its mode to %o: %s", path, mode, exc.strerror)

    def _warn_once(self, message: str) -> None:
        if self.path not in _warned:
            _warned.add(self.path)
            logger.warning("%s", message)


def _empty() -> dict[str, dict[str, Any]]:
    return {"servers": {}, "clients": {}}


def _parse(text: str) -> dict[str, dict[str, Any]] | None:
    """The file's contents, or None when it is not a credentials file at all."""
    if not text.strip():
        return _empty()
    try:
        raw = parse_json(text)
    except (json.JSONDecodeError, JsonTooDeep):
        return None
    if not isinstance(raw, dict):
        return None
    data = _empty()
    for key in ("servers", "clients"):
        section = raw.get(key)
        if isinstance(section, dict):
            data[key] = section
    # Keys we do not know (a newer version's) are kept on rewrite.
    data.update({k: v for k, v in raw.items() if k not in data})
    return data


def _load(raw: Any, parse: Callable[[Any], _T], path: Path, key: str) -> _T | None:
    if raw is None:
        return None
    try:
        if not isinstance(raw, dict):
            raise ValueError("not an object")
        return parse(raw)
    except (TypeError, ValueError):
        logger.warning("%s: the entry for %s is not usable; ignoring it", path, key)
        return None


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


async def _acquire_async(fd: int, where: Path, wait: float) -> None:
    """Take the lock, polling with `asyncio.sleep` between tries, for at most ``wait``."""
    pause = _LOCK_POLL_FIRST_S
    deadline = time.monotonic() + wait
    while not _try_lock(fd):
        left = deadline - time.monotonic()
        if left <= 0:
            raise _held_too_long(where, wait)
        await asyncio.sleep(min(pause, left))
        pause = min(pause * 2, _LOCK_POLL_MAX_S)


def _acquire_blocking(fd: int, where: Path, wait: float) -> None:
    """Take a lock held only for single writes, blocking for at most ``wait``."""
    pause = _LOCK_POLL_FIRST_S
    deadline = time.monotonic() + wait
    while not _try_lock(fd):
        left = deadline - time.monotonic()
        if left <= 0:
            raise _held_too_long(where, wait)
        time.sleep(min(pause, left))
        pause = min(pause * 2, _LOCK_POLL_MAX_S)


def _held_too_long(where: Path, wait: float) -> CredentialsLocked:
    return CredentialsLocked(
        f"{where} is held by another cat-code for more than {wait:g} s; "
        "if no other cat-code is running, try again"
    )
