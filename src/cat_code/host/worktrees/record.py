"""A worktree's owner record: which cat-code made it, from which commit, for whom.

It lives in the worktree's own administrative folder inside the repository's git dir
(``.git/worktrees/ID/cat-code.json``, found through the worktree's ``.git`` file), so it
goes away with the worktree and needs no index of its own; reading it costs two small
file reads and no git process, which keeps the sweep at every start cheap. The owner is
recorded with the run records' pid-reuse guard (`cat_code.host.state.run_records.owner_state`):
pid and start time, boot and pid namespace.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cat_code.base.files import atomic_write
from cat_code.host.state.run_records import OwnerState, owner_fields, owner_state

logger = logging.getLogger(__name__)

RECORD_FILE = "cat-code.json"
RECORD_VERSION = 1


@dataclass(frozen=True, slots=True)
class OwnerRecord:
    """What `read_record` found (the raw fields kept for the owner check)."""

    name: str
    base: str
    created: float
    fields: dict[str, Any]

    @property
    def owner_pid(self) -> int | None:
        pid = self.fields.get("ownerPid")
        return pid if isinstance(pid, int) else None

    def owner(self) -> OwnerState:
        return owner_state(self.fields)


def admin_dir(worktree: Path) -> Path | None:
    """The worktree's folder in the git dir, from its ``.git`` file (None: not a worktree)."""
    try:
        text = (worktree / ".git").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    found = Path(text.removeprefix("gitdir:").strip())
    return found if found.is_absolute() else (worktree / found).resolve()


def write_record(worktree: Path, name: str, base: str) -> None:
    """Record this process as the owner of ``worktree`` (best effort: logged on failure)."""
    folder = admin_dir(worktree)
    if folder is None:
        return
    record = {"version": RECORD_VERSION, "name": name, "base": base, "created": time.time()}
    record.update(owner_fields() or {})
    try:
        atomic_write(folder / RECORD_FILE, json.dumps(record), durable=False)
    except OSError as exc:
        logger.debug("cannot record the owner of worktree %s: %s", worktree, exc)


def read_record(worktree: Path) -> OwnerRecord | None:
    """The owner record of ``worktree``, if it has a readable one."""
    folder = admin_dir(worktree)
    return read_record_at(folder) if folder is not None else None


def read_record_at(folder: Path) -> OwnerRecord | None:
    """The owner record in a worktree's admin folder (also once its work tree is gone)."""
    with contextlib.suppress(OSError, ValueError):
        raw = json.loads((folder / RECORD_FILE).read_text(encoding="utf-8"))
        if isinstance(raw, dict) and raw.get("version") == RECORD_VERSION:
            created = raw.get("created")
            return OwnerRecord(
                name=str(raw.get("name", "")),
                base=str(raw.get("base", "")),
                created=float(created) if isinstance(created, int | float) else 0.0,
                fields=raw,
            )
    return None
