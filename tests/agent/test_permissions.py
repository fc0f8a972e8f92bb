"""Which calls run without asking, which ask, and what the answers remember."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cat_code.agent.permissions import Answer, Permissions, RuleBook, RuleError, server_of
from cat_code.host.config.project_trust import decide_content
from cat_code.host.config.trust import TrustDecision
from cat_code.tools.base import BUILTIN, Tool, ToolOwner, ToolResult


class Stub(Tool):
    def __init__(self, name: str, *, read_only: bool = False, owner: ToolOwner = BUILTIN) -> None:
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


SLEEP = Stub("mcp__echo__sleep", owner=ToolOwner("echo"))
FAIL = Stub("mcp__echo__fail", owner=ToolOwner("echo"))
OTHER = Stub("mcp__git__commit", owner=ToolOwner("git"))
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


# -- rules from settings files -----------------------------------------------------------


def write(path: Path, settings: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings))
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "home" / "settings.json", tmp_path / "project" / ".cat-code" / "settings.json"


async def test_always_is_saved_to_the_user_file_keeping_its_other_keys(
    files: tuple[Path, Path],
) -> None:
    user, project = files
    write(user, {"theme": "dark", "permissions": {"deny": ["shell"]}})
    asker = ScriptedAsker(Answer.ALWAYS_TOOL, Answer.ALWAYS_SERVER)
    permissions = Permissions(asker=asker, rules=RuleBook(user, project))
    assert (await permissions.authorize(SLEEP, {})).allowed
    assert (await permissions.authorize(OTHER, {})).allowed
    assert json.loads(user.read_text()) == {
        "theme": "dark",
        "permissions": {"deny": ["shell"], "allow": ["mcp__echo__sleep", "mcp__git__*"]},
    }
    assert not project.exists()  # the project's file is never written

    # A new session reads them back: no question for either.
    again = Permissions(asker=ScriptedAsker(), rules=RuleBook(user, project))
    assert (await again.authorize(SLEEP, {})).allowed
    assert (await again.authorize(Stub("mcp__git__push", owner=ToolOwner("git")), {})).allowed


async def test_deny_wins_over_allow_yes_and_read_only_and_nobody_is_asked(
    files: tuple[Path, Path],
) -> None:
    user, project = files
    write(user, {"permissions": {"allow": ["mcp__echo__*"]}})
    write(project, {"permissions": {"deny": ["mcp__echo__f*"]}})
    asker = ScriptedAsker()
    rules = RuleBook(user, project)
    for permissions in (
        Permissions(asker=asker, rules=rules),
        Permissions(approve_all=True, allow_patterns=["*"], rules=rules),
    ):
        refused = await permissions.authorize(FAIL, {})
        assert not refused.allowed
        assert "denied by the permission rule 'mcp__echo__f*'" in refused.reason
        assert str(project) in refused.reason and refused.reason.startswith("Error:")
        assert refused.notice == (
            f"refused mcp__echo__fail: denied by rule 'mcp__echo__f*' ({project})"
        )
        assert (await permissions.authorize(SLEEP, {})).allowed
    reader = Stub("mcp__echo__find", read_only=True, owner=ToolOwner("echo"))
    assert not (await Permissions(rules=rules).authorize(reader, {})).allowed
    assert asker.asked == []


async def test_a_broken_user_file_is_named_left_alone_and_always_lasts_the_session(
    files: tuple[Path, Path],
) -> None:
    user, project = files
    user.parent.mkdir(parents=True)
    user.write_text('{"permissions": {"allow": ["x",]}}')
    write(project, {"permissions": {"allow": 5}})
    rules = RuleBook(user, project)
    [user_warning, project_warning] = rules.warnings()
    assert user_warning.startswith(f"settings file {user} is not valid JSON")
    assert "will not be changed" in user_warning
    assert project_warning == (
        f'settings file {project}: "permissions.allow" must be a list of tool names or globs: '
        "its allow rules are ignored"
    )
    warned: list[str] = []
    permissions = Permissions(asker=ScriptedAsker(Answer.ALWAYS_TOOL), rules=rules)
    permissions.on_warning = warned.append
    assert (await permissions.authorize(SLEEP, {})).allowed
    assert (await permissions.authorize(SLEEP, {})).allowed  # remembered for the session
    assert user.read_text() == '{"permissions": {"allow": ["x",]}}'
    [warning] = warned
    assert "holds for this session only" in warning and str(user) in warning


def test_permissions_lists_the_rules_with_their_files_and_removes_one(
    files: tuple[Path, Path],
) -> None:
    user, project = files
    write(user, {"other": True, "permissions": {"allow": ["mcp__echo__*", "shell"]}})
    write(project, {"permissions": {"deny": ["mcp__git__push"]}})
    rules = RuleBook(user, project)
    text = rules.describe()
    assert "1. allow  mcp__echo__*    " + str(user) in text
    assert "2. allow  shell           " + str(user) in text
    assert f"3. deny   mcp__git__push  {project} (project, read-only here)" in text

    assert rules.remove("2") == f"removed allow rule 'shell' ({user})"
    assert rules.remove("mcp__echo__*") == f"removed allow rule 'mcp__echo__*' ({user})"
    assert json.loads(user.read_text()) == {"other": True, "permissions": {"allow": []}}
    with pytest.raises(RuleError, match="only reads; edit that file"):
        rules.remove("mcp__git__push")
    with pytest.raises(RuleError, match="no permission rule 'nope'"):
        rules.remove("nope")
    with pytest.raises(RuleError, match="there is no rule 9"):
        rules.remove("9")
    assert [r.pattern for r in rules.rules] == ["mcp__git__push"]


def test_the_project_file_that_is_the_user_file_is_read_once(tmp_path: Path) -> None:
    path = write(tmp_path / "settings.json", {"permissions": {"allow": ["a"]}})
    rules = RuleBook(path, tmp_path / "." / "settings.json")
    assert [(r.pattern, r.source) for r in rules.rules] == [("a", "user")]


# -- review 12: trust in project files, bad entries, server rules, resource tools --------


async def test_a_project_allow_rule_covers_mcp_tools_only_but_its_deny_covers_all(
    files: tuple[Path, Path],
) -> None:
    user, project = files
    write(project, {"permissions": {"allow": ["*"], "deny": ["read_file"]}})
    rules = RuleBook(user, project, trust_project=True)
    asker = ScriptedAsker(Answer.NO)
    permissions = Permissions(asker=asker, rules=rules)
    assert (await permissions.authorize(SLEEP, {})).allowed  # an MCP tool: allowed
    assert not (await permissions.authorize(SHELL, {})).allowed  # built-in: asked, said no
    assert asker.asked == ["shell"]
    refused = await Permissions(rules=rules).authorize(SHELL, {})
    assert not refused.allowed and "needs the user's approval" in refused.reason
    # A built-in tool named like an MCP one is still built-in (the owner decides).
    assert not (await Permissions(rules=rules).authorize(Stub("mcp__x__y"), {})).allowed
    denied = await Permissions(approve_all=True, rules=rules).authorize(
        Stub("read_file", read_only=True), {}
    )
    assert not denied.allowed and "denied by the permission rule 'read_file'" in denied.reason
    assert rules.project_allows() == (
        f"project settings {project} allow without asking: * (a project's allow rules cover "
        "MCP tools only, never built-in tools such as shell)"
    )
    text = rules.describe()
    assert f"1. allow  *          {project} (project, read-only here; MCP tools only)" in text
    assert "a project's allow rules cover MCP tools (mcp__…) only, never built-in tools" in text
    assert (
        f"read from {project} (the project's); your rules are saved to {user} (not created" in text
    )
    # The user's own allow rules still cover built-in tools.
    write(user, {"permissions": {"allow": ["shell"]}})
    assert (await Permissions(rules=RuleBook(user, project)).authorize(SHELL, {})).allowed
    assert f"read from {user} (yours) and {project} (the project's)\n" in rules.describe()
    assert RuleBook(user, tmp := user.parent / "none.json").project_allows() is None, tmp


async def test_one_bad_entry_costs_only_itself_and_deny_still_beats_yes(
    files: tuple[Path, Path],
) -> None:
    user, project = files
    write(project, {"permissions": {"allow": ["", "mcp__echo__*"], "deny": ["shell", 5, " "]}})
    rules = RuleBook(user, project, trust_project=True)
    assert [(r.effect, r.pattern) for r in rules.rules] == [
        ("allow", "mcp__echo__*"),
        ("deny", "shell"),
    ]
    assert rules.warnings() == [
        f'settings file {project}: "permissions.allow" entry "" is not a tool name or glob: '
        "that entry is ignored, the others hold",
        f'settings file {project}: "permissions.deny" entry 5 is not a tool name or glob: '
        "that entry is ignored, the others hold",
        f'settings file {project}: "permissions.deny" entry " " is not a tool name or glob: '
        "that entry is ignored, the others hold",
    ]
    assert rules.deny_unknown == []
    permissions = Permissions(approve_all=True, rules=rules)
    assert not (await permissions.authorize(SHELL, {})).allowed
    assert (await permissions.authorize(SLEEP, {})).allowed


@pytest.mark.parametrize(
    "text",
    ['{"permissions": {"deny": ["shell"],}}', '{"permissions": {"deny": "shell"}}', "[]"],
)
async def test_yes_approves_nothing_when_a_deny_list_cannot_be_read(
    files: tuple[Path, Path], text: str
) -> None:
    user, project = files
    project.parent.mkdir(parents=True)
    project.write_text(text)
    rules = RuleBook(user, project)
    assert rules.deny_unknown == [project]
    [warning] = rules.warnings()
    assert warning.startswith(f"settings file {project}")
    assert warning.endswith(
        "its deny rules are unknown, so --yes approves nothing in this session "
        "(tool calls are asked about, and refused with -p)"
    )
    refused = await Permissions(approve_all=True, rules=rules).authorize(SHELL, {})
    assert not refused.allowed
    assert f"--yes is off in this session: the deny rules of {project} cannot be read" in (
        refused.reason
    )
    asker = ScriptedAsker(Answer.YES)
    assert (
        await Permissions(approve_all=True, asker=asker, rules=rules).authorize(SHELL, {})
    ).allowed
    assert asker.asked == ["shell"]
    # --allow-tool is the user's own word for one tool: it still holds.
    assert (await Permissions(allow_patterns=["shell"], rules=rules).authorize(SHELL, {})).allowed


async def test_a_server_rule_covers_exactly_its_own_server(files: tuple[Path, Path]) -> None:
    user, project = files
    plain = Stub("mcp__a__b__x", owner=ToolOwner("a"))  # server "a", tool "b__x"
    nested = Stub("mcp__a__b__x2", owner=ToolOwner("a__b"))  # server "a__b", tool "x2"
    asker = ScriptedAsker(Answer.ALWAYS_SERVER, Answer.NO, Answer.NO)
    permissions = Permissions(asker=asker, rules=RuleBook(user, project))
    assert (await permissions.authorize(plain, {})).allowed  # saves mcp__a__*
    assert not (await permissions.authorize(nested, {})).allowed  # asked: not server a's
    write(user, {"permissions": {"allow": ["mcp__a__b__*"]}})
    permissions = Permissions(asker=asker, rules=RuleBook(user, project))
    assert (await permissions.authorize(nested, {})).allowed
    assert not (await permissions.authorize(plain, {})).allowed  # asked: not a__b's
    assert asker.asked == ["mcp__a__b__x", "mcp__a__b__x2", "mcp__a__b__x"]
    # Other globs still match the registered name.
    write(user, {"permissions": {"allow": ["mcp__a__b__x*"]}})
    permissions = Permissions(rules=RuleBook(user, project))
    assert (await permissions.authorize(plain, {})).allowed
    assert (await permissions.authorize(nested, {})).allowed


async def test_a_whole_server_deny_covers_the_resource_tools_for_that_server(
    files: tuple[Path, Path],
) -> None:
    from cat_code.host.config.load import McpConfig
    from cat_code.host.mcp_tools.resource_tools import ListMcpResourcesTool, ReadMcpResourceTool
    from cat_code.host.servers.pool import McpPool

    user, project = files
    write(user, {"permissions": {"deny": ["mcp__ev__*", "mcp__git__push"]}})
    pool = McpPool(McpConfig())
    read, listing = ReadMcpResourceTool(pool), ListMcpResourcesTool(pool)
    permissions = Permissions(approve_all=True, rules=RuleBook(user, project))
    refused = await permissions.authorize(read, {"server": "ev", "uri": "demo://x"})
    assert not refused.allowed
    assert refused.notice == (
        f"refused read_mcp_resource (mcp__ev__*): denied by rule 'mcp__ev__*' ({user})"
    )
    assert not (await permissions.authorize(listing, {"server": "ev"})).allowed
    for allowed in ({"server": "git", "uri": "x://y"}, {"server": "ev__x", "uri": "x://y"}):
        assert (await permissions.authorize(read, allowed)).allowed
    assert (await permissions.authorize(listing, {})).allowed
    assert permissions.denies_server("ev") and not permissions.denies_server("git")
    assert not permissions.denies_server("ev__x")


def test_remove_by_text_refuses_when_it_is_both_an_allow_and_a_deny_rule(
    files: tuple[Path, Path],
) -> None:
    user, project = files
    write(user, {"permissions": {"allow": ["shell", "x"], "deny": ["shell"]}})
    rules = RuleBook(user, project)
    with pytest.raises(RuleError) as refused:
        rules.remove("shell")
    assert str(refused.value) == (
        "'shell' is both an allow and a deny rule (numbers 1 (allow), 3 (deny)): "
        "say which with /permissions remove N"
    )
    assert json.loads(user.read_text())["permissions"]["deny"] == ["shell"]
    assert rules.remove("3") == f"removed deny rule 'shell' ({user})"
    assert rules.remove("shell") == f"removed allow rule 'shell' ({user})"


async def test_read_only_file_tools_ask_only_outside_the_workspace(tmp_path: Path) -> None:
    from cat_code.tools.builtin import ReadFileTool

    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    (inside / "escape").symlink_to(outside)
    asker = ScriptedAsker(Answer.NO, Answer.NO)
    permissions = Permissions(asker=asker, workspace=lambda: [inside])
    read = ReadFileTool(inside)
    assert (await permissions.authorize(read, {"path": "f.txt"})).allowed
    refused = await permissions.authorize(read, {"path": str(outside / "f.txt")})
    assert not refused.allowed
    through_link = await permissions.authorize(read, {"path": "escape/f.txt"})
    assert not through_link.allowed and asker.asked == ["read_file", "read_file"]


async def test_a_refusal_for_a_symlink_out_of_the_workspace_names_where_it_leads(
    tmp_path: Path,
) -> None:
    from cat_code.tools.builtin import ReadFileTool

    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("x\n")
    (inside / "sl.txt").symlink_to(outside / "secret.txt")
    permissions = Permissions(workspace=lambda: [inside])  # no asker: -p refuses
    read = ReadFileTool(inside)
    through_link = await permissions.authorize(read, {"path": "sl.txt"})
    target = (outside / "secret.txt").resolve()
    assert not through_link.allowed
    assert f"reads {inside / 'sl.txt'} → {target}, outside the working directory" in (
        through_link.reason
    )
    plain = await permissions.authorize(read, {"path": str(target)})
    assert f"reads {target}, outside the working directory" in plain.reason


async def test_finding_5_a_project_allow_rule_applies_only_once_approved_as_written(
    files: tuple[Path, Path], cat_code_home: Path
) -> None:
    user, project = files
    write(project, {"permissions": {"allow": ["*"], "deny": ["read_file"]}})
    rules = RuleBook(user, project)
    asker = ScriptedAsker(Answer.NO)
    assert not (await Permissions(asker=asker, rules=rules).authorize(SLEEP, {})).allowed
    assert asker.asked == [SLEEP.name]  # the user's own MCP tool is asked about
    assert [r.pattern for r in rules.withheld] == ["*"]
    denied = await Permissions(rules=rules).authorize(Stub("read_file", read_only=True), {})
    assert not denied.allowed and "denied by the permission rule" in denied.reason
    assert "allow rules you have not approved: *" in str(rules.project_allows())

    decide_content(TrustDecision.APPROVED, cwd=project.parents[1])
    rules.reload()
    assert (await Permissions(rules=rules).authorize(SLEEP, {})).allowed
    assert rules.withheld == []

    write(project, {"permissions": {"allow": ["*", "mcp__x__*"], "deny": ["read_file"]}})
    rules.reload()  # a changed list asks again
    assert not (await Permissions(rules=rules).authorize(SLEEP, {})).allowed
