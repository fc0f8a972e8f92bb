"""Checkpoints: the working tree as it was before each prompt changed it, to go back to.

In a git repository a checkpoint is a tree object of the whole working tree — tracked files
and untracked ones that are not ignored — written through a private index (a copy of the
repository's, so unchanged files cost a stat) and kept under a private ref,
``refs/cat-code/checkpoints/<session>/<n>``. The user's branch, index, stash and files are
never touched by a snapshot, and whatever changed the files — `write_file`, `edit_file`,
`shell`, an MCP tool — is covered. After each turn the tree is noted again (``…/<n>-end``),
so a rewind can name the files something other than cat-code changed since.

Outside git, `before_change` copies a file the file tools are about to change (once per
prompt) under ``$CAT_CODE_HOME/checkpoints/<session>/<n>/``; shell changes are not covered
there, and `covers_shell` says so. Either way the checkpoints of a session are capped in
total size (`MAX_TOTAL_BYTES`): the oldest are dropped first, and `dropped` says how many.
`restore` writes back every file that differs from the checkpoint and removes the files
created since; it returns what it did, it never asks (the caller asks first).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from cat_code.host.git import GitError, run_git

logger = logging.getLogger(__name__)

REF_ROOT = "refs/cat-code/checkpoints"
#: The most bytes one session's checkpoints may hold (new content only); oldest dropped first.
MAX_TOTAL_BYTES = 512 * 1024 * 1024
#: A file bigger than this is not copied outside git (it is named as not covered).
MAX_FILE_BYTES = 50 * 1024 * 1024


class CheckpointKind(StrEnum):
    GIT = "git"
    FILES = "files"


@dataclass(slots=True)
class Checkpoint:
    """The state before prompt ``number`` (1-based) changed anything."""

    number: int
    prompt: str
    created: float
    #: Git: the tree of the working tree then. Files: None.
    tree: str | None = None
    #: Git: the tree when that prompt's turn ended (for changes made by others since).
    end_tree: str | None = None
    #: New content this checkpoint holds, in bytes (what the size cap counts).
    size: int = 0
    #: Files mode: relative path → whether it existed (its copy is in the folder).
    saved: dict[str, bool] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Restored:
    written: list[str]
    removed: list[str]


class CheckpointStore:
    """One session's checkpoints of the folder it works in."""

    def __init__(self, cwd: Path, session_id: str, home: Path) -> None:
        self.cwd = cwd
        self.session_id = session_id
        self._home = home
        self.kind = CheckpointKind.FILES
        self._root = cwd
        self._git_dir: Path | None = None
        self.checkpoints: list[Checkpoint] = []
        #: How many checkpoints the size cap dropped (oldest first).
        self.dropped = 0
        self._opened = False
        self._sizing: asyncio.Future[None] | None = None

    @property
    def covers_shell(self) -> bool:
        return self.kind is CheckpointKind.GIT

    async def open(self) -> None:
        """Find out whether the folder is in a git work tree (once)."""
        if self._opened:
            return
        self._opened = True
        try:
            top = await run_git(self.cwd, "rev-parse", "--show-toplevel", "--absolute-git-dir")
        except GitError:
            return  # not a repository, or no git: files mode
        lines = top.text.splitlines()
        if len(lines) == 2:
            self._root, self._git_dir = Path(lines[0]), Path(lines[1])
            self.kind = CheckpointKind.GIT

    # -- taking checkpoints ----------------------------------------------------------

    def current(self, number: int) -> Checkpoint | None:
        return next((c for c in self.checkpoints if c.number == number), None)

    async def snapshot(self, number: int, prompt: str) -> Checkpoint:
        """The checkpoint of prompt ``number``, taken now if it does not exist yet."""
        await self.open()
        found = self.current(number)
        if found is not None:
            return found
        checkpoint = Checkpoint(number, " ".join(prompt.split())[:200], time.time())
        await self.settled()
        if self.kind is CheckpointKind.GIT:
            checkpoint.tree = await self._tree()
            previous = (self.checkpoints[-1].tree if self.checkpoints else None) or "HEAD^{tree}"
            # The ref and the size off the critical path: the first change of the prompt
            # waits for the tree only (a fresh object is safe from gc for two weeks); both
            # are done before the next snapshot or rewind (`settled`).
            self._sizing = asyncio.ensure_future(self._size(checkpoint, previous))
        self.checkpoints.append(checkpoint)
        if self.kind is CheckpointKind.FILES:
            await self._cap()
        return checkpoint

    async def settled(self) -> None:
        """Wait for the sizing of the last snapshot (and the cap it may apply)."""
        sizing, self._sizing = self._sizing, None
        if sizing is not None:
            try:
                await sizing
            except GitError as exc:
                logger.debug("sizing a checkpoint failed: %s", exc)

    async def _size(self, checkpoint: Checkpoint, previous: str) -> None:
        assert checkpoint.tree is not None
        await run_git(self._root, "update-ref", self._ref(checkpoint.number), checkpoint.tree)
        checkpoint.size = await self._new_bytes(previous, checkpoint.tree)
        await self._cap()

    async def turn_ended(self, number: int) -> None:
        """Note the tree as the turn of prompt ``number`` left it."""
        checkpoint = self.current(number)
        if checkpoint is None or self.kind is not CheckpointKind.GIT:
            return
        checkpoint.end_tree = await self._tree()

    def before_change(self, number: int, path: Path) -> None:
        """Files mode: keep ``path`` as it is before the file tools change it (once per
        prompt; call after `snapshot`)."""
        checkpoint = self.current(number)
        if checkpoint is None or self.kind is not CheckpointKind.FILES:
            return
        try:
            relative = path.resolve().relative_to(self._root.resolve()).as_posix()
        except ValueError:
            relative = path.resolve().as_posix()  # outside the folder: kept by absolute path
        if relative in checkpoint.saved:
            return
        exists = path.is_file()
        if exists and path.stat().st_size > MAX_FILE_BYTES:
            logger.warning("%s is too large to keep for /rewind", path)
            return
        checkpoint.saved[relative] = exists
        if exists:
            copy = self._folder(checkpoint) / "files" / relative.lstrip("/")
            copy.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.copyfile(path, copy)
            os.chmod(copy, 0o600)
            checkpoint.size += copy.stat().st_size
        self._write_index(checkpoint)

    # -- going back ------------------------------------------------------------------

    async def changed_by_others(self) -> list[str]:
        """Files changed since cat-code's last turn ended, by something else (git only)."""
        ended = [c for c in self.checkpoints if c.end_tree]
        if self.kind is not CheckpointKind.GIT or not ended:
            return []
        return sorted(await self._differences(ended[-1].end_tree or "", await self._tree()))

    async def restore(self, checkpoint: Checkpoint) -> Restored:
        """Put the files back as they were at ``checkpoint``."""
        await self.settled()
        if self.kind is CheckpointKind.GIT:
            return await self._restore_tree(checkpoint)
        return self._restore_files(checkpoint)

    async def _restore_tree(self, checkpoint: Checkpoint) -> Restored:
        assert checkpoint.tree is not None and self._git_dir is not None
        now = await self._tree()
        changes = await self._name_status(checkpoint.tree, now)
        removed = [path for status, path in changes if status == "A"]
        written = [path for status, path in changes if status != "A"]
        if written:
            index = self._git_dir / f"cat-code-restore-{os.getpid()}"
            env = {"GIT_INDEX_FILE": str(index)}
            try:
                await run_git(self._root, "read-tree", checkpoint.tree, extra_env=env)
                paths = "\0".join(written).encode() + b"\0"
                await run_git(
                    self._root, "checkout-index", "-f", "-z", "--stdin", extra_env=env, stdin=paths
                )
            finally:
                index.unlink(missing_ok=True)
        for path in removed:
            (self._root / path).unlink(missing_ok=True)
        return Restored(written, removed)

    def _restore_files(self, checkpoint: Checkpoint) -> Restored:
        written: list[str] = []
        removed: list[str] = []
        later = [c for c in self.checkpoints if c.number >= checkpoint.number]
        # The earliest copy of each file wins: it is the file as it was before that prompt.
        state: dict[str, tuple[Checkpoint, bool]] = {}
        for held in reversed(later):
            for relative, existed in held.saved.items():
                state[relative] = (held, existed)
        for relative, (held, existed) in sorted(state.items()):
            target = Path(relative) if relative.startswith("/") else self._root / relative
            if existed:
                copy = self._folder(held) / "files" / relative.lstrip("/")
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(copy, target)
                written.append(relative)
            elif target.exists():
                target.unlink()
                removed.append(relative)
        return Restored(written, removed)

    def forget_after(self, checkpoint: Checkpoint) -> None:
        """Drop the checkpoints after ``checkpoint`` (the conversation went back to it)."""
        self.forget_from(checkpoint.number + 1)

    def forget_from(self, number: int) -> None:
        """Drop the checkpoints of prompt ``number`` and later (their prompts are gone)."""
        for later in [c for c in self.checkpoints if c.number >= number]:
            self._drop(later)

    async def remove_all(self) -> None:
        """Remove every checkpoint of this session (refs, copies, its private index)."""
        await self.settled()
        if self._git_dir is not None:
            self._index().unlink(missing_ok=True)
        for checkpoint in list(self.checkpoints):
            self._drop(checkpoint)
        if self.kind is CheckpointKind.GIT:
            await self._delete_refs()
        shutil.rmtree(self._session_folder(), ignore_errors=True)

    # -- inside ----------------------------------------------------------------------

    def _index(self) -> Path:
        assert self._git_dir is not None
        return self._git_dir / f"cat-code-index-{self.session_id}"

    async def _tree(self) -> str:
        """The working tree as a tree object, through the session's private index: started
        as a copy of the repository's (stat data of unchanged files: nothing is rehashed)
        and kept, so later snapshots stat the tree and hash only what changed."""
        assert self._git_dir is not None
        index = self._index()
        real = self._git_dir / "index"
        if not index.exists() and real.is_file():
            shutil.copyfile(real, index)
        env = {"GIT_INDEX_FILE": str(index)}
        await run_git(self._root, "add", "-A", "--", ".", extra_env=env)
        written = await run_git(self._root, "write-tree", extra_env=env)
        return written.text.strip()

    async def _name_status(self, old: str, new: str) -> list[tuple[str, str]]:
        listed = await run_git(
            self._root, "diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new
        )
        parts = listed.text.split("\0")
        return [(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2) if parts[i]]

    async def _differences(self, old: str, new: str) -> list[str]:
        return [path for _, path in await self._name_status(old, new)]

    async def _new_bytes(self, old: str, new: str) -> int:
        """The size of the blobs ``new`` has that ``old`` (a tree, or HEAD's) had not."""
        found = await run_git(self._root, "rev-parse", "--verify", "-q", old, check=False)
        if not found.text.strip():  # no commit yet: every blob is new
            args = ["ls-tree", "-r", "-z", "--format=%(objectsize)", new]
            listed = await run_git(self._root, *args)
            return sum(int(n) for n in listed.text.split("\0") if n.strip().isdigit())
        raw = await run_git(self._root, "diff-tree", "-r", "-z", "--no-renames", old, new)
        blobs = [
            fields.split()[3]
            for fields in raw.text.split("\0")
            if fields.startswith(":") and len(fields.split()) >= 5
        ]
        blobs = [b for b in blobs if set(b) != {"0"}]
        if not blobs:
            return 0
        sizes = await run_git(
            self._root,
            "cat-file",
            "--batch-check=%(objectsize)",
            stdin="\n".join(blobs).encode() + b"\n",
        )
        return sum(int(n) for n in sizes.text.split() if n.isdigit())

    async def _cap(self) -> None:
        while sum(c.size for c in self.checkpoints) > MAX_TOTAL_BYTES and len(self.checkpoints) > 1:
            oldest = self.checkpoints[0]
            self._drop(oldest)
            if self.kind is CheckpointKind.GIT:
                await run_git(self._root, "update-ref", "-d", self._ref(oldest.number), check=False)
            self.dropped += 1
            logger.info("checkpoint of prompt %d dropped: checkpoints are capped", oldest.number)

    def _drop(self, checkpoint: Checkpoint) -> None:
        if checkpoint in self.checkpoints:
            self.checkpoints.remove(checkpoint)
        shutil.rmtree(self._folder(checkpoint), ignore_errors=True)

    async def _delete_refs(self) -> None:
        listed = await run_git(
            self._root, "for-each-ref", "--format=%(refname)", f"{REF_ROOT}/{self.session_id}/"
        )
        commands = "".join(f"delete {ref}\n" for ref in listed.text.split())
        if commands:
            await run_git(self._root, "update-ref", "--stdin", stdin=commands.encode())

    def _ref(self, number: int) -> str:
        return f"{REF_ROOT}/{self.session_id}/{number}"

    def _session_folder(self) -> Path:
        return self._home / "checkpoints" / self.session_id

    def _folder(self, checkpoint: Checkpoint) -> Path:
        return self._session_folder() / str(checkpoint.number)

    def _write_index(self, checkpoint: Checkpoint) -> None:
        folder = self._folder(checkpoint)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        record = {"prompt": checkpoint.prompt, "saved": checkpoint.saved}
        (folder / "index.json").write_text(json.dumps(record), encoding="utf-8")


