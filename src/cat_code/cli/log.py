"""Logging for every ``cat-code`` command: one stderr handler, ``cat-code: LEVEL: message``.

Records carry what servers said (log notifications, stderr lines, errors): each is
formatted through `safe_text`, so none can drive the terminal.
"""

from __future__ import annotations

import logging
import sys

from cat_code.base.safe_text import safe_text


class _SafeFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return safe_text(super().format(record))


def configure_logging(verbosity: int) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_SafeFormatter("cat-code: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbosity > 0 else logging.WARNING)
    if verbosity < 2:
        # Third-party HTTP libraries are very chatty at debug level; -vv shows them too.
        # asyncio's "Using selector: EpollSelector" says nothing about MCP either.
        for noisy in ("httpx", "httpcore", "httpx2", "httpcore2", "anthropic", "openai", "asyncio"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
