"""Writes no blanket approval covers (issue 24, finding 2): through links, outside the
workspace, to cat-code's home or to the project's trust-bearing files.

Each test builds what a session builds (`builtin_tool_list`: the real file tools guarding
the real ``$CAT_CODE_HOME``, `Permissions` over the working directory) and runs a call as
the agent loop does: decide, then execute when allowed.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cat_code.agent.permissions import Answer, Decision, Permissions, RuleBook
from cat_code.agent.session import builtin_tool_list
from cat_code.agent.write_guard import question_notes
from cat_code.tools.base import Tool, ToolResult
from cat_code.tools.builtin import FileLedger

SERVERS = '{"mcpServers": {"mine": {"command": "my-server"}}}\n'


@dataclass
class Asker:
    """The REPL's question, scripted: what was asked, with the preview and notes it showed."""

    answers: list[Answer]
    workspace: list[Path]
    asked: list[tuple[str, str | None, list[str]]] = field(default_factory=list)

    async def __call__(self, tool: Tool, arguments: dict[str, Any]) -> Answer:
        change = await tool.preview(arguments)
        notes = question_notes(tool, arguments, lambda: self.workspace)
        self.asked.append((tool.name, change.shown if change else None, notes))
        return self.answers.pop(0)


@dataclass
class World:
    project: Path
    home: Path
    outside: Path
    tools: dict[str, Tool]

    def permissions(
        self,
        *,
        asker: Asker | None = None,
        approve_all: bool = False,
        allow: list[str] | None = None,
        allow_patterns: tuple[str, ...] = (),
    ) -> Permissions:
        user = self.home / "settings.json"
        if allow is not None:
            user.write_text(json.dumps({"permissions": {"allow": allow}}))
        return Permissions(
            approve_all=approve_all,
            allow_patterns=allow_patterns,
            asker=asker,
            rules=RuleBook(user, self.project / ".cat-code" / "settings.json"),
            workspace=lambda: [self.project],
        )

    def asker(self, *answers: Answer) -> Asker:
        return Asker(list(answers), [self.project])

    async def run(
        self, permissions: Permissions, tool: str, **arguments: Any
    ) -> tuple[Decision, ToolResult | None]:
        """One call as the agent loop makes it: decided, then run when allowed."""
        async with asyncio.timeout(20):
            decision = await permissions.authorize(self.tools[tool], arguments)
            if not decision.allowed:
                return decision, None
            return decision, await self.tools[tool].execute(arguments)


@pytest.fixture
def world(tmp_path: Path, cat_code_home: Path) -> World:
    project, outside = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    outside.mkdir()
    (cat_code_home / "mcp.json").write_text(SERVERS)
    (project / "cfg").symlink_to(cat_code_home)
    (project / "out").symlink_to(outside)
    tools = {t.name: t for t in builtin_tool_list(project, FileLedger())}
    return World(project, cat_code_home, outside, tools)


async def test_finding_2_a_write_through_a_folder_linked_to_the_home_is_refused_even_with_yes(
    world: World,
) -> None:
    asker = world.asker()  # no answer to give: nothing may be asked
    for permissions in (world.permissions(approve_all=True), world.permissions(asker=asker)):
        write, result = await world.run(
            permissions, "write_file", path="cfg/mcp.json", content="{}"
        )
        assert not write.allowed and result is None
        assert "cat-code's own files" in write.reason and "cfg/mcp.json" in write.reason
        edit, _ = await world.run(
            permissions, "edit_file", path="cfg/mcp.json", old_string="my-", new_string="evil-"
        )
        assert not edit.allowed and "cat-code's own files" in edit.reason
        new, _ = await world.run(permissions, "write_file", path="cfg/sub/x.json", content="{}")
        assert not new.allowed
    assert asker.asked == []
    assert (world.home / "mcp.json").read_text() == SERVERS
    assert not (world.home / "sub").exists()


async def test_finding_2_a_write_through_a_link_outside_asks_every_time_and_shows_the_real_target(
    world: World,
) -> None:
    asker = world.asker(Answer.ALWAYS_TOOL, Answer.YES, Answer.NO)
    permissions = world.permissions(asker=asker, allow=["write_file", "edit_file"])
    target = (world.outside / "a.txt").resolve()

    first, created = await world.run(permissions, "write_file", path="out/a.txt", content="1\n")
    await world.run(permissions, "read_file", path="out/a.txt")  # read-only: asks too
    second, _ = await world.run(permissions, "write_file", path="out/a.txt", content="2\n")
    inside, _ = await world.run(permissions, "write_file", path="in.txt", content="x\n")

    assert first.allowed and created is not None and not created.is_error
    assert not second.allowed and target.read_text() == "1\n"
    assert inside.allowed and asker.answers == []  # the allow rule covers the workspace
    [(tool, shown, notes), (read, _, read_notes), (again, _, _)] = asker.asked
    assert (tool, read, again) == ("write_file", "read_file", "write_file")
    assert shown == f"out/a.txt → {target}"  # what the question shows, not just out/a.txt
    assert notes == [
        f"{target} is outside the working directory and the --add-dir folders: asked every "
        'time ("always" covers the working directory only)'
    ]
    assert read_notes == [f"{world.project / 'out/a.txt'} leads to {target}"]