def _may_hold_checkpoints(cwd: Path) -> bool:
    """Whether the repository of ``cwd`` may hold checkpoint refs, told from its files
    (loose refs, packed refs) without starting git; a worktree's ``.git`` file: maybe."""
    for folder in (cwd, *cwd.parents):
        dot = folder / ".git"
        if dot.is_dir():
            if (dot / "refs" / "cat-code").exists():
                return True
            try:
                return f"{REF_ROOT}/".encode() in (dot / "packed-refs").read_bytes()
            except OSError:
                return False
        if dot.exists():
            return True
    return False


async def prune_checkpoints(cwd: Path, home: Path, alive: Callable[[str], bool]) -> list[str]:
    """Remove the checkpoints of every session ``alive`` says is gone (its session file was
    deleted): their refs in the repository of ``cwd``, private indexes and saved copies.
    Returns the sessions removed; outside git only the copies under ``home`` go."""
    folder = home / "checkpoints"
    gone = {e.name for e in folder.iterdir() if not alive(e.name)} if folder.is_dir() else set()
    listed = None
    if _may_hold_checkpoints(cwd):  # most starts: no ref of ours, and no git process
        try:
            top = await run_git(cwd, "rev-parse", "--show-toplevel", "--absolute-git-dir")
            root, git_dir = (Path(line) for line in top.text.splitlines()[:2])
            listed = await run_git(root, "for-each-ref", "--format=%(refname)", f"{REF_ROOT}/")
        except (GitError, ValueError):
            listed = None
    stale = []
    for ref in listed.text.split() if listed is not None else []:
        session = ref.removeprefix(f"{REF_ROOT}/").split("/")[0]
        if not alive(session):
            stale.append(ref)
            gone.add(session)
    if stale:
        commands = "".join(f"delete {ref}\n" for ref in stale)
        await run_git(root, "update-ref", "--stdin", stdin=commands.encode())
    for session in gone:
        if listed is not None:
            (git_dir / f"cat-code-index-{session}").unlink(missing_ok=True)
        shutil.rmtree(folder / session, ignore_errors=True)
    return sorted(gone)


__all__ = [
    "MAX_TOTAL_BYTES",
    "Checkpoint",
    "CheckpointKind",
    "CheckpointStore",
    "Restored",
    "prune_checkpoints",
]
