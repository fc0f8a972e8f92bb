"""Edit an ``mcp.json`` file in place: change one entry, keep every other byte.

`ConfigFile.read` parses the file strictly (a file that is not valid JSON, nested too
deeply, or whose ``mcpServers`` is not an object, is refused with `ConfigEditError` naming
the file and line: never overwritten). Each edit (`set_entry`, `remove_entry`,
`set_field`) splices new text into the original at the spans a small scanner found, so the
rest of the file keeps its exact bytes — key order, comments-free formatting, other keys,
line endings, a byte order mark. New text follows the file's own style: its indentation unit (spaces
or tabs), one-line objects stay one-line, CRLF files get CRLF. `write` is atomic: a
temporary file in the same folder, flushed to disk, given the old file's mode (a new file,
and the one in ``$CAT_CODE_HOME``, 0600: ``mcp add --header`` and ``mcp import`` may put
literal tokens in it), then
``os.replace`` (through a symlink to its target): `cat_code.base.files.atomic_write`, so a
reader sees the old file or the new one, never half of one. A read–check–write runs inside
`editing` (an inter-process lock per file), so concurrent cat-codes never lose each
other's change; a file changed by someone else (an editor) since it was read is refused.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cat_code.base.files import (
    FileLockTimeout,
    JsonTooDeep,
    atomic_write,
    parse_json,
    read_bounded,
)
from cat_code.host.state.home import edit_lock, home_file_mode
from cat_code.mcp.errors import ConfigError

SERVERS_KEY = "mcpServers"
_BOM = "\ufeff"
_WHITESPACE = " \t\r\n"
_DECODER = json.JSONDecoder()


class ConfigEditError(ConfigError):
    """A config file cannot be edited safely.

    ``message`` says what is wrong with ``file`` (at ``line``:``column``, for bad JSON);
    ``str()`` ends with ``consequence``, what that means for the command that met it
    (``"; nothing was changed"``); `reason` is the text without it, for a caller that
    goes on without this file.
    """

    def __init__(
        self,
        message: str,
        *,
        file: Path | None = None,
        line: int | None = None,
        column: int | None = None,
        consequence: str = "",
    ) -> None:
        super().__init__(message, file=file)
        self.line = line
        self.column = column
        self.consequence = consequence
        where = "" if file is None else f"{file}: "
        if file is not None and line is not None:
            where = f"{file}:{line}:{column}: "
        self.reason = where + message
        self.args = (self.reason + consequence,)


@contextlib.contextmanager
def editing(*paths: Path) -> Iterator[None]:
    """Hold the edit lock of every file in ``paths`` (in one fixed order: two commands
    locking the same files never wait for each other forever) across a read–check–write."""
    order = sorted({os.path.realpath(path): path for path in paths}.items())
    with contextlib.ExitStack() as stack:
        for _, path in order:
            try:
                stack.enter_context(edit_lock(path))
            except FileLockTimeout as exc:
                raise ConfigEditError(
                    f"{path}: another cat-code has been editing it for more than "
                    f"{exc.waited:g} s; nothing was changed, run the command again"
                ) from None
        yield


@dataclass(frozen=True, slots=True)
class _Member:
    """One ``"key": value`` of an object: where its key and value start and end."""

    key: str
    key_start: int
    value_start: int
    value_end: int


@dataclass(frozen=True, slots=True)
class _Object:
    """An object's braces and members, as offsets into the text."""

    open: int
    close: int
    members: tuple[_Member, ...]

    def last(self, key: str) -> _Member | None:
        # json.loads keeps the last of duplicate keys: that one is the entry in effect.
        found = [m for m in self.members if m.key == key]
        return found[-1] if found else None


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WHITESPACE:
        pos += 1
    return pos


def _scan_object(text: str, pos: int) -> _Object:
    """The object starting at ``pos`` (text already known to be valid JSON)."""
    assert text[pos] == "{"
    members: list[_Member] = []
    i = _skip_ws(text, pos + 1)
    if text[i] == "}":
        return _Object(pos, i, ())
    while True:
        key_start = i
        key, i = _DECODER.raw_decode(text, i)
        i = _skip_ws(text, i)
        assert text[i] == ":"
        value_start = _skip_ws(text, i + 1)
        _, value_end = _DECODER.raw_decode(text, value_start)
        members.append(_Member(key, key_start, value_start, value_end))
        i = _skip_ws(text, value_end)
        if text[i] == "}":
            return _Object(pos, i, tuple(members))
        assert text[i] == ","
        i = _skip_ws(text, i + 1)


