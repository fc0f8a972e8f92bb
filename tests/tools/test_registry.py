from __future__ import annotations

from typing import Any

import pytest

from cat_code.tools import DuplicateToolError, Tool, ToolRegistry, ToolResult
from cat_code.tools.base import BUILTIN, ToolOwner
from cat_code.tools.builtin import ReadFileTool, ShellTool, builtin_tools


class _Named(Tool):
    def __init__(self, name: str, owner: ToolOwner) -> None:
        self.name = name
        self.owner = owner
        self.description = ""
        self.input_schema = {"type": "object"}

    async def execute(self, arguments: dict[str, Any], *, progress: Any = None) -> ToolResult:
        return ToolResult("ok")


def test_registering_a_taken_name_is_an_error_naming_both_owners() -> None:
    registry = ToolRegistry([_Named("x", BUILTIN)])
    with pytest.raises(DuplicateToolError) as info:
        registry.register(_Named("x", ToolOwner("echo")))
    assert "builtin" in str(info.value) and "mcp:echo" in str(info.value)


def test_the_registry_keeps_registration_order_and_finds_tools_by_name() -> None:
    registry = ToolRegistry(builtin_tools())
    registry.register(_Named("mcp__a__b", ToolOwner("a")))
    builtins = ["shell", "read_file", "write_file", "edit_file", "grep", "glob"]
    assert registry.names() == [*builtins, "mcp__a__b"]
    assert registry.get("mcp__a__b") is not None
    assert registry.get("nope") is None
    assert registry.unregister("mcp__a__b") is not None
    assert "mcp__a__b" not in registry


async def test_the_shell_tool_reports_exit_code_and_output() -> None:
    result = await ShellTool().execute({"command": "echo hi; echo oops >&2; exit 3"})
    assert result.is_error
    assert "exit code: 3" in result.content and "hi" in result.content and "oops" in result.content


async def test_the_shell_tool_kills_a_command_at_its_timeout() -> None:
    result = await ShellTool().execute({"command": "sleep 30", "timeout_s": 0.2})
    assert result.is_error and "timed out" in result.content


async def test_read_file_numbers_lines_and_reports_missing_files(tmp_path: Any) -> None:
    path = tmp_path / "f.txt"
    path.write_text("one\ntwo\nthree\n")
    result = await ReadFileTool().execute({"path": str(path), "offset": 2, "limit": 1})
    assert not result.is_error
    assert result.content.splitlines() == [
        "     2\ttwo",
        f"[{path} has 3 lines; shown line 2. Read on with offset 3.]",
    ]
    missing = await ReadFileTool().execute({"path": str(tmp_path / "nope")})
    assert missing.is_error and "nope" in missing.content
