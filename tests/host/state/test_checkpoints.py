"""Checkpoints: the working tree before each prompt, kept without touching the user's git state."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from cat_code.host.state import checkpoints
from cat_code.host.state.checkpoints import CheckpointKind, CheckpointStore


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / ".gitignore").write_text("build/\n")
    (repo / "a.txt").write_text("one\n")
    (repo / "src").mkdir()
    (repo / "src" / "b.py").write_text("print('b')\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    return repo


def user_state(repo: Path) -> tuple[str, str, str, str]:
    index = hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest()
    return (
        git(repo, "status", "--porcelain", "--untracked-files=all"),
        git(repo, "rev-parse", "HEAD"),
        git(repo, "stash", "list"),
        index,
    )


async def test_a_snapshot_leaves_the_users_branch_index_stash_and_files_alone(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "a.txt").write_text("edited but not staged\n")
    (repo / "new.txt").write_text("untracked\n")
    before = user_state(repo)
    store = CheckpointStore(repo, "s1", tmp_path / "home")
    checkpoint = await store.snapshot(1, "first prompt")
    await store.settled()
    assert store.kind is CheckpointKind.GIT and checkpoint.tree
    assert user_state(repo) == before
    assert git(repo, "for-each-ref", "--format=%(refname)").split() == [
        "refs/cat-code/checkpoints/s1/1",
        "refs/heads/main",
    ]


async def test_a_rewind_undoes_what_a_shell_command_did_tracked_untracked_and_deleted(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "notes.txt").write_text("untracked notes\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_text("ignored")
    store = CheckpointStore(repo, "s1", tmp_path / "home")
    checkpoint = await store.snapshot(1, "rewrite things")
    # What a shell command might do: rewrite, delete, create, in tracked and untracked files.
    (repo / "a.txt").write_text("rewritten by sed\n")
    (repo / "src" / "b.py").unlink()
    (repo / "notes.txt").write_text("changed notes\n")
    (repo / "created.txt").write_text("new\n")
    (repo / "build" / "out.bin").write_text("rebuilt")
    restored = await store.restore(checkpoint)
    assert sorted(restored.written) == ["a.txt", "notes.txt", "src/b.py"]
    assert restored.removed == ["created.txt"]
    assert (repo / "a.txt").read_text() == "one\n"
    assert (repo / "src" / "b.py").read_text() == "print('b')\n"
    assert (repo / "notes.txt").read_text() == "untracked notes\n"
    assert not (repo / "created.txt").exists()
    assert (repo / "build" / "out.bin").read_text() == "rebuilt"  # ignored: never touched
    assert git(repo, "status", "--porcelain") == "?? notes.txt\n"


async def test_files_changed_by_something_else_since_the_last_turn_are_named(
    repo: Path, tmp_path: Path
) -> None:
    store = CheckpointStore(repo, "s1", tmp_path / "home")
    await store.snapshot(1, "p")
    await store.settled()
    (repo / "a.txt").write_text("cat-code's change\n")
    await store.turn_ended(1)
    assert await store.changed_by_others() == []
    (repo / "src" / "b.py").write_text("the user's editor\n")
    assert await store.changed_by_others() == ["src/b.py"]


async def test_outside_git_the_file_tools_changes_are_kept_and_shell_is_said_not_covered(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "a.txt").write_text("one\n")
    store = CheckpointStore(folder, "s1", tmp_path / "home")
    first = await store.snapshot(1, "edit a")
    assert store.kind is CheckpointKind.FILES and not store.covers_shell
    store.before_change(1, folder / "a.txt")
    (folder / "a.txt").write_text("two\n")
    store.before_change(1, folder / "a.txt")  # once per prompt: the first copy stays
    (folder / "a.txt").write_text("three\n")
    await store.snapshot(2, "create b")
    store.before_change(2, folder / "b.txt")
    (folder / "b.txt").write_text("new\n")
    restored = await store.restore(first)
    assert (restored.written, restored.removed) == (["a.txt"], ["b.txt"])
    assert (folder / "a.txt").read_text() == "one\n"
    assert not (folder / "b.txt").exists()


async def test_the_oldest_checkpoints_are_dropped_past_the_size_cap(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CheckpointStore(repo, "s1", tmp_path / "home")
    await store.snapshot(1, "p1")
    monkeypatch.setattr(checkpoints, "MAX_TOTAL_BYTES", 5_000)
    (repo / "big.txt").write_text("x" * 4_000)
    await store.snapshot(2, "p2")
    (repo / "big.txt").write_text("y" * 4_000)
    await store.snapshot(3, "p3")
    await store.settled()
    assert [c.number for c in store.checkpoints] == [3]
    assert store.dropped == 2
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/cat-code/").split()
    assert refs == ["refs/cat-code/checkpoints/s1/3"]


async def test_removing_a_sessions_checkpoints_leaves_no_ref(repo: Path, tmp_path: Path) -> None:
    store = CheckpointStore(repo, "s1", tmp_path / "home")
    await store.snapshot(1, "p1")
    await store.snapshot(2, "p2")
    await store.remove_all()
    assert git(repo, "for-each-ref", "refs/cat-code/") == ""
