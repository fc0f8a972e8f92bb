"""Built-in tools: run a shell command, read a file.

They share the registry with MCP tools. A shell command runs in its own process group
so a timeout kills everything it started; output is capped so a chatty command cannot
flood the model's context.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

from cat_code.tools.base import ProgressCallback, Tool, ToolResult

#: Output beyond this many characters is cut; the model rarely needs more and context is dear.
MAX_OUTPUT_CHARS = 30_000
DEFAULT_SHELL_TIMEOUT_S = 120.0


def _cut(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit} more characters cut]"


class ShellTool(Tool):
    """Run a shell command in the working directory, with a timeout."""

    name = "shell"
    description = (
        "Run a shell command (bash -c) in the current directory and return its exit code, "
        "stdout and stderr. Use timeout_s for long commands (default 120)."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line to run"},
            "timeout_s": {"type": "number", "description": "Seconds before the command is killed"},
        },
        "required": ["command"],
    }
    read_only = False

    def __init__(self, cwd: Path | None = None) -> None:
        self.cwd = cwd

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolResult.error("Error: 'command' must be a non-empty string")
        timeout = arguments.get("timeout_s", DEFAULT_SHELL_TIMEOUT_S)
        if not isinstance(timeout, int | float) or timeout <= 0:
            return ToolResult.error("Error: 'timeout_s' must be a positive number")
        try:
            proc = await asyncio.create_subprocess_exec(
                "bash",
                "-c",
                command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            return ToolResult.error(f"Error: could not start bash: {exc}")
        try:
            async with asyncio.timeout(float(timeout)):
                out, err = await proc.communicate()
        except TimeoutError:
            _kill_group(proc.pid)
            await proc.wait()
            return ToolResult.error(f"Error: command timed out after {timeout} s: {command}")
        except asyncio.CancelledError:
            _kill_group(proc.pid)
            raise
        text = f"exit code: {proc.returncode}\n"
        if out:
            text += "stdout:\n" + out.decode(errors="replace")
        if err:
            text += ("\n" if out else "") + "stderr:\n" + err.decode(errors="replace")
        return ToolResult(content=_cut(text), is_error=proc.returncode != 0)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class ReadFileTool(Tool):
    """Read a text file, optionally a range of lines."""

    name = "read_file"
    description = (
        "Read a text file and return its lines, numbered. Optional offset (first line, 1-based) "
        "and limit (number of lines)."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path to the file"},
            "offset": {"type": "integer", "minimum": 1},
            "limit": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
    }
    read_only = True

    def __init__(self, cwd: Path | None = None) -> None:
        self.cwd = cwd

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        raw_path = arguments.get("path")
        if not isinstance(raw_path, str) or not raw_path:
            return ToolResult.error("Error: 'path' must be a non-empty string")
        offset = arguments.get("offset", 1)
        limit = arguments.get("limit")
        if not isinstance(offset, int) or offset < 1:
            return ToolResult.error("Error: 'offset' must be an integer ≥ 1")
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            return ToolResult.error("Error: 'limit' must be an integer ≥ 1")
        path = Path(raw_path).expanduser()
        if not path.is_absolute() and self.cwd is not None:
            path = self.cwd / path
        try:
            data = await asyncio.to_thread(path.read_bytes)
        except OSError as exc:
            return ToolResult.error(f"Error: cannot read {raw_path}: {exc.strerror or exc}")
        if b"\0" in data[:8192]:
            return ToolResult.error(f"Error: {raw_path} looks like a binary file")
        lines = data.decode(errors="replace").splitlines()
        end = len(lines) if limit is None else offset - 1 + limit
        chosen = lines[offset - 1 : end]
        body = "\n".join(f"{i:6}\t{line}" for i, line in enumerate(chosen, start=offset))
        return ToolResult(content=_cut(body) if body else "(empty)")


def builtin_tools(cwd: Path | None = None) -> list[Tool]:
    """The built-in tools, fresh instances."""
    return [ShellTool(cwd), ReadFileTool(cwd)]
