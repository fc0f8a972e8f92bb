"""``cat-code --worktree`` / ``-w`` and ``cat-code worktree …`` end to end: the real command
in real git repositories, with the scripted model API.

What a new user would check: a ``-w`` run's edits land only in the worktree; a clean run
leaves no worktree and no branch; a dirty one is kept, named on stderr and listed by
``worktree list``; ``worktree gc`` (and the next start) after a SIGKILL removes the clean
leftovers and reports the dirty ones.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.git_repos import branches, git, make_repo, worktree_paths
from scripted.model_api import (
    Hold,
    ScriptedModelApi,
    anthropic_text,
    anthropic_tool_use,
    streamed,
)
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    (tmp_path / "none.json").write_text('{"mcpServers": {}}')
    return folder


@pytest.fixture
def api() -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        yield server
    assert server.errors == []


def environment(repo: Path, api: ScriptedModelApi) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(repo.parent), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    return env


def cat_code(repo: Path, api: ScriptedModelApi, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CAT_CODE, *args],
        cwd=repo,
        env=environment(repo, api),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def oneshot(repo: Path, api: ScriptedModelApi, *args: str) -> subprocess.CompletedProcess[str]:
    """``cat-code --mcp-config ../none.json --yes ARGS`` (a relative path, as a user types)."""
    return cat_code(repo, api, "--mcp-config", "../none.json", "--yes", *args)


WRITE_NOTE = anthropic_tool_use("write_file", {"path": "note.txt", "content": "from the agent\n"})


def test_a_dash_w_run_edits_only_its_worktree_which_is_kept_listed_and_named_on_stderr(
    repo: Path, api: ScriptedModelApi
) -> None:
    api.add(WRITE_NOTE, anthropic_text("wrote note.txt"))
    run = oneshot(repo, api, "-w", "notes", "-p", "write a note")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "wrote note.txt\n"
    wt = repo / ".cat-code/worktrees/notes"
    assert (wt / "note.txt").read_text() == "from the agent\n"
    assert not (repo / "note.txt").exists() and git(repo, "status", "--porcelain") == ""
    assert f"kept worktree notes (1 uncommitted change): {wt} on branch cat-code/notes" in (
        run.stderr
    )
    assert "cat-code/notes" in branches(repo)

    listed = cat_code(repo, api, "worktree", "list")
    assert listed.returncode == 0
    assert (
        listed.stdout
        == f"notes  cat-code/notes  dirty: 1 uncommitted change  session ended  {wt}\n"
    )
    [entry] = json.loads(cat_code(repo, api, "worktree", "list", "--json").stdout)
    assert entry["name"] == "notes" and entry["path"] == str(wt) and entry["state"] == "dirty"
    assert entry["branch"] == "cat-code/notes" and entry["session"] == "ended"

    refused = cat_code(repo, api, "worktree", "remove", "notes")
    assert refused.returncode == 1 and "has 1 uncommitted change; not removed" in refused.stderr
    assert wt.is_dir()
    forced = cat_code(repo, api, "worktree", "remove", "notes", "--force")
    assert forced.returncode == 0, forced.stderr
    assert worktree_paths(repo) == [repo] and branches(repo) == ["main"]


def test_the_session_runs_inside_the_worktree(repo: Path, api: ScriptedModelApi) -> None:
    api.add(
        anthropic_tool_use("shell", {"command": "pwd; git branch --show-current"}),
        anthropic_text("looked"),
    )
    run = oneshot(repo, api, "--worktree", "where", "-p", "where am I?")
    assert run.returncode == 0, run.stderr
    [result] = [b for m in api.requests[1]["messages"] for b in m["content"]
                if b["type"] == "tool_result"]  # fmt: skip
    assert f"{repo}/.cat-code/worktrees/where\ncat-code/where\n" in str(result["content"])
    # Only looking leaves nothing to keep.
    assert "worktree where had no changes: removed it and its branch" in run.stderr
    assert worktree_paths(repo) == [repo] and branches(repo) == ["main"]


def test_a_clean_dash_w_run_leaves_no_worktree_and_no_branch_behind(
    repo: Path, api: ScriptedModelApi
) -> None:
    api.add(anthropic_text("nothing to change"))
    run = oneshot(repo, api, "-w", "-p", "look around")
    assert run.returncode == 0, run.stderr
    assert run.stdout == "nothing to change\n"
    assert "had no changes: removed it and its branch" in run.stderr
    assert worktree_paths(repo) == [repo] and branches(repo) == ["main"]
    assert not any((repo / ".cat-code/worktrees").iterdir())
    assert git(repo, "status", "--porcelain") == "" and not (repo / ".gitignore").exists()


@pytest.mark.parametrize("name", ["a/b", "..", "has space"])
def test_a_bad_name_is_refused_before_anything_runs_or_is_created(
    repo: Path, api: ScriptedModelApi, name: str
) -> None:
    run = oneshot(repo, api, "-w", name, "-p", "hi")
    assert run.returncode == 2
    assert "invalid worktree name" in run.stderr and run.stdout == ""
    assert api.requests == [] and not (repo / ".cat-code").exists()


def test_a_name_in_use_or_a_folder_outside_git_is_a_clear_error(
    repo: Path, api: ScriptedModelApi, tmp_path: Path
) -> None:
    git(repo, "branch", "cat-code/taken")
    taken = oneshot(repo, api, "-w", "taken", "-p", "hi")
    assert taken.returncode == 1
    assert "worktree name 'taken' is in use: the branch cat-code/taken exists" in taken.stderr
    outside = tmp_path / "plain"
    outside.mkdir()
    run = cat_code(outside, api, "--mcp-config", "../none.json", "-w", "x", "-p", "hi")
    assert run.returncode == 1 and "is not inside a git repository" in run.stderr
    assert api.requests == [] and list(outside.iterdir()) == []


def killed_mid_answer(repo: Path, api: ScriptedModelApi, name: str, *, write: bool) -> None:
    """Start ``cat-code -w NAME -p``, wait until it waits on the model, SIGKILL it."""
    hold = Hold()
    api.add(*([WRITE_NOTE] if write else []), streamed("thinking ", hold, "done"))
    with subprocess.Popen(
        [CAT_CODE, "--mcp-config", "../none.json", "--yes", "-w", name, "-p", "go"],
        cwd=repo, env=environment(repo, api), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    ) as process:  # fmt: skip
        try:
            hold.wait_reached()
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
            hold.release()


def test_a_dash_w_run_ended_by_sigterm_still_removes_its_clean_worktree(
    repo: Path, api: ScriptedModelApi
) -> None:
    hold = Hold()
    api.add(streamed("thinking ", hold, "done"))
    with subprocess.Popen(
        [CAT_CODE, "--mcp-config", "../none.json", "-w", "termed", "-p", "go"],
        cwd=repo, env=environment(repo, api), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as process:  # fmt: skip
        try:
            hold.wait_reached()
            assert (repo / ".cat-code/worktrees/termed").is_dir()
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=30)
        finally:
            process.kill()
            hold.release()
    assert process.returncode == 128 + signal.SIGTERM
    assert "worktree termed had no changes: removed it and its branch" in stderr
    assert worktree_paths(repo) == [repo] and branches(repo) == ["main"]


def test_worktree_gc_after_a_sigkill_removes_the_clean_leftover_and_reports_the_dirty_one(
    repo: Path, api: ScriptedModelApi
) -> None:
    # The dirty one first: every start sweeps clean leftovers, so the second run would
    # already have removed a clean one killed before it.
    killed_mid_answer(repo, api, "dirty-one", write=True)
    killed_mid_answer(repo, api, "clean-one", write=False)
    listed = cat_code(repo, api, "worktree", "list").stdout
    assert "clean-one  cat-code/clean-one  clean  session ended" in listed
    assert "dirty-one  cat-code/dirty-one  dirty: 1 uncommitted change  session ended" in listed

    gc = cat_code(repo, api, "worktree", "gc")
    assert gc.returncode == 0, gc.stderr
    assert "removed 1 clean worktree(s) and their branches: clean-one" in gc.stdout
    dirty = repo / ".cat-code/worktrees/dirty-one"
    assert f"kept dirty-one (1 uncommitted change; branch cat-code/dirty-one): {dirty}" in gc.stdout
    assert worktree_paths(repo) == [repo, dirty]
    assert sorted(branches(repo)) == ["cat-code/dirty-one", "main"]


def test_the_next_start_sweeps_the_clean_worktree_a_killed_run_left(
    repo: Path, api: ScriptedModelApi
) -> None:
    killed_mid_answer(repo, api, "left-over", write=False)
    assert (repo / ".cat-code/worktrees/left-over").is_dir()
    api.add(anthropic_text("hello"))
    run = oneshot(repo, api, "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert worktree_paths(repo) == [repo] and branches(repo) == ["main"]


# -- the REPL ------------------------------------------------------------------------------


@pytest.fixture
def repl(repo: Path, api: ScriptedModelApi) -> Iterator[Any]:
    terminals: list[Terminal] = []

    def start(*args: str) -> Terminal:
        argv = ["--mcp-config", "../none.json", "--model", "anthropic:claude-sonnet-4-5", *args]
        terminals.append(Terminal(CAT_CODE, argv, env=environment(repo, api), cwd=repo))
        return terminals[-1]

    yield start
    for term in terminals:
        term.close()


def test_the_repl_shows_its_worktree_and_asks_to_keep_or_remove_one_holding_work(
    repl: Any, repo: Path, api: ScriptedModelApi
) -> None:
    api.add(WRITE_NOTE, anthropic_text("wrote it"))
    term = repl("-w", "repl-work", "--yes")
    wt = repo / ".cat-code/worktrees/repl-work"
    term.wait_for("worktree repl-work · branch cat-code/repl-work")
    term.wait_for("›")
    term.type("write a note")
    term.wait_for("wrote it")
    assert (wt / "note.txt").is_file() and not (repo / "note.txt").exists()
    term.type("/status")
    term.wait_for("worktree repl-work · branch cat-code/repl-work")
    term.type("/worktree")
    term.wait_for("holds: 1 uncommitted change")
    term.wait_for("files changed: note.txt")
    term.type("/exit")
    term.wait_for("worktree repl-work has 1 uncommitted change. keep it or remove it? [K/r]")
    term.type("r")
    term.wait_for("removed worktree repl-work and its branch cat-code/repl-work")
    assert term.wait_for_exit() == 0
    assert worktree_paths(repo) == [repo] and branches(repo) == ["main"]


def test_the_repl_keeps_a_worktree_holding_work_by_default_and_removes_a_clean_one(
    repl: Any, repo: Path, api: ScriptedModelApi
) -> None:
    api.add(WRITE_NOTE, anthropic_text("wrote it"))
    term = repl("-w", "keep-me", "--yes")
    term.wait_for("›")
    term.type("write a note")
    term.wait_for("wrote it")
    term.type("/exit")
    term.wait_for("keep it or remove it? [K/r]")
    term.type("")
    wt = repo / ".cat-code/worktrees/keep-me"
    term.wait_for(f"kept worktree keep-me (1 uncommitted change): {wt} on branch cat-code/keep-me")
    assert term.wait_for_exit() == 0
    assert (wt / "note.txt").is_file()

    clean = repl("-w", "idle")
    clean.wait_for("worktree idle · branch cat-code/idle")
    clean.wait_for("›")
    clean.type("/worktree")
    clean.wait_for("holds: no changes")
    clean.type("/exit")
    clean.wait_for("worktree idle had no changes: removed it and its branch")
    assert clean.wait_for_exit() == 0
    assert "cat-code/idle" not in branches(repo)
