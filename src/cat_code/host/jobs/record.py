"""`JobRecord`: one background job as the registry on disk knows it.

The registry is ``$CAT_CODE_HOME/jobs/`` (0700): per job, ``<id>.json`` (its record,
0600, written atomically at each change) and ``<id>.log`` (its output, 0600). A record
holds what another cat-code needs to judge the job without its owner: the command, the
working directory, the leader's pid and process group and start time (clock ticks, for
the pid-reuse guard), when it started and ended, its exit code and how it ended, the
owning cat-code's pid and start time, and the session that started it. An id is six hex
digits, unique in the folder (the record is created with ``O_EXCL``).
"""

from __future__ import annotations

import contextlib
import enum
import json
import logging
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cat_code.base.files import PRIVATE_FILE_MODE, atomic_write

logger = logging.getLogger(__name__)

JOBS_DIR = "jobs"
#: Bumped when the record's fields change meaning; other versions are listed, never judged.
RECORD_VERSION = 1


class JobState(enum.StrEnum):
    """Where a job is. Its string is what ``cat-code jobs --json`` shows."""

    RUNNING = "running"
    #: Its command ended by itself (``exit_code`` says how).
    EXITED = "exited"
    #: Ended by ``job_stop`` or ``/jobs stop``.
    STOPPED = "stopped"
    #: Ended because its cat-code exited (Ctrl-D, /exit, a signal, ``-p`` done).
    ENDED_AT_EXIT = "ended_at_exit"
    #: Its cat-code was killed (SIGKILL); a later cat-code found it and ended it, or found
    #: it gone.
    ORPHAN_ENDED = "orphan_ended"


@dataclass(slots=True)
class JobRecord:
    """The fields of ``<id>.json`` (camelCase there)."""

    id: str
    command: str
    cwd: str
    pid: int
    pgid: int
    #: The leader's start time in clock ticks since boot (0 without /proc).
    leader_start: int
    started_at: float
    owner_pid: int
    owner_start: int
    session_id: str = ""
    state: JobState = JobState.RUNNING
    ended_at: float | None = None
    exit_code: int | None = None
    #: How it ended, one line (None while it runs).
    reason: str | None = None

    @property
    def running(self) -> bool:
        return self.state is JobState.RUNNING

    def to_json(self) -> dict[str, Any]:
        fields = asdict(self)
        fields["state"] = str(self.state)
        return {"version": RECORD_VERSION, **{_camel(k): v for k, v in fields.items()}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JobRecord:
        """Raises ValueError, KeyError or TypeError for a record that is not one."""
        if data.get("version") != RECORD_VERSION:
            raise ValueError(f"record version {data.get('version')!r}")
        fields = {name: data[_camel(name)] for name in cls.__dataclass_fields__}
        fields["state"] = JobState(fields["state"])
        for name in ("pid", "pgid", "leader_start", "owner_pid", "owner_start"):
            fields[name] = int(fields[name])
        return cls(**fields)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def jobs_dir() -> Path:
    """``$CAT_CODE_HOME/jobs``: every background job's record and output."""
    from cat_code.host.state.home import cat_code_home

    return cat_code_home() / JOBS_DIR


def record_path(directory: Path, job_id: str) -> Path:
    return directory / f"{job_id}.json"


def output_path(directory: Path, job_id: str) -> Path:
    return directory / f"{job_id}.log"


def new_id(directory: Path) -> str:
    """A fresh id, claimed by creating its (empty) record file. Raises OSError."""
    for _ in range(100):
        job_id = secrets.token_hex(3)
        try:
            fd = os.open(
                record_path(directory, job_id), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600
            )
        except FileExistsError:
            continue
        os.close(fd)
        return job_id
    raise OSError(f"no free job id in {directory}")


def save(directory: Path, record: JobRecord) -> None:
    """Write the record atomically (a reader never sees half of it). Raises OSError."""
    data = json.dumps(record.to_json())
    atomic_write(record_path(directory, record.id), data, mode=PRIVATE_FILE_MODE, durable=False)


def load_all(directory: Path) -> tuple[list[JobRecord], list[str]]:
    """Every readable record, oldest first, and one warning per unreadable one."""
    records: list[JobRecord] = []
    warnings: list[str] = []
    try:
        paths = sorted(directory.glob("*.json"))
    except OSError:
        return records, warnings
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
            if not text:
                continue  # an id just claimed; its record is being written
            data = json.loads(text)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            records.append(JobRecord.from_json(data))
        except FileNotFoundError:
            continue
        except (OSError, ValueError, KeyError, TypeError) as exc:
            warnings.append(f"{path}: not a job record ({exc}); skipped")
    records.sort(key=lambda record: record.started_at)
    return records, warnings


def remove(directory: Path, job_id: str) -> None:
    """Delete a job's record and output. Never raises."""
    for path in (record_path(directory, job_id), output_path(directory, job_id)):
        with contextlib.suppress(OSError):
            path.unlink()


__all__ = [
    "JOBS_DIR",
    "JobRecord",
    "JobState",
    "jobs_dir",
    "load_all",
    "new_id",
    "output_path",
    "record_path",
    "remove",
    "save",
]
