"""Token stores: `MemoryTokenStore` (tests, conformance) and, on disk, `FileTokenStore`.

Tokens are kept per MCP server (its `canonical_server_url`), registrations per
authorization server (its issuer): a registration is never reused at another server.
On disk, ``credentials.json`` is ``{"servers": {url: tokens}, "clients": {issuer:
registration}}``, mode 0600 in a 0700 folder. Every read re-reads the file (another
cat-code may have refreshed); every change is a read-modify-write under an ``fcntl`` lock
on ``credentials.json.lock``, written to a temporary file and moved over with
``os.replace``, so two processes never lose each other's changes or leave half a file. A
file that is not valid JSON is never silently overwritten: it is moved aside first.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import stat
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from cat_code.mcp.auth.types import ClientRegistration, Tokens

logger = logging.getLogger(__name__)

CREDENTIALS_FILE = "credentials.json"
FILE_MODE = 0o600
DIR_MODE = 0o700
#: Polling the lock: first and longest pause between tries (another process holds it for
#: one write, or for one refresh: a token request, bounded by its own timeout).
_LOCK_POLL_FIRST_S = 0.005
_LOCK_POLL_MAX_S = 0.1
#: How long `locked` waits for another process's refresh before giving up.
LOCK_WAIT_S = 60.0
#: How long a write outside `locked` may hold the event loop waiting for the lock: writes
#: are milliseconds; only another process's refresh holds it longer.
_SYNC_LOCK_WAIT_S = 10.0
#: Files already warned about (once per process, however many stores read them).
_warned: set[Path] = set()
_T = TypeVar("_T")


class MemoryTokenStore:
    """A `TokenStore` that lives as long as the process."""

    def __init__(self) -> None:
        self._tokens: dict[str, Tokens] = {}
        self._registrations: dict[str, ClientRegistration] = {}
        self._locks: dict[str, asyncio.Lock] = {}

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

    @asynccontextmanager
    async def locked(self, server: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(server, asyncio.Lock())
        async with lock:
            yield


class CredentialsLocked(OSError):
    """Another cat-code process held ``credentials.json.lock`` for too long."""


class FileTokenStore:
    """A `TokenStore` in ``$CAT_CODE_HOME/credentials.json`` (or ``path``), shared safely
    by every cat-code process."""

    def __init__(self, path: Path | None = None) -> None:
        if path is None:
            from cat_code.mcp.config import cat_code_home

            path = cat_code_home() / CREDENTIALS_FILE
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        #: The lock file's descriptor while this process holds the lock (`locked`).
        self._held_fd: int | None = None
        self._in_process = asyncio.Lock()

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

    @asynccontextmanager
    async def locked(self, server: str) -> AsyncIterator[None]:
        """Hold the file lock (one refresh at a time, in every process) without blocking
        the event loop; writes made inside it use it rather than taking it again."""
        async with self._in_process:
            self._prepare_folder()
            fd = self._open_lock()
            try:
                await _acquire_async(fd, self.lock_path)
                self._held_fd = fd
                try:
                    yield
                finally:
                    self._held_fd = None
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    # -- the file ------------------------------------------------------------------------

    def _read(self) -> dict[str, dict[str, Any]]:
        """The file's contents, shaped; missing or corrupt is empty (corrupt warns once)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _empty()
        except OSError as exc:
            self._warn_once(f"{self.path}: cannot read it ({exc.strerror}); ignoring it")
            return _empty()
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
            text = self.path.read_text(encoding="utf-8")
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
        fd, temp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:  # mkstemp: mode 0600 already
                json.dump(data, out, indent=2, sort_keys=True)
                out.write("\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        _warned.discard(self.path)  # valid again: a later corruption is news

    @contextlib.contextmanager
    def _write_lock(self) -> Iterator[None]:
        if self._held_fd is not None:  # inside `locked`: this process holds it already
            yield
            return
        fd = self._open_lock()
        try:
            _acquire_blocking(fd, self.lock_path)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _open_lock(self) -> int:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        self._fix_mode(self.lock_path, FILE_MODE)
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
        raw = json.loads(text)
    except json.JSONDecodeError:
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


async def _acquire_async(fd: int, where: Path) -> None:
    pause = _LOCK_POLL_FIRST_S
    deadline = time.monotonic() + LOCK_WAIT_S
    while not _try_lock(fd):
        if time.monotonic() >= deadline:
            raise CredentialsLocked(f"{where} is held by another cat-code for {LOCK_WAIT_S:g} s")
        await asyncio.sleep(pause)
        pause = min(pause * 2, _LOCK_POLL_MAX_S)


def _acquire_blocking(fd: int, where: Path) -> None:
    pause = _LOCK_POLL_FIRST_S
    deadline = time.monotonic() + _SYNC_LOCK_WAIT_S
    while not _try_lock(fd):
        if time.monotonic() >= deadline:
            raise CredentialsLocked(
                f"{where} is held by another cat-code for {_SYNC_LOCK_WAIT_S:g} s"
            )
        time.sleep(pause)
        pause = min(pause * 2, _LOCK_POLL_MAX_S)
