"""Text a server or the network supplied, made safe to print on a terminal.

A tool description, a server name, a stderr line, an error message, a tool result, a log
notification, a prompt or an authorization URL may carry escape sequences that would
retitle the window, clear the screen or rewrite what is shown. Every output path prints
such text through `safe_text` (the CLI's `print_line`/`print_error` and log formatter,
the REPL's console): each control character — C0 except tab and newline, DEL, C1 — is
shown as its ``\\xNN`` escape (``\\x1b``, ``\\x9b``), visible and never acted on. The
result holds no control character but tab and newline, so escaping twice changes
nothing. `safe_line` also escapes newlines and tabs, for one-line fields (names,
descriptions) where a newline could fake another line; `safe_json` is `json.dumps`
whose output is safe too (JSON escapes C0 itself, but passes DEL and C1 raw).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, TextIO

#: C0 but tab and newline (a CR only when a newline does not follow it), DEL, and C1.
_UNSAFE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
#: `_UNSAFE` and newlines and tabs: what a one-line field may not hold.
_UNSAFE_IN_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
#: What JSON leaves raw inside a string that a terminal acts on: DEL and C1.
_UNSAFE_IN_JSON = re.compile(r"[\x7f-\x9f]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    return _NAMED.get(char) or f"\\x{ord(char):02x}"


def safe_text(text: str) -> str:
    """``text`` with every control character but tab and newline shown as ``\\xNN``."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def safe_line(text: str) -> str:
    """`safe_text` for a one-line field: newlines and tabs escaped too (``\\n``, ``\\t``)."""
    return _UNSAFE_IN_LINE.sub(_escape, text) if _UNSAFE_IN_LINE.search(text) else text


def safe_json(value: Any, *, indent: int | None = 2) -> str:
    """`json.dumps` (non-ASCII kept readable) with DEL and C1 written as ``\\u00NN``: still
    the same JSON, and safe on a terminal (json escapes the rest of C0 itself)."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


class SafeWriter:
    """A text stream's ``write``/``flush`` with `safe_text` applied: for code below the
    host that prints to a stream it is handed (the sign-in's authorization URL).
    ``stream`` None: ``sys.stderr`` as it is at each write (the REPL may patch it)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return (self._stream or sys.stderr).write(safe_text(text))

    def flush(self) -> None:
        (self._stream or sys.stderr).flush()
