"""Which stdio servers ignore stdin EOF, remembered in ``$CAT_CODE_HOME/eof.json``.

A finished command closes each server's stdin first and gives it a grace to exit by
itself before SIGTERM (`cat_code.mcp.transports.stdio`). Many Node servers never exit on
EOF, so every command would sit out that grace on them; the stdio transport asks this
memory, and for a server seen ignoring EOF last time it waits only a token grace (EOF
still comes first). The file holds SHA-256 digests of the command line and working
directory, never the words themselves (an argument may carry an expanded secret), and is
written (0600, atomically, under the edit lock) only when a verdict changes. A file that
cannot be read is taken for empty: the cost is one full grace.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence

from cat_code.base.files import read_bounded
from cat_code.host.state.home import cat_code_home, edit_lock, write_private

logger = logging.getLogger(__name__)

EOF_FILE = "eof.json"
_VERSION = 1


def command_digest(command: Sequence[str], cwd: str | None) -> str:
    """The key of one command line run in one folder (no secret can be read back from it)."""
    text = json.dumps([list(command), cwd], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


class FileEofMemory:
    """The `EofMemory` of a stdio transport, in ``$CAT_CODE_HOME/eof.json`` (looked up
    afresh at each use, so a changed ``CAT_CODE_HOME`` is honoured)."""

    def _read(self) -> set[str]:
        path = cat_code_home() / EOF_FILE
        try:
            data = json.loads(read_bounded(path).decode("utf-8"))
        except FileNotFoundError:
            return set()
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            logger.debug("%s: not used (%s)", path, exc)
            return set()
        found = data.get("ignoresEof") if isinstance(data, dict) else None
        return {d for d in found if isinstance(d, str)} if isinstance(found, list) else set()

    def ignores_eof(self, command: Sequence[str], cwd: str | None) -> bool:
        return command_digest(command, cwd) in self._read()

    def remember(self, command: Sequence[str], cwd: str | None, ignores: bool) -> None:
        path = cat_code_home() / EOF_FILE
        digest = command_digest(command, cwd)
        try:
            with edit_lock(path):
                known = self._read()
                if (digest in known) == ignores:
                    return
                if ignores:
                    known.add(digest)
                else:
                    known.discard(digest)
                text = json.dumps({"version": _VERSION, "ignoresEof": sorted(known)}, indent=2)
                write_private(path, text + "\n")
        except OSError as exc:  # a memory, not a duty: the next close waits the full grace
            logger.debug("%s: not written (%s)", path, exc)


#: The one memory every stdio server of this process shares (it holds no state).
EOF_MEMORY = FileEofMemory()

__all__ = ["EOF_FILE", "EOF_MEMORY", "FileEofMemory", "command_digest"]
