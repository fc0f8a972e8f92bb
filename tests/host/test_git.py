"""The one git runner (`cat_code.host.git`): real git, both pipes drained together, a bound
that kills git's whole group; and the worktree store's translation of its errors."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from scripted.git_repos import make_repo

from cat_code.host.git import GitError, GitMissing, run_git
from cat_code.host.worktrees import GitFailed, GitNotFound, GitTimedOut
from cat_code.host.worktrees._git import git


async def test_an_unchecked_failure_comes_back_with_its_exit_code(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    result = await run_git(repo, "rev-parse", "--verify", "no-such-ref", check=False)
    assert (result.code == 128 and "no-such-ref" in result.stderr) or "fatal" in result.stderr
    assert (await run_git(repo, "rev-parse", "HEAD")).code == 0


async def test_megabytes_on_stderr_and_stdout_at_once_never_stall_git(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    # More than a pipe holds on each stream: a reader of one pipe only would deadlock.
    alias = "alias.noisy=!head -c 3000000 /dev/zero | tr '\\0' e >&2; head -c 3000000 /dev/zero"
    result = await run_git(repo, "-c", alias, "noisy", timeout=60)
    assert len(result.stderr) == 3_000_000 and len(result.stdout) == 3_000_000


async def test_a_git_past_its_bound_is_killed_with_what_it_started(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    pidfile = tmp_path / "child.pid"
    alias = f"alias.hang=!sh -c 'echo $$ > {pidfile}; exec sleep 60'"
    with pytest.raises(GitError) as caught:
        await run_git(repo, "-c", alias, "hang", timeout=1.0)
    assert caught.value.code is None  # timed out
    pid = int(pidfile.read_text())
    # SIGKILL went to the group before run_git returned; dying takes the kernel a moment.
    deadline = time.monotonic() + 5
    while _runs(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _runs(pid)


def _runs(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def test_without_git_on_path_the_error_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GitMissing, match="no 'git' on PATH"):
        await run_git(tmp_path, "status")


async def test_the_worktree_store_sees_git_failures_as_worktree_errors_with_fields(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    with pytest.raises(GitFailed) as caught:
        await git(repo, "rev-parse", "--verify", "no-such-ref")
    assert caught.value.args_run == ("rev-parse", "--verify", "no-such-ref")
    assert caught.value.returncode == 128 and caught.value.stderr
    with pytest.raises(GitTimedOut, match=r"took longer than 0\.5 s"):
        await git(repo, "-c", "alias.hang=!sleep 30", "hang", timeout_s=0.5)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GitNotFound, match="no git on PATH"):
        await git(repo, "status")
