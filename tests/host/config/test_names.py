"""Server names that clean up alike (red-team finding 6): a project server whose tools
would be named like the user's server's is refused, as one of the same name is."""

from __future__ import annotations

import json
from pathlib import Path

from cat_code.host.config.load import Scope, load_config
from cat_code.host.config.names import clashes, clashing
from cat_code.host.config.trust import TrustDecision, TrustStore


def write(path: Path, servers: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def test_finding_6_a_project_server_named_echo_dot_srv_beside_the_users_echo_srv_is_refused(
    tmp_path: Path, cat_code_home: Path
) -> None:
    write(cat_code_home / "mcp.json", {"echo_srv": {"command": "mine"}})
    project = tmp_path / "project"
    theirs = {"echo.srv": {"command": "theirs"}}
    write(project / ".mcp.json", theirs)
    TrustStore().record(project, theirs, TrustDecision.APPROVED)  # even approved: never shares

    config = load_config(cwd=project)

    assert [(s.name, s.scope) for s in config.servers] == [("echo_srv", Scope.USER)]
    assert config.waiting == [] and config.broken == []
    [notice] = config.notices
    assert "'echo.srv'" in notice and "'echo_srv'" in notice and "mcp__echo_srv__" in notice


def test_a_project_server_whose_prefix_extends_the_users_is_refused_while_waiting_too(
    tmp_path: Path, cat_code_home: Path
) -> None:
    write(cat_code_home / "mcp.json", {"a": {"command": "mine"}})
    write(tmp_path / ".mcp.json", {"a__b": {"command": "theirs"}})

    config = load_config(cwd=tmp_path)

    assert [s.name for s in config.servers] == ["a"]
    assert config.waiting == []
    assert len(config.notices) == 1


def test_two_project_servers_that_clean_up_alike_are_not_refused_for_each_other(
    tmp_path: Path, cat_code_home: Path
) -> None:
    write(tmp_path / ".mcp.json", {"x.y": {"command": "one"}, "x_y": {"command": "two"}})
    config = load_config(cwd=tmp_path)
    assert [w.name for w in config.waiting] == ["x.y", "x_y"]
    assert config.notices == []


def test_prefixes_clash_when_equal_or_when_one_begins_the_other_only() -> None:
    assert clashes("echo.srv", "echo_srv")
    assert clashes("a", "a__b") and clashes("a__b", "a")
    assert not clashes("a", "ab")
    assert not clashes("github", "gitlab")
    assert clashing("echo srv", ["x", "echo_srv"]) == "echo_srv"
    assert clashing("other", ["x", "echo_srv"]) is None
