"""``isolation: "worktree"`` end to end in ``-p``: a subagent works in a fresh worktree of
its own; its answer names the branch and the files it changed; a clean one is removed at
once. The real ``cat-code`` in a real repository, a scripted model API playing the parent's
conversation and the subagent's (routed by its prompt)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.git_repos import branches, make_repo, worktree_paths
from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use, tool_results

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip
WRITER = "Write the fix into fix.txt."
READER = "Only look at README.md."


@pytest.fixture
def api() -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        yield server
    assert server.errors == []


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    (tmp_path / "none.json").write_text('{"mcpServers": {}}')
    return folder


def run(repo: Path, api: ScriptedModelApi, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(repo.parent), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    argv = [CAT_CODE, "--mcp-config", "../none.json", "--model", "anthropic:claude-sonnet-4-5"]
    return subprocess.run(
        [*argv, "--yes", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=60
    )


def isolated(prompt: str) -> dict[str, Any]:
    return anthropic_tool_use(
        "agent", {"description": "isolated", "prompt": prompt, "isolation": "worktree"}
    )


def test_an_isolated_subagent_edits_only_its_worktree_and_its_answer_names_branch_and_files(
    repo: Path, api: ScriptedModelApi
) -> None:
    answers: list[str] = []

    def parent_reads(request: dict[str, Any]) -> dict[str, Any]:
        (result,) = tool_results(request)
        answers.append(str(result["content"]))
        return anthropic_text("done")

    api.add(isolated(WRITER), parent_reads)
    api.add_conversation(
        WRITER,
        anthropic_tool_use("write_file", {"path": "fix.txt", "content": "fixed\n"}),
        anthropic_text("wrote fix.txt"),
    )
    done = run(repo, api, "-p", "fix it in isolation")
    assert done.returncode == 0, done.stderr
    (answer,) = answers
    (kept,) = [p for p in worktree_paths(repo) if p != repo]
    assert (kept / "fix.txt").read_text() == "fixed\n" and not (repo / "fix.txt").exists()
    branch = f"cat-code/{kept.name}"
    assert f"work kept on branch {branch} in worktree {kept}; files changed: fix.txt" in answer
    assert branch in branches(repo)


def test_an_isolated_subagent_that_changed_nothing_leaves_no_worktree(
    repo: Path, api: ScriptedModelApi
) -> None:
    api.add(isolated(READER), anthropic_text("read it"))
    api.add_conversation(READER, anthropic_text("README says hello"))
    done = run(repo, api, "-p", "look in isolation")
    assert done.returncode == 0, done.stderr
    assert worktree_paths(repo) == [repo] and branches(repo) == ["main"]


def test_outside_a_repository_an_isolated_subagent_is_an_error_the_parent_reads(
    tmp_path: Path, api: ScriptedModelApi
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (tmp_path / "none.json").write_text('{"mcpServers": {}}')
    seen: list[dict[str, Any]] = []

    def parent_reads(request: dict[str, Any]) -> dict[str, Any]:
        seen.extend(tool_results(request))
        return anthropic_text("no isolation here")

    api.add(isolated(READER), parent_reads)
    done = run(plain, api, "-p", "look in isolation")
    assert done.returncode == 0, done.stderr
    (result,) = seen
    assert result["is_error"] is True
    assert "not inside a git repository" in str(result["content"])
    assert list(plain.iterdir()) == []
