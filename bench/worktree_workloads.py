"""Worktree workloads: cat-code's WorktreeStore next to git doing the same job bare.

One repository of 5,000 files (50 folders × 100 small files, one commit) is made once per
run in a temporary folder. Each repetition makes one worktree and removes it again:
``worktree.create`` times `create_worktree` (one ``rev-parse``, the exclude line, ``git
worktree add``, the owner record) against ``git worktree add -b BRANCH PATH HEAD`` alone;
``worktree.remove`` times `remove_if_clean` (the new-commit check, ``git worktree remove``,
the branch deleted) against ``git worktree remove`` + ``git branch -D``. The floor starts
git the same way (an asyncio child process). Results are checked after the clock stops.
"""

from __future__ import annotations

import asyncio
import atexit
import itertools
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from workloads import Sizes, _check, _clock

FILES = 5_000
_FOLDERS = 50
_repo: list[Path] = []
_names = itertools.count()


def repository() -> Path:
    """The 5,000-file repository of this run (made on first use, removed at exit)."""
    if not _repo:
        top = Path(tempfile.mkdtemp(prefix="cat-code-bench-worktrees-"))
        atexit.register(shutil.rmtree, top, ignore_errors=True)
        repo = top / "repo"
        for index in range(FILES):
            path = repo / f"pkg{index % _FOLDERS:02d}" / f"module_{index:04d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f'"""Module {index}."""\n\nVALUE = {index}\n')
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
        }  # fmt: skip
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "5,000 files"]):
            subprocess.run(["git", *args], cwd=repo, env=env, check=True, timeout=300)
        _repo.append(repo)
    return _repo[0]


async def worktree_cycle(impl: str, sizes: Sizes) -> dict[str, float]:
    """Make one worktree, then remove it: the time of each."""
    if impl == "cat_code":
        return await _cat_code_cycle()
    if impl == "floor":
        return await _floor_cycle()
    return {}


async def _cat_code_cycle() -> dict[str, float]:
    from cat_code.host.worktrees import create_worktree, remove_if_clean

    repo = repository()
    name = f"bench-{next(_names)}"
    start = _clock()
    wt = await create_worktree(repo, name)
    created = time.perf_counter()
    _check((wt.path / "pkg00" / "module_0000.py").is_file(), "the worktree has no files")
    start_remove = _clock()
    removed = await remove_if_clean(wt)
    done = time.perf_counter()
    _check(removed and not wt.path.exists(), "the clean worktree was not removed")
    return {"worktree.create": created - start, "worktree.remove": done - start_remove}


async def _floor_cycle() -> dict[str, float]:
    repo = repository()
    name = f"bench-{next(_names)}"
    path = repo / ".cat-code" / "worktrees" / name
    branch = f"cat-code/{name}"
    start = _clock()
    await _git(repo, "worktree", "add", "--quiet", "-b", branch, str(path), "HEAD")
    created = time.perf_counter()
    _check((path / "pkg00" / "module_0000.py").is_file(), "the worktree has no files")
    start_remove = _clock()
    await _git(repo, "worktree", "remove", str(path))
    await _git(repo, "branch", "--quiet", "-D", branch)
    done = time.perf_counter()
    _check(not path.exists(), "the worktree was not removed")
    return {"worktree.create": created - start, "worktree.remove": done - start_remove}


async def _git(repo: Path, *args: str) -> None:
    process = await asyncio.create_subprocess_exec(
        "git", *args, cwd=repo, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    _, err = await process.communicate()
    _check(process.returncode == 0, f"git {args[:2]} failed: {err.decode(errors='replace')}")
