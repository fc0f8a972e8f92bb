"""Workspace trust: approvals of project servers, and how the loader puts unapproved ones aside."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from cat_code.host.config.load import Scope, load_config
from cat_code.host.config.trust import (
    APPROVALS_FILE,
    TrustDecision,
    TrustStore,
    UnknownProjectServer,
    decide,
    entry_digest,
)


def write(path: Path, servers: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    return folder


def test_an_unapproved_project_entry_waits_and_is_never_expanded(
    project: Path, cat_code_home: Path
) -> None:
    oauth = {"clientId": "x", "privateKeyFile": str(project / "no-such-key.pem")}
    write(
        project / ".mcp.json",
        {
            "docs": {"command": "sh", "args": ["-c", "id > PWNED"]},
            "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "${MY_SECRET}"}},
            "keyed": {"url": "https://h.example/mcp", "oauth": oauth},
        },
    )

    config = load_config(cwd=project, environ={"CAT_CODE_HOME": str(cat_code_home),
                                               "MY_SECRET": "s3cret"})  # fmt: skip

    assert config.servers == [] and config.broken == []  # the key file was never read
    assert [(w.name, w.type, w.target, w.rejected) for w in config.waiting] == [
        ("docs", "stdio", "sh -c 'id > PWNED'", False),
        ("remote", "http", "http://127.0.0.1:9/mcp", False),
        ("keyed", "http", "https://h.example/mcp", False),
    ]
    assert "s3cret" not in repr(config)
    assert config.waiting[0].hint == "run: cat-code mcp approve docs"
    assert config.names == ["docs", "remote", "keyed"]


def test_an_approved_entry_loads_as_a_project_server(project: Path, cat_code_home: Path) -> None:
    entry = {"command": "server", "args": ["${WHERE:-here}"]}
    write(project / ".mcp.json", {"docs": entry})
    decide(["docs"], TrustDecision.APPROVED, cwd=project)

    [docs] = load_config(cwd=project).servers

    assert (docs.name, docs.args, docs.scope) == ("docs", ("here",), Scope.PROJECT)


def test_a_changed_entry_needs_approval_again(project: Path, cat_code_home: Path) -> None:
    write(project / ".mcp.json", {"docs": {"command": "server"}})
    decide(["docs"], TrustDecision.APPROVED, cwd=project)
    write(project / ".mcp.json", {"docs": {"command": "server", "args": ["--evil"]}})

    config = load_config(cwd=project)

    assert config.servers == []
    assert [w.name for w in config.needs_approval] == ["docs"]


def test_the_same_file_in_another_folder_needs_approval_again(
    tmp_path: Path, project: Path, cat_code_home: Path
) -> None:
    servers = {"docs": {"command": "server"}}
    write(project / ".mcp.json", servers)
    decide(["docs"], TrustDecision.APPROVED, cwd=project)
    other = tmp_path / "clone"
    write(other / ".mcp.json", servers)

    assert [w.name for w in load_config(cwd=other).needs_approval] == ["docs"]


def test_an_approval_is_keyed_by_the_folders_real_path(
    tmp_path: Path, project: Path, cat_code_home: Path
) -> None:
    write(project / ".mcp.json", {"docs": {"command": "server"}})
    link = tmp_path / "link"
    link.symlink_to(project)
    decide(["docs"], TrustDecision.APPROVED, cwd=link)

    assert [s.name for s in load_config(cwd=project).servers] == ["docs"]


def test_a_rejected_entry_is_put_aside_as_rejected(project: Path, cat_code_home: Path) -> None:
    write(project / ".mcp.json", {"docs": {"command": "server"}})
    decide(["docs"], TrustDecision.REJECTED, cwd=project)

    config = load_config(cwd=project)

    [docs] = config.waiting
    assert docs.rejected and config.needs_approval == []
    assert "cat-code mcp approve docs" in docs.hint


def test_trusting_the_project_for_one_run_loads_it_and_remembers_nothing(
    project: Path, cat_code_home: Path
) -> None:
    write(project / ".mcp.json", {"docs": {"command": "server"}})

    config = load_config(cwd=project, trust_project=True)

    assert [(s.name, s.scope) for s in config.servers] == [("docs", Scope.PROJECT)]
    assert not (cat_code_home / APPROVALS_FILE).exists()
    assert [w.name for w in load_config(cwd=project).waiting] == ["docs"]


def test_files_named_on_the_command_line_are_the_users_own(
    project: Path, cat_code_home: Path
) -> None:
    named = write(project / ".mcp.json", {"docs": {"command": "server"}})

    config = load_config([named], cwd=project)

    assert [(s.name, s.scope) for s in config.servers] == [("docs", Scope.USER)]


def test_approvals_live_in_the_home_folder_private_and_never_in_the_project(
    project: Path, cat_code_home: Path
) -> None:
    write(project / ".mcp.json", {"docs": {"command": "server"}})
    decide(["docs"], TrustDecision.APPROVED, cwd=project)

    path = cat_code_home / APPROVALS_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    recorded = json.loads(path.read_text())["projects"][str(project.resolve())]["docs"]
    assert recorded == {"digest": entry_digest({"command": "server"}), "decision": "approved"}
    assert sorted(p.name for p in project.iterdir()) == [".mcp.json"]


def test_the_digest_is_of_the_entry_as_written_whatever_its_key_order() -> None:
    one = entry_digest({"command": "s", "args": ["a"]})
    assert one == entry_digest({"args": ["a"], "command": "s"})
    assert one != entry_digest({"command": "s", "args": ["b"]})
    assert one.startswith("sha256:")


def test_an_unknown_name_records_nothing(project: Path, cat_code_home: Path) -> None:
    write(project / ".mcp.json", {"docs": {"command": "server"}})

    with pytest.raises(UnknownProjectServer) as caught:
        decide(["docs", "nope"], TrustDecision.APPROVED, cwd=project)

    assert caught.value.name == "nope" and caught.value.known == ["docs"]
    assert "no project server named 'nope'" in str(caught.value)
    assert not (cat_code_home / APPROVALS_FILE).exists()


def test_a_name_in_a_folder_without_a_project_file_says_there_is_none(
    project: Path, cat_code_home: Path
) -> None:
    with pytest.raises(UnknownProjectServer) as caught:
        decide(["foo"], TrustDecision.APPROVED, cwd=project)

    assert caught.value.missing
    assert str(caught.value) == (
        f"no project server named 'foo': there is no ./.mcp.json in {project}"
    )
    assert not (project / ".mcp.json").exists()
    assert not (cat_code_home / APPROVALS_FILE).exists()


def test_approving_a_users_own_server_says_it_needs_no_approval(
    project: Path, cat_code_home: Path
) -> None:
    write(cat_code_home / "mcp.json", {"mine": {"command": "server"}})
    write(project / ".mcp.json", {})

    with pytest.raises(UnknownProjectServer) as caught:
        decide(["mine"], TrustDecision.APPROVED, cwd=project)

    assert caught.value.user_file == cat_code_home / "mcp.json"
    assert "needs no approval" in str(caught.value)


def test_approving_every_project_server_at_once(project: Path, cat_code_home: Path) -> None:
    write(project / ".mcp.json", {"a": {"command": "a"}, "b": {"url": "https://b.example"}})

    decided = decide([], TrustDecision.APPROVED, every=True, cwd=project)

    assert [(d.name, d.target) for d in decided] == [("a", "a"), ("b", "https://b.example")]
    assert [s.name for s in load_config(cwd=project).servers] == ["a", "b"]


def test_an_unreadable_approvals_file_means_every_project_server_asks(
    project: Path, cat_code_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(project / ".mcp.json", {"docs": {"command": "server"}})
    (cat_code_home / APPROVALS_FILE).write_text("{not json")

    assert TrustStore().decision(project, "docs", {"command": "server"}) is None
    assert [w.name for w in load_config(cwd=project).waiting] == ["docs"]
    assert "not valid JSON" in caplog.text
