"""Subagent definitions: Claude Code's files read as they are, bad files skipped and named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cat_code.agent.subagents.definitions import (
    GENERAL_PURPOSE,
    MAX_DEFINITION_BYTES,
    PermissionMode,
    Source,
    load_catalogue,
    parse_definition,
    project_agent_dirs,
)
from cat_code.agent.subagents.listing import catalogue_json, describe_catalogue

CLAUDE_FILE = """---
name: code-reviewer
description: Expert code review specialist. Use after writing code.
tools: Read, Grep, Glob, Bash(git diff:*)
disallowedTools: [Write]
model: inherit
maxTurns: 12
permissionMode: acceptEdits
---
You are a senior code reviewer.

Review the diff.
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_a_claude_code_definition_reads_unchanged_with_its_tool_names_mapped_to_ours() -> None:
    definition = parse_definition(CLAUDE_FILE, source=Source.PROJECT_CLAUDE)

    assert definition.name == "code-reviewer"
    assert definition.tools == ("read_file", "grep", "glob", "shell")
    assert definition.disallowed_tools == ("write_file",)
    assert definition.model is None  # inherit
    assert definition.max_turns == 12
    assert definition.permission_mode is PermissionMode.ACCEPT_EDITS
    assert definition.instructions == "You are a senior code reviewer.\n\nReview the diff."


def test_a_definition_without_a_name_or_description_is_refused_saying_which() -> None:
    with pytest.raises(ValueError, match="'description' \\(required\\)"):
        parse_definition("---\nname: x\n---\nbody\n")
    with pytest.raises(ValueError, match="'name' \\(required\\)"):
        parse_definition("---\ndescription: x\n---\n")
    with pytest.raises(ValueError, match="frontmatter"):
        parse_definition("no frontmatter here")


def test_yaml_aliases_are_refused_so_a_small_file_cannot_expand_into_gigabytes() -> None:
    bomb = "---\nname: b\ndescription: &a [x, x]\nother: [*a, *a, *a]\n---\n"
    with pytest.raises(ValueError, match="alias"):
        parse_definition(bomb)


def test_an_unknown_permission_mode_or_a_bad_max_turns_is_refused() -> None:
    with pytest.raises(ValueError, match="permissionMode"):
        parse_definition("---\nname: a\ndescription: b\npermissionMode: yolo\n---\n")
    with pytest.raises(ValueError, match="maxTurns"):
        parse_definition("---\nname: a\ndescription: b\nmaxTurns: 0\n---\n")


def test_the_catalogue_has_the_built_in_agent_then_the_users_then_the_projects_which_win(
    tmp_path: Path,
) -> None:
    user = tmp_path / "home" / "agents"
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    write(user, "a.md", "---\nname: reviewer\ndescription: the user's\n---\n")
    write(user, "b.md", "---\nname: only-user\ndescription: mine\n---\n")
    write(
        project / ".claude" / "agents", "r.md", "---\nname: reviewer\ndescription: claude's\n---\n"
    )
    write(project / ".cat-code" / "agents", "r.md", "---\nname: reviewer\ndescription: ours\n---\n")
    (project / "src" / "deep").mkdir(parents=True)

    catalogue = load_catalogue(project / "src" / "deep", user)

    assert catalogue.names() == [GENERAL_PURPOSE, "only-user", "reviewer"]
    reviewer = catalogue.get("reviewer")
    assert reviewer is not None and reviewer.source is Source.PROJECT
    assert reviewer.description == "ours"
    assert [d.description for d in catalogue.shadowed] == ["the user's", "claude's"]
    listing = describe_catalogue(catalogue)
    assert "reviewer  (project (.cat-code/agents): " in listing
    assert "(not used: reviewer from user: " in listing
    assert [a["used"] for a in catalogue_json(catalogue)["agents"]].count(False) == 2


def test_project_definitions_are_not_looked_for_above_the_git_root(tmp_path: Path) -> None:
    write(tmp_path / ".claude" / "agents", "x.md", "---\nname: x\ndescription: y\n---\n")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)

    assert project_agent_dirs(repo) == []


def test_symlinks_fifos_oversized_and_broken_files_are_skipped_and_named(tmp_path: Path) -> None:
    folder = tmp_path / "agents"
    write(folder, "good.md", "---\nname: good\ndescription: fine\n---\n")
    secret = write(tmp_path, "secret.md", "---\nname: secret\ndescription: s\n---\n")
    (folder / "link.md").symlink_to(secret)
    os.mkfifo(folder / "fifo.md")
    write(folder, "big.md", "---\nname: big\ndescription: b\n---\n" + "x" * MAX_DEFINITION_BYTES)
    write(folder, "bad.md", "---\nname: [unclosed\ndescription: b\n---\n")

    catalogue = load_catalogue(tmp_path, folder)

    assert catalogue.names() == [GENERAL_PURPOSE, "good"]
    problems = "\n".join(catalogue.warnings)
    assert "link.md: skipped: it is a symbolic link" in problems
    assert "fifo.md: skipped: it is not a regular file" in problems
    assert "big.md: skipped: it is too large (" in problems
    assert "bad.md: skipped: not valid YAML" in problems
