"""The built-in `edit_file` tool: replace exact text in a file the model has read.

`apply_edit` is the whole rule, pure, shared with the approval preview: ``old_string``
must occur exactly once (or ``replace_all``), differ from ``new_string`` and not be empty.
A file whose line breaks are all CRLF is matched and written in CRLF whatever the model
sends; the file's encoding (BOM included) and mode are kept; the write is atomic. Every
refusal happens before anything is written, so a refused edit leaves the file
byte-identical.
"""

from __future__ import annotations

from typing import Any

from cat_code.base.files import atomic_write
from cat_code.tools.base import FileChange, ToolResult
from cat_code.tools.builtin._fs import (
    Codec,
    FileTool,
    FileToolError,
    Snapshot,
    absolute,
    decode_text,
    in_thread,
    path_argument,
    read_regular,
    shown,
    shown_target,
)


def apply_edit(text: str, old: str, new: str, *, replace_all: bool, name: str) -> str:
    """``text`` with ``old`` replaced by ``new``, or `FileToolError` saying why not."""
    if old == "":
        raise FileToolError(
            "Error: old_string is empty. Give the exact text to replace (with a few lines "
            "around it to make it unique); to create a file, use write_file. Nothing was written."
        )
    crlf = "\r\n" in text and "\n" not in text.replace("\r\n", "")
    if crlf:  # the model sees lines, not line breaks: match and write CRLF for it
        work, old, new = (s.replace("\r\n", "\n") for s in (text, old, new))
    else:
        work = text
    if old == new:
        raise FileToolError(
            "Error: old_string and new_string are the same; there is nothing to change. "
            "Nothing was written."
        )
    count = work.count(old)
    if count == 0 and not crlf and "\r\n" in work and "\n" in old:
        # Mixed line breaks: the model's "\n" may stand for a CRLF here.
        crlf_old, crlf_new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        if work.count(crlf_old):
            old, new, count = crlf_old, crlf_new, work.count(crlf_old)
    if count == 0:
        raise FileToolError(
            f"Error: old_string was not found in {name}. It must match the file exactly "
            "(spaces, indentation, line breaks), without read_file's line numbers; read the "
            "file again if unsure. Nothing was written."
        )
    if count > 1 and not replace_all:
        raise FileToolError(
            f"Error: old_string occurs {count} times in {name}. Include more of the "
            "surrounding text to pick one, or set replace_all to true to replace every one. "
            "Nothing was written."
        )
    result = work.replace(old, new) if replace_all else work.replace(old, new, 1)
    return result.replace("\n", "\r\n") if crlf else result


def load_text(path: Any, name: str) -> tuple[Snapshot, str, Codec]:
    """A text file whole, for changing it (blocking; run it in a thread)."""
    snapshot = read_regular(path, name)
    if not snapshot.whole:
        raise FileToolError(
            f"Error: {name} is too large ({snapshot.size:,} bytes) to edit with this tool; "
            "nothing was written"
        )
    text, codec = decode_text(snapshot.data, name)
    return snapshot, text, codec


class EditFileTool(FileTool):
    """Replace exact text in a file."""

    name = "edit_file"
    description = (
        "Replace exact text in a file: old_string (copied exactly from the file, without "
        "read_file's line numbers, with enough surrounding lines to be unique) becomes "
        "new_string. Fails, changing nothing, if old_string is missing, occurs more than once "
        "(unless replace_all is true) or equals new_string. The file must have been read with "
        "read_file in this conversation and not changed since. Keeps line endings, encoding "
        "and permissions. Prefer this to write_file for changing existing files."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path to the file"},
            "old_string": {"type": "string", "description": "The exact text to replace"},
            "new_string": {"type": "string", "description": "The text to put in its place"},
            "replace_all": {
                "type": "boolean",
                "description": "Replace every occurrence (default false: exactly one)",
            },
        },
        "required": ["path", "old_string", "new_string"],
    }
    read_only = False

    def _arguments(self, arguments: dict[str, Any]) -> tuple[Any, str, str, str, bool]:
        raw = path_argument(arguments)
        old, new = arguments.get("old_string"), arguments.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            raise FileToolError("Error: 'old_string' and 'new_string' must be strings")
        replace_all = arguments.get("replace_all", False)
        if not isinstance(replace_all, bool):
            raise FileToolError("Error: 'replace_all' must be true or false")
        path = absolute(raw, self.cwd)
        name = shown(path, self.cwd)
        self.protected.refuse(path, name, write=True)
        return path, name, old, new, replace_all

    async def preview(self, arguments: dict[str, Any]) -> FileChange | None:
        try:
            path, name, old, new, replace_all = self._arguments(arguments)
            _, text, _ = await in_thread(lambda: load_text(path, name))
            after = apply_edit(text, old, new, replace_all=replace_all, name=name)
        except FileToolError:
            return None
        return FileChange(path, shown_target(path, self.cwd), text, after)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        path, name, old, new, replace_all = self._arguments(arguments)

        def edit() -> int:
            snapshot, text, codec = load_text(path, name)
            self.ledger.check(path, snapshot, name)
            after = apply_edit(text, old, new, replace_all=replace_all, name=name)
            data = codec.encode(after, name)
            self.protected.refuse(path, name, write=True)  # a link swapped in meanwhile
            atomic_write(path, data, mode=snapshot.mode)
            self.ledger.record_written(path, data)
            return text.count(old) if replace_all else 1

        try:
            count = await in_thread(edit)
        except OSError as exc:
            raise FileToolError(f"Error: could not write {name}: {exc.strerror or exc}") from None
        what = f"{count} occurrences" if count > 1 else "1 occurrence"
        return ToolResult(f"Edited {name}: replaced {what}.")
