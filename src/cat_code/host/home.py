"""``$CAT_CODE_HOME``: where cat-code keeps its own files, and the paths of those files.

Everything cat-code writes for itself lives under this one folder (default
``~/.cat-code``): the user's ``mcp.json`` and ``settings.json``, the token store, run
records, saved tool output. The library (`cat_code.mcp`) is handed paths from here; it
never looks for them itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from cat_code.tools.builtin import Protected

if TYPE_CHECKING:
    from cat_code.mcp.auth.store import FileTokenStore

#: The token store's file name in the home folder.
CREDENTIALS_FILE = "credentials.json"


def cat_code_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$CAT_CODE_HOME``, else ``~/.cat-code``."""
    env = os.environ if environ is None else environ
    value = env.get("CAT_CODE_HOME")
    return Path(value).expanduser() if value else Path.home() / ".cat-code"


def token_store() -> FileTokenStore:
    """The token store every server of this user shares (``credentials.json``)."""
    from cat_code.mcp.auth.store import FileTokenStore

    return FileTokenStore(cat_code_home() / CREDENTIALS_FILE)


#: Files in the home folder no built-in tool may read, list or write, whatever the rules:
#: the token store and its lock and temporary files, every lock, the REPL history (pasted
#: arguments), the user's permission rules (a model must not grant itself tools), and
#: per-project approvals (other projects' settings).
PRIVATE_FILES = (
    f"{CREDENTIALS_FILE}*", "*.lock", "history", "settings.json", "*approv*", "*trust*",
)  # fmt: skip


def private_files(environ: Mapping[str, str] | None = None) -> Protected:
    """cat-code's own secrets, as the file tools are told to guard them."""
    home = cat_code_home(environ)
    return Protected(patterns=tuple((home, glob) for glob in PRIVATE_FILES))
