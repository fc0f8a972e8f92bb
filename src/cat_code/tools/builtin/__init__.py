"""Built-in tools: shell, read_file, write_file, edit_file, grep and glob.

They share the registry with MCP tools. `builtin_tools` builds one set for a
conversation: the file tools share its `FileLedger` (read before write) and the
`Protected` paths its builder passes in — cat-code's own files (its whole home folder),
which no tool reads, lists or writes whatever the permission rules say, by any name;
`real_path` is where a path really leads, which every decision is made on. This package
imports nothing above the tools floor; the paths come from whoever builds the tools
(`cat_code.host.state.home`).
"""

from __future__ import annotations

from pathlib import Path

from cat_code.tools.base import Tool
from cat_code.tools.builtin._fs import (
    MAX_OUTPUT_CHARS,
    MAX_READ_BYTES,
    FileLedger,
    FileTool,
    FileToolError,
    Protected,
    real_path,
)
from cat_code.tools.builtin._walk import git_root
from cat_code.tools.builtin.edit_file import EditFileTool, apply_edit
from cat_code.tools.builtin.glob import MAX_GLOB_RESULTS, GlobTool
from cat_code.tools.builtin.grep import GrepTool
from cat_code.tools.builtin.read_file import DEFAULT_LINES, MAX_LINE_CHARS, ReadFileTool
from cat_code.tools.builtin.shell import BackgroundStarter, ShellTool
from cat_code.tools.builtin.write_file import WriteFileTool


def builtin_tools(
    cwd: Path | None = None,
    *,
    protected: Protected | None = None,
    ledger: FileLedger | None = None,
    ripgrep: str | bool | None = True,
    background: BackgroundStarter | None = None,
) -> list[Tool]:
    """The built-in tools, fresh instances sharing one `FileLedger` (``ledger``, else a new
    one). ``ripgrep``: see `GrepTool`; ``background``: see `ShellTool`."""
    ledger = ledger or FileLedger()
    protected = protected or Protected()
    return [
        ShellTool(cwd, background=background),
        ReadFileTool(cwd, protected=protected, ledger=ledger),
        WriteFileTool(cwd, protected=protected, ledger=ledger),
        EditFileTool(cwd, protected=protected, ledger=ledger),
        GrepTool(cwd, ripgrep=ripgrep, protected=protected, ledger=ledger),
        GlobTool(cwd, protected=protected, ledger=ledger),
    ]


__all__ = [
    "DEFAULT_LINES",
    "MAX_GLOB_RESULTS",
    "MAX_LINE_CHARS",
    "MAX_OUTPUT_CHARS",
    "MAX_READ_BYTES",
    "BackgroundStarter",
    "EditFileTool",
    "FileLedger",
    "FileTool",
    "FileToolError",
    "GlobTool",
    "GrepTool",
    "Protected",
    "ReadFileTool",
    "ShellTool",
    "WriteFileTool",
    "apply_edit",
    "builtin_tools",
    "git_root",
    "real_path",
]