async def test_finding_2_with_p_a_write_outside_is_refused_unless_a_rule_names_its_path(
    world: World,
) -> None:
    project_file = world.project / ".cat-code" / "settings.json"
    project_file.parent.mkdir()
    project_file.write_text(json.dumps({"permissions": {"allow": ["write_file(*)"]}}))
    yes = world.permissions(approve_all=True, allow=["write_file", "*"])
    target = (world.outside / "a.txt").resolve()

    refused, _ = await world.run(yes, "write_file", path="out/a.txt", content="x\n")
    assert not refused.allowed and not target.exists()
    assert f"writes {world.project / 'out/a.txt'} → {target}, outside" in refused.reason
    assert f"--allow-tool 'write_file({target})'" in refused.reason

    named = world.permissions(allow_patterns=(f"write_file({world.outside.resolve()}/*)",))
    allowed, result = await world.run(named, "write_file", path="out/a.txt", content="y\n")
    assert allowed.allowed and result is not None and target.read_text() == "y\n"
    by_rule = world.permissions(allow=[f"write_file({target})"])
    again, _ = await world.run(by_rule, "write_file", path=str(target), content="z\n")
    assert again.allowed


@pytest.mark.parametrize(
    "name", [".mcp.json", ".cat-code/settings.json", ".cat-code/settings.local.json", "alias"]
)
async def test_finding_2_the_projects_trust_files_always_ask_whatever_the_rules_say(
    world: World, name: str
) -> None:
    (world.project / ".cat-code").mkdir()
    (world.project / ".mcp.json").write_text('{"mcpServers": {}}\n')
    (world.project / "alias").symlink_to(world.project / ".mcp.json")
    asker = world.asker(Answer.ALWAYS_TOOL, Answer.NO)
    permissions = world.permissions(asker=asker, allow=["write_file"])

    first, _ = await world.run(permissions, "write_file", path=name, content="{}\n")
    second, _ = await world.run(permissions, "write_file", path=name, content="{}\n")
    assert first.allowed and not second.allowed and len(asker.asked) == 2
    assert "trust-bearing" in asker.asked[1][2][0]

    quiet = world.permissions(approve_all=True, allow=["write_file"])
    refused, _ = await world.run(quiet, "write_file", path=name, content="{}\n")
    assert not refused.allowed and "trust-bearing" in refused.reason
    real = (world.project / name).resolve()
    named = world.permissions(allow=[f"write_file({real})"])
    assert (await world.run(named, "write_file", path=name, content="{}\n"))[0].allowed


async def test_a_write_inside_the_workspace_still_runs_on_yes_or_an_allow_rule(
    world: World,
) -> None:
    for permissions in (world.permissions(approve_all=True), world.permissions(allow=["*"])):
        decision, result = await world.run(permissions, "write_file", path="a/b.txt", content="x")
        assert decision.allowed and result is not None and not result.is_error
    assert (world.project / "a" / "b.txt").read_text() == "x"


async def test_a_deny_rule_can_name_a_path(world: World) -> None:
    (world.home / "settings.json").write_text(
        json.dumps({"permissions": {"deny": [f"read_file({world.project.resolve()}/*.env)"]}})
    )
    (world.project / ".env").write_text("KEY=1\n")
    permissions = world.permissions(approve_all=True)
    denied, _ = await world.run(permissions, "read_file", path=".env")
    assert not denied.allowed and "denied by the permission rule" in denied.reason
    assert os.path.exists(world.project / ".env")


async def test_an_allow_rule_naming_a_path_approves_exactly_the_calls_there(world: World) -> None:
    (world.outside / "doc.txt").write_text("doc\n")
    outside = world.outside.resolve()
    permissions = world.permissions(allow=[f"read_file({outside}/*)", "edit_file(*/src/*)"])
    read, result = await world.run(permissions, "read_file", path="out/doc.txt")
    assert read.allowed and result is not None and result.content == "     1\tdoc"
    (world.project / "src").mkdir()
    (world.project / "src" / "a.py").write_text("x = 1\n")
    await world.run(permissions, "read_file", path="src/a.py")
    edit, _ = await world.run(
        permissions, "edit_file", path="src/a.py", old_string="1", new_string="2"
    )
    assert edit.allowed and (world.project / "src" / "a.py").read_text() == "x = 2\n"
    other, _ = await world.run(permissions, "write_file", path="b.py", content="")
    assert not other.allowed  # no asker (-p), no rule for write_file: refused
