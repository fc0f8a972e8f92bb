"""cat-code's own files against the file tools (issue 24, findings 2, 10 and 13): the whole
``$CAT_CODE_HOME`` by any name, NUL bytes in paths, and the saved tool outputs.

The tools are the ones a session builds (`builtin_tool_list`: the real home, the
project's saved-output folder readable by name); calls are decided and run as the agent
loop does them.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from cat_code.agent.permissions import Permissions
from cat_code.agent.session import builtin_tool_list
from cat_code.host.mcp_tools.output_policy import output_dir, save_output
from cat_code.tools.base import Tool, ToolResult
from cat_code.tools.builtin import FileLedger

SECRET = "tok-SECRET-1234"
#: A sample of what lives in the home, none of which is on a list of names.
HOME_FILES = (
    "mcp.json",
    "AGENTS.md",
    "credentials.json",
    "settings.json",
    "sessions/2026-12-01-abc.jsonl",
    "approvals/servers.json",
    "jobs/7/output.log",
    "tasks/t1.json",
    "new-thing-of-next-year.txt",
)


def tools_of(project: Path) -> dict[str, Tool]:
    return {t.name: t for t in builtin_tool_list(project, FileLedger())}


async def run(tool: Tool, permissions: Permissions | None = None, **arguments: Any) -> ToolResult:
    """Decide (``--yes`` unless told) and run, as the loop does; a refusal as its error."""
    permissions = permissions or Permissions(approve_all=True)
    async with asyncio.timeout(20):
        decision = await permissions.authorize(tool, arguments)
        if not decision.allowed:
            return ToolResult.error(decision.reason)
        return await tool.execute(arguments)


@pytest.fixture
def cat_code_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The home beside the project, so that a search of their parent folder meets it."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CAT_CODE_HOME", str(home))
    return home


@pytest.fixture
def project(tmp_path: Path, cat_code_home: Path) -> Path:
    for name in HOME_FILES:
        path = cat_code_home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name}: {SECRET}\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("nothing to see\n")
    return project


async def test_finding_2_no_tool_reads_or_writes_any_file_of_the_home_by_any_name(
    project: Path, cat_code_home: Path
) -> None:
    (project / "cfg").symlink_to(cat_code_home)
    (project / "one.json").symlink_to(cat_code_home / "mcp.json")
    os.link(cat_code_home / "sessions/2026-12-01-abc.jsonl", project / "hard.jsonl")
    up = os.path.relpath(cat_code_home, project)
    tools = tools_of(project)
    names = [str(cat_code_home / n) for n in HOME_FILES]
    names += [f"cfg/{n}" for n in HOME_FILES] + [f"{up}/{n}" for n in HOME_FILES]
    names += ["one.json", "hard.jsonl", "cfg/../cfg/mcp.json"]
    for name in names:
        read = await run(tools["read_file"], path=name)
        assert read.is_error and SECRET not in read.content, name
        write = await run(tools["write_file"], path=name, content="pwned")
        assert write.is_error and "cat-code's own files" in write.content, name
    for root in (None, "cfg", str(cat_code_home), str(cat_code_home.parent)):
        where = {} if root is None else {"path": root}
        found = await run(tools["grep"], pattern="SECRET", output="content", **where)
        assert SECRET not in found.content, root
        listed = await run(tools["glob"], pattern="**/*", **where)
        assert "mcp.json" not in listed.content and "hard.jsonl" not in listed.content, root
    for name in HOME_FILES:
        assert (cat_code_home / name).read_text() == f"{name}: {SECRET}\n"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read_file", {"path": "notes\0.txt"}),
        ("write_file", {"path": "a\0b", "content": "x"}),
        ("edit_file", {"path": "notes.txt\0", "old_string": "a", "new_string": "b"}),
        ("grep", {"pattern": "x", "path": "sub\0dir"}),
        ("grep", {"pattern": "nothing\0to"}),
        ("glob", {"pattern": "*.txt", "path": "\0"}),
        ("glob", {"pattern": "*\0.txt"}),
    ],
)
async def test_finding_10_a_nul_byte_in_a_path_is_a_clear_tool_error(
    project: Path, tool: str, arguments: dict[str, Any]
) -> None:
    tools = tools_of(project)
    for permissions in (Permissions(approve_all=True), Permissions(workspace=lambda: [project])):
        result = await run(tools[tool], permissions, **arguments)
        if "\0" in arguments.get("path", ""):
            assert result.is_error and "NUL byte" in result.content
        else:  # in a pattern: simply matches nothing
            assert "No matches" in result.content or "No files match" in result.content


async def test_finding_13_saved_outputs_are_kept_per_project_and_unreadable_but_by_name(
    project: Path, tmp_path: Path, cat_code_home: Path
) -> None:
    other = tmp_path / "other-project"
    other.mkdir()
    mine = save_output(b"my output\n", server="s", tool="t", suffix=".txt", project=project)
    theirs = save_output(f"{SECRET}\n".encode(), server="s", tool="t", suffix=".txt", project=other)
    assert mine.parent == output_dir(project=project) != theirs.parent == output_dir(project=other)
    assert mine.parent.parent == theirs.parent.parent == cat_code_home / "tool-output"
    os.link(theirs, mine.parent / "stolen.txt")  # a second name in my folder: still theirs
    (project / "saved").symlink_to(theirs.parent)
    tools = tools_of(project)
    workspace = Permissions(workspace=lambda: [project, output_dir(project=project)])

    back = await run(tools["read_file"], workspace, path=str(mine))  # as the policy tells it
    assert back.content == "     1\tmy output"
    for name in (str(theirs), str(mine.parent / "stolen.txt"), f"saved/{theirs.name}"):
        read = await run(tools["read_file"], path=name)
        assert read.is_error and SECRET not in read.content, name
    for root in (str(cat_code_home / "tool-output"), str(mine.parent), "saved"):
        found = await run(tools["grep"], pattern=".", output="content", path=root)
        assert found.is_error and "output" not in found.content.split("Error:")[0], root
        listed = await run(tools["glob"], pattern="**/*", path=root)
        assert listed.is_error and mine.name not in listed.content, root
    rewrite = await run(tools["write_file"], path=str(mine), content="changed")
    assert rewrite.is_error and mine.read_text() == "my output\n"
    assert SECRET not in (await run(tools["grep"], pattern="tok", path=str(mine))).content
