"""A subagent's worktree isolation on a real repository: its tools work in its own
worktree, its summary names the branch and the files, a clean one goes at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from scripted.git_repos import branches, make_repo, worktree_paths

from cat_code.agent.session import builtin_tool_list
from cat_code.agent.worktree_isolation import WorktreeIsolation, worktree_isolation, worktree_name
from cat_code.host.worktrees import NotARepository, check_name


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"README.md": "hello\n"})


async def isolate(agent: str, repo: Path) -> WorktreeIsolation:
    return await worktree_isolation(agent, repo=repo, make_tools=builtin_tool_list)


async def test_its_tools_write_into_its_worktree_and_the_summary_names_branch_and_files(
    repo: Path,
) -> None:
    place = await isolate("fixer", repo)
    tools = {tool.name: tool for tool in place.tools()}
    result = await tools["write_file"].execute({"path": "fix.py", "content": "x = 1\n"})
    assert not result.is_error, result.content
    assert (place.cwd / "fix.py").read_text() == "x = 1\n" and not (repo / "fix.py").exists()
    summary = await place.leave()
    assert f"work kept on branch {place.worktree.branch}" in summary
    assert "files changed: fix.py" in summary
    assert place.worktree.branch in branches(repo)


async def test_a_subagent_that_changed_nothing_leaves_no_worktree_and_no_branch(
    repo: Path,
) -> None:
    place = await isolate("reader", repo)
    assert place.cwd.is_dir()
    assert "no changes; removed it and its branch" in await place.leave()
    assert worktree_paths(repo) == [repo] and branches(repo) == ["main"]


async def test_subagents_started_together_each_get_a_worktree_of_their_own(repo: Path) -> None:
    places = await asyncio.gather(*(isolate("twin", repo) for _ in range(3)))
    assert len({p.cwd for p in places}) == 3
    for summary in await asyncio.gather(*(p.leave() for p in places)):
        assert "no changes" in summary
    assert branches(repo) == ["main"]


async def test_outside_a_repository_the_isolation_fails_with_nothing_made(
    tmp_path: Path,
) -> None:
    with pytest.raises(NotARepository):
        await isolate("x", tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("agent", ["code-reviewer", "a b/c..d", "..", "é" * 50, "x" * 60])
def test_any_agent_name_makes_a_valid_worktree_name(agent: str) -> None:
    assert check_name(worktree_name(agent)).startswith("agent-")
