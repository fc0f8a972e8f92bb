"""``checkpoint.snapshot``: the time a prompt's first change waits for its checkpoint.

A git repository of 10,000 committed files (200 folders of 50 small files) in a temporary
folder; each repetition rewrites 20 of them (what a prompt's edits or a ``shell`` command
might do) and times `CheckpointStore.snapshot` of a new session — its first snapshot, the
slowest case: the private index is copied from the repository's, then ``git add -A`` stats
the tree and hashes the 20 changed files, ``write-tree`` and ``update-ref``. The sizing of
the checkpoint runs after it returns, off the critical path (`CheckpointStore.settled`),
and is not counted; a second snapshot of the same session is reported as an extra.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cat_code.host.state.checkpoints import CheckpointStore

FOLDERS = 200
FILES_PER_FOLDER = 50
CHANGED = 20


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@contextmanager
def repository() -> Iterator[Path]:
    """The 10,000-file repository, committed, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="cat-code-bench-") as folder:
        repo = Path(folder) / "repo"
        for d in range(FOLDERS):
            sub = repo / f"pkg{d:03}"
            sub.mkdir(parents=True)
            for f in range(FILES_PER_FOLDER):
                path = sub / f"mod{f:02}.py"
                path.write_text(f"# module {d}.{f}\nVALUE = {d * f}\n")
                # Written an hour ago, as in a real checkout: files as new as the index
                # are "racily clean" to git and rehashed on every add.
                os.utime(path, (time.time() - 3600, time.time() - 3600))
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "-c", "user.email=b@example.com", "-c", "user.name=b", "add", "-A")
        _git(repo, "-c", "user.email=b@example.com", "-c", "user.name=b", "commit", "-qm", "x")
        yield repo


@dataclass
class Timing:
    first: float
    second: float


async def snapshot_once(repo: Path, home: Path, rep: int) -> Timing:
    """Change 20 files, time a new session's first snapshot, then its second."""
    store = CheckpointStore(repo, f"bench-{rep}", home)
    for i in range(CHANGED):
        path = repo / f"pkg{(i * 7) % FOLDERS:03}" / f"mod{i:02}.py"
        path.write_text(f"# changed in repetition {rep}\nVALUE = {rep}\n")
    started = time.perf_counter()
    await store.snapshot(1, "first prompt")
    first = time.perf_counter() - started
    await store.settled()
    for i in range(CHANGED):
        (repo / f"pkg{(i * 11) % FOLDERS:03}" / f"mod{i + 20:02}.py").write_text(f"# {rep}\n")
    started = time.perf_counter()
    await store.snapshot(2, "second prompt")
    second = time.perf_counter() - started
    await store.remove_all()
    return Timing(first, second)
