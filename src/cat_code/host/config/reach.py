"""What a project entry will send and read once approved, by name, never by value.

An approval is given from what the user is shown, so for a project entry (``./.mcp.json``)
the approve commands, ``mcp list`` and the REPL's question name, besides its command line
or URL, every ``${VAR}`` it expands and where the value goes (``${GITHUB_TOKEN} (header
X-Trace)``), and every file it reads (``oauth.privateKeyFile``, ``oauth.assertionFile``),
as written. Nothing here expands a variable or opens a file: the entry is not approved
yet, and a value shown would be a value leaked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cat_code.base.safe_text import safe_line
from cat_code.host.config.masking import VARIABLE

#: The fields `cat_code.host.config.load.parse_entry` expands ``${VAR}`` in.
_EXPANDED = ("command", "args", "env", "cwd", "url", "headers", "oauth", "protocolVersion")
#: The ``oauth`` fields whose value names a file cat-code reads for the entry.
_FILE_FIELDS = ("privateKeyFile", "assertionFile")


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """(label, string) for every string in ``value`` (a field of the entry)."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            label = {"headers": "header", "env": "env"}.get(where)
            yield from _strings(item, f"{label} {key}" if label else f"{where}.{key}")


def entry_reach(raw: Any) -> str:
    """``sends: ${VAR} (field), ...; reads: path (field)`` for an entry as written; empty
    when it expands no variable and reads no file. Escaped: the entry is the repository's."""
    if not isinstance(raw, dict):
        return ""
    sends: list[str] = []
    reads: list[str] = []
    for key in _EXPANDED:
        for label, text in _strings(raw.get(key), key):
            for match in VARIABLE.finditer(text):
                sends.append(f"${{{match.group(1)}}} ({label})")
    oauth = raw.get("oauth")
    if isinstance(oauth, dict):
        for key in _FILE_FIELDS:
            if isinstance(oauth.get(key), str):
                reads.append(f"{oauth[key]} (oauth.{key})")
    parts = []
    if sends:
        parts.append("sends: " + ", ".join(dict.fromkeys(sends)))
    if reads:
        parts.append("reads: " + ", ".join(reads))
    return safe_line("; ".join(parts))
