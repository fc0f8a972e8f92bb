"""Text that is valid UTF-8: no lone surrogates, whatever the file system or argv held.

Python hands a byte that is not UTF-8 to us as a lone surrogate (``b"bad\\xff.txt"`` is
``"bad\\udcff.txt"``, PEP 383): fine for opening the file again, fatal for anything that
encodes the text as UTF-8 (a JSON request body, a session file). So text leaving the
process — every tool result (`cat_code.tools.base.ToolResult`), every saved session record
(`cat_code.agent.history.store`) — goes through `without_surrogates`, which shows each such
character as its ``\\udcff`` escape: visible, and never an encoding error. `argv_text`
recovers what the user typed from an argument a legacy locale (``LC_ALL=C``,
``PYTHONUTF8=0``) decoded as ASCII: it is UTF-8 text, not a file name.
"""

from __future__ import annotations

import os
from typing import Any


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate shown as its ``\\udcNN`` escape (unchanged, and
    cheap, when it has none)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def json_without_surrogates(value: Any) -> Any:
    """A JSON-ready ``value`` with `without_surrogates` applied to every string in it."""
    if isinstance(value, str):
        return without_surrogates(value)
    if isinstance(value, dict):
        return {without_surrogates(str(k)): json_without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_without_surrogates(v) for v in value]
    return value


def argv_text(arg: str) -> str:
    """A command-line argument that is text (a prompt), as the UTF-8 the user typed: a
    legacy locale decoded its bytes with surrogate escapes; bytes that are not UTF-8 either
    become U+FFFD."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(arg).decode("utf-8", "replace")
    return arg


__all__ = ["argv_text", "json_without_surrogates", "without_surrogates"]