class ConfigFile:
    """One config file's text and data, edited by splicing; `write` saves it atomically."""

    def __init__(self, path: Path, text: str, *, exists: bool) -> None:
        self.path = path
        self.exists = exists
        #: The bytes read (None: no file): `write` refuses if the file changed since.
        self._original: bytes | None = text.encode("utf-8") if exists else None
        self._bom = text.startswith(_BOM)
        self.text = text.removeprefix(_BOM)
        self._newline = "\r\n" if "\r\n" in self.text else "\n"
        self.data: dict[str, Any] = {}
        self._changed = False
        #: Missing or empty: written fresh, in the style cat-code writes (two spaces).
        self._fresh = not self.text.strip()
        if self._fresh:
            self.text = "{}\n"
        else:
            self._parse()

    @classmethod
    def read(cls, path: Path) -> ConfigFile:
        """The file at ``path`` (an empty one when missing); `ConfigEditError` if unusable."""
        try:
            raw = read_bounded(path)
        except FileNotFoundError:
            return cls(path, "", exists=False)
        except OSError as exc:
            raise ConfigEditError(f"cannot read it: {exc.strerror or exc}", file=path) from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigEditError(
                f"not UTF-8 text (byte {exc.start}); fix or move it",
                file=path,
                consequence=", nothing was changed",
            ) from None
        return cls(path, text, exists=True)

    def _parse(self) -> None:
        try:
            data = parse_json(self.text)
        except JsonTooDeep as exc:
            raise ConfigEditError(
                f"not a config file ({exc})",
                file=self.path,
                consequence="; fix it first, nothing was changed",
            ) from None
        except json.JSONDecodeError as exc:
            raise ConfigEditError(
                f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})",
                file=self.path,
                line=exc.lineno,
                column=exc.colno,
                consequence="; fix it first, nothing was changed",
            ) from None
        if not isinstance(data, dict):
            raise ConfigEditError(
                "must hold a JSON object ({...})",
                file=self.path,
                consequence="; nothing was changed",
            )
        servers = data.get(SERVERS_KEY)
        if servers is not None and not isinstance(servers, dict):
            raise ConfigEditError(
                f"'{SERVERS_KEY}' must be an object",
                file=self.path,
                consequence="; fix it first, nothing was changed",
            )
        self.data = data

    # -- reading -------------------------------------------------------------------------

    @property
    def servers(self) -> dict[str, Any]:
        """The ``mcpServers`` object as parsed (empty when absent)."""
        servers = self.data.get(SERVERS_KEY)
        return servers if isinstance(servers, dict) else {}

    @property
    def changed(self) -> bool:
        return self._changed

    def _top(self) -> _Object:
        return _scan_object(self.text, _skip_ws(self.text, 0))

    def _servers_object(self) -> _Object | None:
        member = self._top().last(SERVERS_KEY)
        if member is None or self.text[member.value_start] != "{":
            return None
        return _scan_object(self.text, member.value_start)

    def _entry_object(self, name: str) -> _Object:
        servers = self._servers_object()
        member = servers.last(name) if servers is not None else None
        if member is None or self.text[member.value_start] != "{":
            raise KeyError(name)
        return _scan_object(self.text, member.value_start)

    # -- editing -------------------------------------------------------------------------

    def set_entry(self, name: str, entry: dict[str, Any]) -> None:
        """Add server ``name`` (at the end of ``mcpServers``) or replace its entry."""
        servers = self._servers_object()
        if servers is None:
            top = self._top()
            existing = top.last(SERVERS_KEY)
            if existing is not None:  # "mcpServers": null
                self._replace_value(existing, {name: entry})
            else:
                self._insert_member(top, SERVERS_KEY, {name: entry})
        else:
            member = servers.last(name)
            if member is not None:
                self._replace_value(member, entry)
            else:
                self._insert_member(servers, name, entry)
        self._reparse()

    def remove_entry(self, name: str) -> bool:
        """Remove server ``name`` (every duplicate of it); whether it was there."""
        removed = False
        while (servers := self._servers_object()) is not None and (
            member := servers.last(name)
        ) is not None:
            self._remove_member(servers, member)
            removed = True
        if removed:
            self._reparse()
        return removed

    def set_field(self, name: str, key: str, value: Any) -> None:
        """Set one field of server ``name``'s entry (`KeyError` when there is no such entry)."""
        entry = self._entry_object(name)
        member = entry.last(key)
        if member is not None:
            self._replace_value(member, value)
        else:
            self._insert_member(entry, key, value)
        self._reparse()

    def _reparse(self) -> None:
        self.data = json.loads(self.text)
        self._changed = True

    def _splice(self, start: int, end: int, new: str) -> None:
        self.text = self.text[:start] + new + self.text[end:]

    def _replace_value(self, member: _Member, value: Any) -> None:
        indent = self._leading_ws(member.key_start)
        self._splice(member.value_start, member.value_end, self._dump(value, indent))

    def _insert_member(self, obj: _Object, key: str, value: Any) -> None:
        unit = self._indent_unit()
        multiline = "\n" in self.text[obj.open : obj.close] or (
            not obj.members and unit is not None
        )
        if not obj.members:
            if not multiline:
                self._splice(obj.open + 1, obj.close, self._member(key, value, None))
                return
            outer = self._leading_ws(obj.open)
            inner = outer + (unit or "  ")
            new = f"{self._newline}{inner}{self._member(key, value, inner)}{self._newline}{outer}"
            self._splice(obj.open + 1, obj.close, new)
            return
        last = obj.members[-1]
        indent = self._line_indent(last.key_start)
        if not multiline or indent is None:
            # One-line object, or the last key shares its line: the new one joins it.
            self._splice(last.value_end, last.value_end, ", " + self._member(key, value, None))
            return
        new = f",{self._newline}{indent}{self._member(key, value, indent)}"
        self._splice(last.value_end, last.value_end, new)

    def _remove_member(self, obj: _Object, member: _Member) -> None:
        index = obj.members.index(member)
        if len(obj.members) == 1:
            self._splice(obj.open + 1, obj.close, "")
        elif index == 0:
            # From this key to the next one: its comma and the gap go with it.
            self._splice(member.key_start, obj.members[1].key_start, "")
        else:
            # From the end of the previous value: the comma before it goes with it.
            self._splice(obj.members[index - 1].value_end, member.value_end, "")

    def _member(self, key: str, value: Any, indent: str | None) -> str:
        return f"{json.dumps(key, ensure_ascii=False)}: {self._dump(value, indent)}"

    def _dump(self, value: Any, indent: str | None) -> str:
        """``value`` as JSON in the file's style, its lines after the first at ``indent``."""
        unit = self._indent_unit()
        if unit is None or indent is None:
            return json.dumps(value, ensure_ascii=False)
        return _pretty(value, unit, indent, self._newline)

    def _leading_ws(self, pos: int) -> str:
        """The whitespace that starts the line ``pos`` is on."""
        start = self.text.rfind("\n", 0, pos) + 1
        line = self.text[start:pos]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def _line_indent(self, pos: int) -> str | None:
        """The whitespace before ``pos`` on its line, or None if something else precedes it."""
        start = self.text.rfind("\n", 0, pos) + 1
        prefix = self.text[start:pos]
        return prefix if prefix.strip(" \t") == "" else None

    def _indent_unit(self) -> str | None:
        """One level of the file's indentation; None for a file written on one line."""
        if self._fresh:
            return "  "
        if "\n" not in self.text.strip():
            return None
        top = self._top()
        for obj_member in top.members:
            indent = self._line_indent(obj_member.key_start)
            if indent:
                return indent
        return "  "

    # -- saving --------------------------------------------------------------------------

    def write(self) -> None:
        """Save the text atomically, keeping the file's mode (a new one is 0600: ``mcp add
        --header`` and ``mcp import`` may put literal tokens in it); create its folder if
        missing."""
        folder = Path(os.path.realpath(self.path)).parent
        if not folder.exists():
            folder.mkdir(parents=True, mode=0o700)
        try:
            now: bytes | None = read_bounded(self.path)
        except FileNotFoundError:
            now = None
        if now != self._original:
            # Another process (or an editor) wrote it meanwhile: never drop their change.
            raise ConfigEditError(
                f"{self.path} changed while cat-code was editing it; nothing was written, "
                "run the command again"
            )
        try:
            data = ((_BOM if self._bom else "") + self.text).encode("utf-8")
        except UnicodeEncodeError as exc:  # a str from surrogateescape'd bytes
            bad = exc.object[exc.start : exc.end].encode("utf-8", "surrogateescape")
            raise ConfigEditError(
                f"{self.path}: the new text holds bytes that are not UTF-8 ({bad!r}); "
                "nothing was written"
            ) from None
        atomic_write(self.path, data, mode=home_file_mode(self.path))
        self.exists = True
        self._original = data
        self._changed = False


def _pretty(value: Any, unit: str, indent: str, newline: str) -> str:
    """Indented JSON, but an array of plain values stays on one line (``"args": ["-y", "x"]``)."""
    inner = indent + unit
    if isinstance(value, dict) and value:
        items = [
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {_pretty(v, unit, inner, newline)}"
            for k, v in value.items()
        ]
        return "{" + newline + ("," + newline).join(items) + newline + indent + "}"
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        items = [inner + _pretty(v, unit, inner, newline) for v in value]
        return "[" + newline + ("," + newline).join(items) + newline + indent + "]"
    return json.dumps(value, ensure_ascii=False)
