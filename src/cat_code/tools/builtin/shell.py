"""The built-in `shell` tool: run a command in the working directory.

A shell command runs in its own process group
so a timeout kills everything it started; output is capped so a chatty command cannot
flood the model's context. With ``run_in_background: true`` the command is handed to a
`BackgroundStarter` (the host's job manager, given by whoever builds the tools), which
answers at once with a job id; the permission question is the same, since the tool is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from cat_code.tools.base import ProgressCallback, Tool, ToolResult
from cat_code.tools.builtin._fs import cut

DEFAULT_SHELL_TIMEOUT_S = 120.0

#: Starts ``command`` in ``cwd`` as a background job; the result names the job.
BackgroundStarter = Callable[[str, Path | None], Awaitable[ToolResult]]


class ShellTool(Tool):
    """Run a shell command in the working directory, with a timeout."""

    name = "shell"
    description = (
        "Run a shell command (bash -c) in the current directory and return its exit code, "
        "stdout and stderr. Use timeout_s for long commands (default 120). For a command "
        "that keeps running (a server, a watcher, a long build), set run_in_background: "
        "true: it answers at once with a job id; read its output with job_output, end it "
        "with job_stop; you are told when it ends."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line to run"},
            "timeout_s": {"type": "number", "description": "Seconds before the command is killed"},
            "run_in_background": {
                "type": "boolean",
                "description": "Run it as a background job and answer at once with its id",
            },
        },
        "required": ["command"],
    }
    read_only = False

    def __init__(self, cwd: Path | None = None, *, background: BackgroundStarter | None = None):
        self.cwd = cwd
        self.background = background

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return ToolResult.error("Error: 'command' must be a non-empty string")
        if "\0" in command:  # no argument of a process can hold one: say so, plainly
            return ToolResult.error(
                "Error: 'command' contains a NUL byte (\\0), which no command line can hold; "
                "nothing was run. Give the command without it."
            )
        if arguments.get("run_in_background") is True:
            if self.background is None:
                return ToolResult.error("Error: background jobs are not available here")
            return await self.background(command, self.cwd)
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
        return ToolResult(content=cut(text), is_error=proc.returncode != 0)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
