"""Which calls run without asking, which ask, and what the answers remember."""

from __future__ import annotations

from typing import Any

from cat_code.agent.permissions import Answer, Permissions, server_of
from cat_code.tools.base import Tool, ToolResult


class Stub(Tool):
    def __init__(self, name: str, *, read_only: bool = False, owner: str = "builtin") -> None:
        self.name = name
        self.description = ""
        self.input_schema = {"type": "object"}
        self.read_only = read_only
        self.owner = owner

    async def execute(self, arguments: dict[str, Any], *, progress: Any = None) -> ToolResult:
        return ToolResult("ok")


class ScriptedAsker:
    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, tool: Tool, arguments: dict[str, Any]) -> Answer:
        self.asked.append(tool.name)
        return self.answers.pop(0)


SLEEP = Stub("mcp__echo__sleep", owner="mcp:echo")
FAIL = Stub("mcp__echo__fail", owner="mcp:echo")
OTHER = Stub("mcp__git__commit", owner="mcp:git")
SHELL = Stub("shell")


async def test_read_only_tools_run_without_asking() -> None:
    asker = ScriptedAsker()
    decision = await Permissions(asker=asker).authorize(Stub("x", read_only=True), {})
    assert decision.allowed and asker.asked == []


async def test_yes_approves_everything() -> None:
    assert (await Permissions(approve_all=True).authorize(SHELL, {})).allowed


async def test_allow_tool_globs_match_the_registered_name() -> None:
    permissions = Permissions(allow_patterns=["mcp__echo__*"])
    assert (await permissions.authorize(SLEEP, {})).allowed
    refused = await permissions.authorize(OTHER, {})
    assert not refused.allowed and "--allow-tool 'mcp__git__commit'" in refused.reason


async def test_always_for_a_tool_stops_asking_for_that_tool_only() -> None:
    asker = ScriptedAsker(Answer.ALWAYS_TOOL, Answer.YES)
    permissions = Permissions(asker=asker)
    assert (await permissions.authorize(SLEEP, {})).allowed
    assert (await permissions.authorize(SLEEP, {})).allowed
    assert (await permissions.authorize(FAIL, {})).allowed
    assert asker.asked == ["mcp__echo__sleep", "mcp__echo__fail"]


async def test_always_for_a_server_covers_its_other_tools_but_not_other_servers() -> None:
    asker = ScriptedAsker(Answer.ALWAYS_SERVER, Answer.NO)
    permissions = Permissions(asker=asker)
    assert (await permissions.authorize(SLEEP, {})).allowed
    assert (await permissions.authorize(FAIL, {})).allowed
    assert not (await permissions.authorize(OTHER, {})).allowed
    assert asker.asked == ["mcp__echo__sleep", "mcp__git__commit"]


async def test_yes_approves_once_and_no_refuses_with_a_reason_for_the_model() -> None:
    asker = ScriptedAsker(Answer.YES, Answer.NO)
    permissions = Permissions(asker=asker)
    assert (await permissions.authorize(SHELL, {})).allowed
    refused = await permissions.authorize(SHELL, {})
    assert not refused.allowed and refused.reason.startswith("Error:")
    assert "refused" in refused.reason


def test_the_server_of_a_tool_comes_from_its_owner() -> None:
    assert server_of(SLEEP) == "echo"
    assert server_of(SHELL) is None
