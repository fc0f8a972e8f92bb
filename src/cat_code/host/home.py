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
