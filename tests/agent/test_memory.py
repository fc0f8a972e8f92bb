"""Memory files pass read_file's checks: links resolved, special files refused, home guarded."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from cat_code.agent.memory import (
    MAX_MEMORY_CHARS,
    MemoryProblem,
    describe_memory,
    load_memory,
)
from cat_code.agent.system_prompt import build_system_prompt


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "credentials.json").write_text('{"token": "tok-SECRET"}')
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    return folder


def test_finding_1_memory_links_to_the_token_store_and_proc_environ_never_reach_the_prompt(
    home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (project / "AGENTS.md").symlink_to(home / "credentials.json")
    sub = project / "sub"
    sub.mkdir()
    (sub / "CLAUDE.md").symlink_to("/proc/self/environ")
    with caplog.at_level(logging.WARNING, logger="cat_code.agent.memory"):
        memory = load_memory(sub, home)
    text = build_system_prompt(sub, memory=memory)
    assert "tok-SECRET" not in text and os.environ["CAT_CODE_HOME"] not in text
    assert [m.refused.problem if m.refused else None for m in memory] == [
        MemoryProblem.PROTECTED,
        MemoryProblem.OUTSIDE,
    ]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2
    assert str(project / "AGENTS.md") in warnings[0] and "cat-code's own" in warnings[0]
    assert str(sub / "CLAUDE.md") in warnings[1] and "outside the repository" in warnings[1]
    listing = describe_memory(memory)
    assert "refused (not in the system prompt):" in listing
    assert f"{sub / 'CLAUDE.md'}  it leads outside the repository (/proc/" in listing


def test_a_memory_file_through_a_linked_parent_folder_is_judged_by_its_real_path(
    home: Path, project: Path
) -> None:
    (project / "cfg").symlink_to(home)  # inside the repository by name, the home really
    (project / "AGENTS.md").symlink_to("cfg/credentials.json")
    [memory] = load_memory(project, home)
    assert memory.refused is not None and memory.refused.problem is MemoryProblem.PROTECTED
    assert "tok-SECRET" not in build_system_prompt(project, memory=[memory])


def test_a_hard_link_to_the_token_store_is_refused(home: Path, project: Path) -> None:
    os.link(home / "credentials.json", project / "AGENTS.md")
    [memory] = load_memory(project, home)
    assert memory.refused is not None and memory.refused.problem is MemoryProblem.PROTECTED
    assert memory.text == ""


def test_special_memory_files_are_refused_without_blocking(home: Path, project: Path) -> None:
    os.mkfifo(project / "AGENTS.md")  # a blocking open would wait here for a writer
    sub = project / "sub"
    sub.mkdir()
    (sub / "AGENTS.md").symlink_to("/dev/zero")
    memory = load_memory(sub, home)
    assert [m.refused.problem if m.refused else None for m in memory] == [
        MemoryProblem.NOT_REGULAR,
        MemoryProblem.OUTSIDE,
    ]


def test_a_link_inside_the_repository_and_the_users_own_linked_file_are_read(
    home: Path, project: Path, tmp_path: Path
) -> None:
    (project / "docs").mkdir()
    (project / "docs" / "rules.md").write_text("project rules")
    (project / "AGENTS.md").symlink_to("docs/rules.md")
    dotfiles = tmp_path / "dotfiles.md"
    dotfiles.write_text("user rules")
    (home / "AGENTS.md").symlink_to(dotfiles)
    memory = load_memory(project, home)
    assert [(m.text, m.refused) for m in memory] == [("user rules", None), ("project rules", None)]
    assert "refused" not in describe_memory(memory)


def test_the_users_memory_file_may_not_lead_to_another_home_file(home: Path, project: Path) -> None:
    (home / "AGENTS.md").symlink_to(home / "credentials.json")
    [memory] = load_memory(project, home)
    assert memory.refused is not None and memory.refused.problem is MemoryProblem.PROTECTED


def test_a_huge_memory_file_is_cut_not_refused(home: Path, project: Path) -> None:
    (project / "AGENTS.md").write_text("é" * (MAX_MEMORY_CHARS * 3))
    [memory] = load_memory(project, home)
    assert memory.cut and memory.refused is None and len(memory.text) == MAX_MEMORY_CHARS


def test_finding_3_a_memory_file_beside_another_users_git_in_a_shared_parent_is_not_read(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    (shared / ".git").mkdir(parents=True)
    (shared / "AGENTS.md").write_text("INJECTED-FROM-SHARED-PARENT\n")
    work = shared / "work"
    work.mkdir()
    (work / "AGENTS.md").write_text("mine\n")
    assert [f.path for f in load_memory(work, home)] == [shared / "AGENTS.md", work / "AGENTS.md"]
    mine = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: mine + 1)  # the shared .git is another user's
    loaded = load_memory(work, home)
    assert [f.path for f in loaded] == [work / "AGENTS.md"]
    assert "INJECTED" not in "".join(f.text for f in loaded)


@pytest.mark.skipif(not hasattr(os, "lchown") or os.geteuid() != 0, reason="needs root to chown")
def test_finding_3_another_users_git_link_to_a_folder_of_ours_is_no_project_root(
    tmp_path: Path, home: Path
) -> None:
    from cat_code.host.state.settings import project_root

    shared, ours = tmp_path / "shared", tmp_path / "ours"
    (ours / "gitdir").mkdir(parents=True)
    (shared / "work").mkdir(parents=True)
    (shared / ".git").symlink_to(ours / "gitdir")
    os.lchown(shared / ".git", 65534, 65534)  # the link is theirs, its target ours
    (shared / "AGENTS.md").write_text("INJECTED\n")
    assert project_root(shared / "work") == shared / "work"
    assert [f.path for f in load_memory(shared / "work", home)] == []
