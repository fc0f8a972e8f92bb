"""What no file tool may touch, decided on the real target of a path.

`real_path` resolves every link of a path, its parents' included, as far as they exist:
the file tools and the permission rules decide on where a path really leads, never on
what the model wrote (``cfg/mcp.json`` with ``cfg`` → ``$CAT_CODE_HOME`` is the home's
``mcp.json``). `Protected` is built by whoever builds the tools (`cat_code.host.state.home`):

- ``paths``: whole trees no tool reads, lists or writes (``$CAT_CODE_HOME``: every file of
  it, not a list of names); ``patterns``: (folder, glob) pairs, the files directly in the
  folder whose names match. Compared by real path, so a symlink or ``..`` does not get
  around them, and by device and inode, so a hard link to one of their files does not
  either (a hard link has two names or more: the inodes are only looked up, once per tool
  call, when a file with more than one link is met).
- ``readable``: the one exception, for reads only: a regular file with a single link
  directly in one of these folders (the project's saved tool outputs, which
  `cat_code.host.mcp_tools.output_policy` tells the model to ``read_file``), when a call names it
  (``named_read``). Never a folder, never in a listing or a walk, never a write.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path


class FileToolError(Exception):
    """A file tool refused or failed; ``str`` is the sentence the model reads."""


def real_path(path: Path) -> Path:
    """``path`` with every symlink and ``..`` resolved as far as they exist (a file not
    made yet: its folder's real path, plus its name)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):  # a loop; a NUL byte (refused earlier)
        return Path(os.path.abspath(path))


def nul_refusal(arguments: dict[str, object], keys: tuple[str, ...] = ("path",)) -> str | None:
    """The error for a path argument holding a NUL byte (no file name can), else None."""
    for key in keys:
        value = arguments.get(key)
        if isinstance(value, str) and "\0" in value:
            return (
                f"Error: '{key}' contains a NUL byte (\\0), which no file name can hold; "
                "nothing was done. Give the path without it."
            )
    return None


@dataclass(frozen=True, slots=True)
class Protected:
    """Files no file tool ever touches (see the module docstring)."""

    paths: tuple[Path, ...] = ()
    patterns: tuple[tuple[Path, str], ...] = ()
    readable: tuple[Path, ...] = ()
    _real: tuple[Path, ...] = field(init=False, repr=False, compare=False, default=())
    _real_patterns: tuple[tuple[Path, str], ...] = field(
        init=False, repr=False, compare=False, default=()
    )
    _real_readable: tuple[Path, ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "_real", tuple(real_path(p) for p in self.paths))
        pairs = tuple((real_path(folder), glob) for folder, glob in self.patterns)
        object.__setattr__(self, "_real_patterns", pairs)
        object.__setattr__(self, "_real_readable", tuple(real_path(p) for p in self.readable))

    def check(self) -> ProtectedCheck:
        """A checker for one tool call (the inodes of the protected files are looked up at
        most once in it, and not kept longer: the token store is replaced by rename)."""
        return ProtectedCheck(self)

    def covers(self, path: Path, *, named_read: bool = False) -> bool:
        """Whether ``path`` is, or is inside, a protected path, or is a hard link to a
        protected file (see `ProtectedCheck.covers`)."""
        return self.check().covers(path, named_read=named_read)

    def covers_path(self, target: Path) -> bool:
        """Whether the real path ``target`` is, or is inside, a protected path."""
        for guarded in self._real:
            if target == guarded or target.is_relative_to(guarded):
                return True
        return any(
            target.parent == folder and fnmatchcase(target.name, glob)
            for folder, glob in self._real_patterns
        )

    def readable_file(self, target: Path) -> bool:
        """Whether the real path ``target`` is a file the exception lets tools read: a
        regular file with one link, directly in a ``readable`` folder."""
        if target.parent not in self._real_readable:
            return False
        try:
            info = os.lstat(target)
        except (OSError, ValueError):
            return False
        return stat.S_ISREG(info.st_mode) and info.st_nlink == 1

    def inodes(self) -> frozenset[tuple[int, int]]:
        """(device, inode) of each protected regular file with more than one link."""
        files: list[str] = []
        for folder, glob in self._real_patterns:
            try:
                with os.scandir(folder) as entries:
                    files += [e.path for e in entries if fnmatchcase(e.name, glob)]
            except OSError:
                continue
        for guarded in self._real:
            if guarded.is_dir():
                files += [
                    os.path.join(top, name) for top, _, names in os.walk(guarded) for name in names
                ]
            else:
                files.append(str(guarded))
        found = set()
        for name in files:
            try:
                info = os.lstat(name)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
                found.add((info.st_dev, info.st_ino))
        return frozenset(found)

    def refuse(self, path: Path, shown: str, *, write: bool = False) -> None:
        """Raise `FileToolError` when ``path`` is protected."""
        self.check().refuse(path, shown, write=write)


@dataclass(slots=True)
class ProtectedCheck:
    """`Protected` for the length of one tool call: its files' inodes looked up at most once."""

    protected: Protected
    _inodes: frozenset[tuple[int, int]] | None = None

    def refuse(self, path: Path, shown: str, *, write: bool = False) -> None:
        """Raise `FileToolError` when ``path`` is protected."""
        if self.covers(path, named_read=not write):
            raise FileToolError(refusal(shown))

    def covers(
        self, path: Path, info: os.stat_result | None = None, *, named_read: bool = False
    ) -> bool:
        """Whether ``path`` is protected (see `Protected`); with ``named_read`` (a call
        names ``path`` to read it) a `Protected.readable_file` is not. ``info``: ``path``'s
        own stat when the caller has it (a walk does), so no file is stated twice."""
        target = real_path(path)
        if self.protected.covers_path(target):
            return not (named_read and self.protected.readable_file(target))
        if not self.protected.paths and not self.protected.patterns:
            return False
        if info is None or stat.S_ISLNK(info.st_mode):
            try:
                info = os.stat(path)
            except (OSError, ValueError):
                return False  # nothing there yet (a new file) or unreadable: no content
        if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
            return False  # the only name of its file: no other name is protected
        if self._inodes is None:
            self._inodes = self.protected.inodes()
        return (info.st_dev, info.st_ino) in self._inodes


def refusal(shown: str) -> str:
    """What the model reads when a path is one of cat-code's own."""
    return (
        f"Error: {shown} is one of cat-code's own files ($CAT_CODE_HOME: credentials, "
        "settings, servers, sessions, approvals, saved output); no tool may read, list or "
        "change it, through any name or link. This is a private file; do not try another way."
    )
