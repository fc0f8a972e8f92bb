"""`Roots`: the folders cat-code lets MCP servers work in, shared by every client.

The first root is always the working directory; ``--add-dir DIR`` (at start) and
``/add-dir DIR`` (in the REPL) add more. Each root is an existing directory, kept as its
resolved absolute path, listed once, in the order given. A client answers ``roots/list``
(a handshake-era server request, or a 2026-07-28 input request) from `Roots.result`, so
every answer reflects the roots of that moment; `add` tells every subscriber, and each
handshake-era client then sends ``notifications/roots/list_changed`` (the 2026-07-28 era
has no such notification: its servers ask for the roots inside the request that needs
them, and get the new list then). Roots only ever grow during a session.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

Listener = Callable[[], None]


class RootError(ValueError):
    """A folder that cannot be a root (missing, or not a directory); the message names it."""


def check_dir(text: str, *, base: Path | None = None) -> Path:
    """``text`` as the resolved path of an existing directory (relative to ``base`` or the
    working directory, ``~`` expanded), or `RootError` saying what is wrong with it."""
    if not text.strip():
        raise RootError("no directory given")
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    try:
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        raise RootError(f"{text}: no such directory") from None
    except (OSError, RuntimeError) as exc:
        raise RootError(f"{text}: cannot be read ({exc})") from None
    if not resolved.is_dir():
        raise RootError(f"{text}: not a directory")
    return resolved


class Roots:
    """The working directory and the added folders, in order (see the module docstring)."""

    def __init__(self, extra: Iterable[Path] = (), *, cwd: Path | None = None) -> None:
        self._paths: list[Path] = [(cwd or Path.cwd()).resolve()]
        self._listeners: list[Listener] = []
        for path in extra:
            self._append(path)

    @property
    def paths(self) -> list[Path]:
        return list(self._paths)

    def _append(self, path: Path) -> bool:
        path = path.resolve()
        if path in self._paths:
            return False
        self._paths.append(path)
        return True

    def add(self, path: Path) -> bool:
        """Add one folder (already checked); False when it was a root already. Every
        subscriber hears of a real change."""
        if not self._append(path):
            return False
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:  # one client's trouble must not stop the others hearing
                logger.exception("a roots listener failed")
        return True

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` after each change; returns what unsubscribes it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def result(self) -> dict[str, Any]:
        """The ``roots/list`` result: each root as a ``file://`` URI and its folder name."""
        return {"roots": [{"uri": p.as_uri(), "name": p.name or str(p)} for p in self._paths]}


__all__ = [
    "RootError",
    "Roots",
    "check_dir",
]
