"""The built-in `write_file` tool: create a file, or replace one the model has read.

Parent folders are created. An existing file is replaced only when the model read it in
this conversation and it is unchanged since (the `FileLedger`); it keeps its mode and
encoding. The write is atomic, so a reader never sees half a file.
"""

from __future__ import annotations

import os
from typing import Any

from cat_code.base.files import atomic_write
from cat_code.tools.base import FileChange, ToolResult
from cat_code.tools.builtin._fs import (
    Codec,
    FileTool,
    FileToolError,
    absolute,
    decode_text,
    detect_codec,
    in_thread,
    path_argument,
    read_regular,
    shown,
    shown_target,
)


class WriteFileTool(FileTool):
    """Write a whole file."""

    name = "write_file"
    description = (
        "Write a file whole: create it (with any missing parent folders), or replace all of "
        "an existing file's content. An existing file must have been read with read_file in "
        "this conversation and not changed since. To change part of a file, use edit_file "
        "instead."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path to the file"},
            "content": {"type": "string", "description": "The file's whole new content"},
        },
        "required": ["path", "content"],
    }
    read_only = False

    def _arguments(self, arguments: dict[str, Any]) -> tuple[Any, str, str]:
        raw = path_argument(arguments)
        content = arguments.get("content")
        if not isinstance(content, str):
            raise FileToolError("Error: 'content' must be a string")
        path = absolute(raw, self.cwd)
        name = shown(path, self.cwd)
        self.protected.refuse(path, name, write=True)
        return path, name, content

    async def preview(self, arguments: dict[str, Any]) -> FileChange | None:
        try:
            path, name, content = self._arguments(arguments)

            def before() -> str | None:
                if not os.path.lexists(path):
                    return None
                return decode_text(read_regular(path, name).data, name)[0]

            old = await in_thread(before)
        except FileToolError:
            return None
        return FileChange(path, shown_target(path, self.cwd), old, content)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        path, name, content = self._arguments(arguments)

        def write() -> bool:
            self.protected.refuse(path, name, write=True)  # a link swapped in meanwhile
            if os.path.lexists(path) or os.path.islink(path):
                snapshot = read_regular(path, name)
                self.ledger.check(path, snapshot, name)
                codec = detect_codec(snapshot.data) if snapshot.data else Codec()
                data = codec.encode(content, name)
                atomic_write(path, data, mode=snapshot.mode)
                created = False
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                data = content.encode("utf-8")
                atomic_write(path, data, new_file_mode=None)
                created = True
            self.ledger.record_written(path, data)
            return created

        try:
            created = await in_thread(write)
        except OSError as exc:
            raise FileToolError(f"Error: could not write {name}: {exc.strerror or exc}") from None
        lines = len(content.splitlines())
        verb = "Created" if created else "Wrote"
        return ToolResult(f"{verb} {name} ({lines} line{'' if lines == 1 else 's'}).")
