"""Red-team finding 6 (review of issue 24): a ``~user`` that names no user, and a NUL byte
in a shell command, are plain tool errors — never an exception out of the tool or out of
the permission check that looks at the path first."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cat_code.agent.permissions import Permissions
from cat_code.tools.builtin import FileLedger, builtin_tools


@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file", "glob", "grep"])
async def test_finding_6_a_tilde_user_that_does_not_exist_is_a_clear_tool_error(
    tmp_path: Path, tool: str
) -> None:
    tools = {t.name: t for t in builtin_tools(tmp_path, ledger=FileLedger(), ripgrep=None)}
    arguments = {
        "path": "~nosuchuser-cat-code/x", "pattern": "x", "content": "x",
        "old_string": "a", "new_string": "b",
    }  # fmt: skip
    permissions = Permissions(approve_all=True, workspace=lambda: [tmp_path])
    async with asyncio.timeout(20):
        decision = await permissions.authorize(tools[tool], arguments)
        result = await tools[tool].execute(arguments)
    assert not decision.allowed and "no such user 'nosuchuser-cat-code'" in decision.reason
    assert result.is_error and "cannot expand '~nosuchuser-cat-code'" in result.content
    assert not (tmp_path / "~nosuchuser-cat-code").exists()


async def test_finding_6_a_nul_byte_in_a_shell_command_is_a_plain_tool_error(
    tmp_path: Path,
) -> None:
    shell = {t.name: t for t in builtin_tools(tmp_path)}["shell"]
    async with asyncio.timeout(20):
        result = await shell.execute({"command": "echo \0"})
    assert result.is_error and "NUL byte" in result.content and "ValueError" not in result.content
