"""Permission modes in the gate: every kind of tool in every mode, and no allow rule,
``--allow-tool`` or ``--yes`` letting a change through in plan mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cat_code.agent.permission_modes import (
    PermissionMode,
    mode_prompt,
    next_mode,
    parse_mode,
    starting_mode,
)
from cat_code.agent.permissions import Permissions, RuleBook
from cat_code.agent.plan_tool import ExitPlanModeTool, PlanReview
from cat_code.tools.base import Tool, ToolOwner, ToolResult
from cat_code.tools.builtin import builtin_tools

PLAN, DEFAULT = PermissionMode.PLAN, PermissionMode.DEFAULT
ACCEPT, BYPASS = PermissionMode.ACCEPT_EDITS, PermissionMode.BYPASS


class McpStub(Tool):
    def __init__(self, name: str, *, read_only: bool) -> None:
        self.name = name
        self.description = "stub"
        self.input_schema = {"type": "object"}
        self.read_only = read_only
        self.owner = ToolOwner("srv")

    async def execute(self, arguments: dict[str, Any], *, progress: Any = None) -> ToolResult:
        return ToolResult("ran")


@pytest.fixture
def tools(tmp_path: Path) -> dict[str, Tool]:
    found = {t.name: t for t in builtin_tools(tmp_path)}
    found["mcp__srv__read"] = McpStub("mcp__srv__read", read_only=True)
    found["mcp__srv__write"] = McpStub("mcp__srv__write", read_only=False)
    found["exit_plan_mode"] = ExitPlanModeTool(Permissions())
    return found


def gate(tmp_path: Path, mode: PermissionMode, **kwargs: Any) -> Permissions:
    permissions = Permissions(rules=RuleBook(), workspace=lambda: [tmp_path], **kwargs)
    permissions.mode = mode
    return permissions


def calls(tmp_path: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    inside = str(tmp_path / "a.txt")
    return {
        "read": ("read_file", {"path": inside}),
        "write": ("write_file", {"path": inside, "content": "x"}),
        "edit": ("edit_file", {"path": inside, "old_string": "a", "new_string": "b"}),
        "write outside": ("write_file", {"path": "/tmp/elsewhere/x.txt", "content": "x"}),
        "read-only shell": ("shell", {"command": "git status && ls -la"}),
        "writing shell": ("shell", {"command": "sed -i s/a/b/ a.txt"}),
        "background shell": ("shell", {"command": "ls", "run_in_background": True}),
        "mcp read": ("mcp__srv__read", {}),
        "mcp write": ("mcp__srv__write", {}),
        "plan tool": ("exit_plan_mode", {"plan": "p"}),
    }


#: mode → call kind → True (runs unasked), False (refused), None (the usual rules decide:
#: with no asker and no approval, that is a refusal that is not the mode's).
EXPECTED: dict[PermissionMode, dict[str, bool | None]] = {
    PLAN: {
        "read": True, "write": False, "edit": False, "write outside": False,
        "read-only shell": None, "writing shell": False, "background shell": False,
        "mcp read": True, "mcp write": False, "plan tool": True,
    },
    DEFAULT: {
        "read": True, "write": None, "edit": None, "write outside": None,
        "read-only shell": None, "writing shell": None, "background shell": None,
        "mcp read": True, "mcp write": None, "plan tool": True,
    },
    ACCEPT: {
        "read": True, "write": True, "edit": True, "write outside": None,
        "read-only shell": None, "writing shell": None, "background shell": None,
        "mcp read": True, "mcp write": None, "plan tool": True,
    },
    BYPASS: {
        "read": True, "write": True, "edit": True, "write outside": None,
        "read-only shell": True, "writing shell": True, "background shell": True,
        "mcp read": True, "mcp write": True, "plan tool": True,
    },
}  # fmt: skip


@pytest.mark.parametrize("mode", list(EXPECTED))
def test_each_mode_decides_each_kind_of_call_as_its_table_says(
    tmp_path: Path, tools: dict[str, Tool], mode: PermissionMode
) -> None:
    permissions = gate(tmp_path, mode)
    for kind, (name, arguments) in calls(tmp_path).items():
        decision = permissions.standing_decision(tools[name], arguments)
        expected = EXPECTED[mode][kind]
        got = None if decision is None else decision.allowed
        assert got == expected, f"{mode} {kind}: {decision}"
        if expected is False:
            assert decision is not None and decision.notice is not None
            assert "plan mode" in decision.reason and "exit_plan_mode" in decision.reason


def test_no_approval_of_any_kind_lets_a_change_through_in_plan_mode(
    tmp_path: Path, tools: dict[str, Tool], cat_code_home: Path
) -> None:
    settings = cat_code_home / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["*"]}}))
    permissions = gate(tmp_path, PLAN, approve_all=True, allow_patterns=["*"])
    permissions.rules = RuleBook(settings)
    for kind in ("write", "edit", "writing shell", "background shell", "mcp write"):
        name, arguments = calls(tmp_path)[kind]
        decision = permissions.standing_decision(tools[name], arguments)
        assert decision is not None and not decision.allowed, kind
    permissions.mode = DEFAULT
    name, arguments = calls(tmp_path)["edit"]
    assert permissions.standing_decision(tools[name], arguments).allowed  # type: ignore[union-attr]


def test_a_deny_rule_still_wins_over_bypass_permissions(
    tmp_path: Path, tools: dict[str, Tool], cat_code_home: Path
) -> None:
    settings = cat_code_home / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["shell"]}}))
    permissions = gate(tmp_path, BYPASS)
    permissions.rules = RuleBook(settings)
    decision = permissions.standing_decision(tools["shell"], {"command": "ls"})
    assert decision is not None and not decision.allowed and "denied by" in decision.reason


def test_accept_edits_still_asks_about_a_trust_bearing_file(
    tmp_path: Path, tools: dict[str, Tool]
) -> None:
    permissions = gate(tmp_path, ACCEPT)
    target = {"path": str(tmp_path / ".mcp.json"), "content": "{}"}
    assert permissions.standing_decision(tools["write_file"], target) is None


def test_shift_tab_cycles_default_accept_edits_plan_and_never_enters_bypass() -> None:
    assert [next_mode(DEFAULT), next_mode(ACCEPT), next_mode(PLAN)] == [ACCEPT, PLAN, DEFAULT]
    assert next_mode(BYPASS) is DEFAULT
    assert parse_mode("acceptEdits") is ACCEPT and parse_mode("accept") is None


def test_a_project_file_may_narrow_the_mode_but_never_widen_it(tmp_path: Path) -> None:
    user, project = tmp_path / "user.json", tmp_path / "project.json"

    def write(path: Path, mode: str) -> None:
        path.write_text(json.dumps({"permissions": {"defaultMode": mode}}))

    write(user, "acceptEdits")
    write(project, "plan")
    assert starting_mode(None, user, project) == (PLAN, [])
    write(user, "default")
    write(project, "acceptEdits")
    mode, warnings = starting_mode(None, user, project)
    assert mode is DEFAULT and "may only narrow" in warnings[0]
    write(project, "bypassPermissions")
    mode, warnings = starting_mode(None, user, project)
    assert mode is DEFAULT and "only taken from the command line" in warnings[0]
    write(user, "bypassPermissions")
    assert starting_mode(None, user, None)[0] is DEFAULT
    assert starting_mode(BYPASS, user, project)[0] is BYPASS  # the command line decides


def test_the_system_prompt_says_what_plan_mode_means_only_when_it_is_on() -> None:
    assert "exit_plan_mode" in mode_prompt(PLAN)
    assert mode_prompt(DEFAULT) == ""


async def test_an_approved_plan_changes_the_mode_and_feedback_goes_back_to_the_model(
    tmp_path: Path,
) -> None:
    permissions = gate(tmp_path, PLAN)
    answers = [PlanReview(None, "also update the tests"), PlanReview(ACCEPT)]

    async def reviewer(plan: str) -> PlanReview:
        assert plan == "the plan"
        return answers.pop(0)

    tool = ExitPlanModeTool(permissions, reviewer)
    kept = await tool.execute({"plan": "the plan"})
    assert "also update the tests" in kept.content and permissions.mode is PLAN
    approved = await tool.execute({"plan": "the plan"})
    assert "approved" in approved.content and permissions.mode is ACCEPT
    outside = await tool.execute({"plan": "the plan"})
    assert outside.is_error and "not on" in outside.content


async def test_without_a_reviewer_the_plan_is_kept_as_the_final_answer_once(
    tmp_path: Path,
) -> None:
    tool = ExitPlanModeTool(gate(tmp_path, PLAN))
    result = await tool.execute({"plan": "# Plan"})
    assert not result.is_error
    assert tool.take_final() == "# Plan" and tool.take_final() is None
