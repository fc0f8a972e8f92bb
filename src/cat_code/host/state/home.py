"""``$CAT_CODE_HOME``: where cat-code keeps its own files, and the paths of those files.

Everything cat-code writes for itself lives under this one folder (default
``~/.cat-code``): the user's ``mcp.json`` and ``settings.json``, the token store, run
records, saved tool output, the REPL's history, remembered protocol eras. The library
(`cat_code.mcp`) is handed paths from here; it never looks for them itself.

Private: `ensure_home` makes the folder (and any folder in it) 0700 and tightens one an
old version left open; every file cat-code writes there is 0600 (`write_private`, or
`cat_code.base.files.atomic_write` with `home_file_mode`), and one an old version left
readable by others is tightened to 0600 when written or opened (`keep_private`).
`edit_lock` is the lock held across a read–check–write of a file cat-code edits
(``mcp.json``, ``settings.json``, the project's too): its lock file lives in
``$CAT_CODE_HOME/locks/``, never beside the file, so a project folder gets no stray
``.lock`` file.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from cat_code.base.files import LOCK_WAIT_S, PRIVATE_FILE_MODE, atomic_write, file_lock

if TYPE_CHECKING:
    from cat_code.mcp.auth.store import FileTokenStore
    from cat_code.tools.builtin import Protected

logger = logging.getLogger(__name__)

#: The token store's file name in the home folder.
CREDENTIALS_FILE = "credentials.json"
#: The home folder and every folder cat-code makes in it: its owner's only.
PRIVATE_DIR_MODE = 0o700
#: Where `edit_lock` keeps its lock files, inside the home folder.
LOCKS_DIR = "locks"


def cat_code_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$CAT_CODE_HOME``, else ``~/.cat-code``."""
    env = os.environ if environ is None else environ
    value = env.get("CAT_CODE_HOME")
    return Path(value).expanduser() if value else Path.home() / ".cat-code"


def token_store() -> FileTokenStore:
    """The token store every server of this user shares (``credentials.json``)."""
    from cat_code.mcp.auth.store import FileTokenStore

    return FileTokenStore(cat_code_home() / CREDENTIALS_FILE)


def ensure_home(*parts: str) -> Path:
    """``$CAT_CODE_HOME`` (or the folder ``parts`` inside it), made 0700 if missing; a
    folder of these readable by others (made by an old version) is tightened to 0700."""
    home = cat_code_home()
    # The home first, so it is never made with the umask's mode; if that fails, making
    # the folder itself raises the error that names the place at fault.
    with contextlib.suppress(OSError):
        home.mkdir(mode=PRIVATE_DIR_MODE, parents=True)
    # Level by level (``tool-output/<project>``): mkdir gives the parents it makes the
    # umask's mode, not ``mode``.
    levels = [home.joinpath(*parts[:n]) for n in range(1, len(parts) + 1)]
    for n, level in enumerate(levels):
        level.mkdir(mode=PRIVATE_DIR_MODE, parents=n == 0, exist_ok=True)
    for path in (home, *levels):
        _tighten(path, PRIVATE_DIR_MODE)
    return home.joinpath(*parts)


def private_file(path: Path) -> Path:
    """``path`` (a file in the home folder) created empty if missing, 0600 either way: for a
    file another library appends to (the REPL's history)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    os.close(fd)
    keep_private(path)
    return path


def keep_private(path: Path) -> None:
    """``path`` (an existing file in the home folder) tightened to 0600 if others can read it."""
    _tighten(path, PRIVATE_FILE_MODE)


def home_file_mode(path: Path) -> int | None:
    """The mode to write ``path`` with (`atomic_write`'s ``mode``): 0600 for a file in the
    home folder, even one an old version left open; None (the file's own mode kept) for
    any other, such as a project's file. A link in the home folder counts as in it."""
    home = cat_code_home()
    for folder, file in (
        (os.path.abspath(home), os.path.abspath(path)),
        (os.path.realpath(home), os.path.realpath(path)),
    ):
        if Path(file).is_relative_to(folder):
            return PRIVATE_FILE_MODE
    return None


def write_private(path: Path, data: bytes | str) -> None:
    """Write ``path`` (a file in the home folder) atomically, 0600, its folder made 0700."""
    path.parent.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    atomic_write(path, data, mode=PRIVATE_FILE_MODE)


@contextlib.contextmanager
def edit_lock(path: Path, *, timeout: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the lock for editing ``path`` (any file, in the home folder or not) across a
    read–check–write; every cat-code editing the same file (by any name: links are
    resolved) waits for it. Raises `cat_code.base.files.FileLockTimeout`."""
    real = os.path.realpath(path)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:32]
    lock = ensure_home(LOCKS_DIR) / f"{digest}.lock"
    with file_lock(lock, timeout=timeout):
        yield


def _tighten(path: Path, mode: int) -> None:
    try:
        if stat.S_IMODE(path.stat().st_mode) & ~mode:
            path.chmod(mode)
    except OSError as exc:
        logger.warning("%s: cannot set its mode to %o: %s", path, mode, exc.strerror)


def private_files(
    environ: Mapping[str, str] | None = None, *, readable: tuple[Path, ...] = ()
) -> Protected:
    """cat-code's own files, as the file tools are told to guard them: the whole home folder
    (credentials, settings, servers, memory, sessions, approvals, saved output, jobs, tasks
    and whatever comes next), by any name. ``readable``: folders whose files a tool may
    still read when a call names one (the session's own saved outputs, see
    `cat_code.tools.builtin.Protected`)."""
    from cat_code.tools.builtin import Protected  # only sessions with file tools need it

    return Protected(paths=(cat_code_home(environ),), readable=readable)
