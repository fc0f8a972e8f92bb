"""The built-in `read_file` tool: a text file's lines, numbered as ``cat -n`` numbers them.

The first `DEFAULT_LINES` lines unless an ``offset``/``limit`` asks for others; a line
longer than `MAX_LINE_CHARS` is cut, the whole answer is capped at `MAX_READ_CHARS`,
and a note says where to read on. Lines are counted as Python's ``str.splitlines`` counts
them (the numbers `cat_code.host.mcp_tools.output_policy` hints at). Only regular text files are
read, at most `MAX_READ_BYTES` of one (see `_fs`); each read is noted in the
conversation's `FileLedger`, which edit_file and write_file check.
"""

from __future__ import annotations

from typing import Any

from cat_code.tools.base import ToolResult
from cat_code.tools.builtin._fs import (
    MAX_READ_BYTES,
    FileTool,
    FileToolError,
    absolute,
    decode_text,
    in_thread,
    path_argument,
    read_regular,
    shown,
)

#: Lines returned when the model does not say how many.
DEFAULT_LINES = 2000
#: A line longer than this is cut (minified code, data on one line).
MAX_LINE_CHARS = 2000
#: The most one answer holds (≈30k tokens): 2,000 lines of ordinary code fit.
MAX_READ_CHARS = 120_000


class ReadFileTool(FileTool):
    """Read a text file, optionally a range of lines."""

    name = "read_file"
    description = (
        "Read a text file. Returns its lines numbered like `cat -n` (number, tab, text): the "
        f"first {DEFAULT_LINES} lines unless offset (first line, 1-based) and limit (number of "
        f"lines) ask for others; lines over {MAX_LINE_CHARS} characters are cut. A note at the "
        "end says when more remains. Read a file before changing it with edit_file or "
        "write_file. Relative paths are from the working directory."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path to the file"},
            "offset": {"type": "integer", "minimum": 1, "description": "First line (1-based)"},
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines"},
        },
        "required": ["path"],
    }
    read_only = True

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        raw = path_argument(arguments)
        offset = arguments.get("offset", 1)
        limit = arguments.get("limit")
        if offset is None:
            offset = 1
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 1:
            raise FileToolError("Error: 'offset' must be an integer ≥ 1")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise FileToolError("Error: 'limit' must be an integer ≥ 1")
        if limit is not None and limit < 1:
            raise FileToolError("Error: 'limit' must be an integer ≥ 1")
        path = absolute(raw, self.cwd)
        name = shown(path, self.cwd)
        self.protected.refuse(path, name)
        snapshot = await in_thread(lambda: read_regular(path, name))
        data = snapshot.data
        if not snapshot.whole:  # cut at a line break, never inside a character
            data = data[: data.rfind(b"\n") + 1] or data
        text, _ = decode_text(data, name)
        self.ledger.record(path, snapshot)
        lines = text.splitlines()
        total = len(lines)
        if total == 0:
            return ToolResult(f"({name} is empty)")
        if offset > total:
            raise FileToolError(
                f"Error: {name} has {total} line{'' if total == 1 else 's'}; offset {offset} "
                "is past its end"
            )
        wanted = DEFAULT_LINES if limit is None else limit
        end = min(total, offset - 1 + wanted)
        body: list[str] = []
        size = 0
        last = offset - 1
        for number in range(offset, end + 1):
            line = lines[number - 1]
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + f"… [line cut: {len(line):,} characters]"
            entry = f"{number:6}\t{line}"
            if body and size + len(entry) + 1 > MAX_READ_CHARS:
                break
            body.append(entry)
            size += len(entry) + 1
            last = number
        notes = []
        if last < total:
            what = name if snapshot.whole else f"the part of {name} that can be read"
            notes.append(
                f"[{what} has {total:,} lines; shown {_span(offset, last)}. Read on with "
                f"offset {last + 1}.]"
            )
        if not snapshot.whole:
            notes.append(
                f"[Only the first {MAX_READ_BYTES // (1024 * 1024)} MiB of this "
                f"{snapshot.size:,}-byte file can be read; search the rest with grep, or use "
                "the shell.]"
            )
        return ToolResult("\n".join(body + notes))


def _span(first: int, last: int) -> str:
    return f"line {first:,}" if first == last else f"{first:,}–{last:,}"
