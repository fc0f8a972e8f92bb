"""The built-in `glob` tool: files whose path matches a glob, newest first.

The pattern is matched against each file's path relative to the folder searched (``path``,
default the working directory): ``*.py`` only at its top, ``**/*.py`` at any depth, in
linear time (`_glob_match`: no pattern can stall the search; a bad one is a tool error).
The walk is `_walk.walk`'s (``.gitignore`` honoured, ``.git`` and protected files left
out); at most `MAX_GLOB_RESULTS` paths are returned, with a note when there were more.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

from cat_code.tools.base import ToolResult
from cat_code.tools.builtin._fs import (
    FileTool,
    FileToolError,
    absolute,
    in_thread,
    shown,
)
from cat_code.tools.builtin._glob_match import GlobError, compile_glob
from cat_code.tools.builtin._walk import WalkStats, walk

MAX_GLOB_RESULTS = 100


class GlobTool(FileTool):
    """Find files by name pattern."""

    name = "glob"
    description = (
        "Find files by path pattern, e.g. '**/*.py' (any depth), 'src/**/*.{ts,tsx}', '*.md' "
        "(top level only). Searches the working directory, or path. Files ignored by "
        f".gitignore are left out. Returns matching paths, newest first (at most "
        f"{MAX_GLOB_RESULTS})."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob pattern, e.g. **/*.py"},
            "path": {
                "type": "string",
                "description": "Folder to search in (default: the working directory)",
            },
        },
        "required": ["pattern"],
    }
    read_only = True

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        pattern = arguments.get("pattern")
        if not isinstance(pattern, str) or not pattern.strip():
            raise FileToolError("Error: 'pattern' must be a non-empty string")
        raw = arguments.get("path")
        if raw is not None and (not isinstance(raw, str) or not raw.strip()):
            raise FileToolError("Error: 'path' must be a non-empty string when given")
        root = absolute(raw, self.cwd) if raw else (self.cwd or absolute(".", None))
        name = shown(root, self.cwd)
        if not root.is_dir():
            raise FileToolError(f"Error: {name} is not a folder")
        guard = self.protected.check()  # stated once for the call: root and walk
        guard.refuse(root, name)
        try:  # matched in linear time, whatever the pattern (`_glob_match`)
            matcher = compile_glob(pattern.strip().removeprefix("./"))
        except GlobError as exc:
            raise FileToolError(f"Error: {exc}") from None
        stop = threading.Event()
        stats = WalkStats()

        def find() -> list[tuple[float, str]]:
            found = []
            for path in walk(root, guard=guard, stats=stats, stop=stop):
                if matcher.match(path.relative_to(root).as_posix()):
                    try:
                        mtime = os.stat(path).st_mtime
                    except OSError:
                        continue
                    found.append((mtime, shown(path, self.cwd)))
            return found

        try:
            found = await in_thread(find)
        except asyncio.CancelledError:
            stop.set()
            raise
        if not found:
            return ToolResult(f"No files match {pattern} in {name}.")
        found.sort(key=lambda item: (-item[0], item[1]))
        lines = [path for _, path in found[:MAX_GLOB_RESULTS]]
        if len(found) > MAX_GLOB_RESULTS:
            lines.append(
                f"[{len(found) - MAX_GLOB_RESULTS:,} more files match ({len(found):,} in all); "
                "narrow the pattern or the path]"
            )
        if stats.truncated:
            lines.append("[The search stopped early: too many files under this folder.]")
        return ToolResult("\n".join(lines))
