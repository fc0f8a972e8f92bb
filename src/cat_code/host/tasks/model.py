"""`Task` and `TaskStatus`: one step of work the model keeps in a task list, and its errors.

A task is plain data with a JSON shape the acceptance suite and other tools read (Claude
Code's field names): ``id`` (a small integer, unique in its list), ``subject``,
``description``, ``activeForm`` (the "-ing" text shown while it runs), ``status``,
``blockedBy`` / ``blocks`` (ids, kept symmetric by the store), ``owner``, ``metadata``,
``worktree`` and ``createdAt`` / ``updatedAt`` (ISO 8601 UTC). `Task.from_json` checks
a file's object field by field and raises `CorruptTask` for anything else, so a task
read back is always well formed. Every error of the store is a `TaskError` whose text is
what the model reads (`UnknownTask`, `SelfDependency`, `DependencyCycle`, `BadStatus`,
`BadTaskInput`, `TaskStoreUnavailable`).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any


class TaskStatus(StrEnum):
    """Where a task stands; ``deleted`` tasks keep their file (their id is never reused)
    but leave the listing and every other task's dependencies."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    DELETED = "deleted"

    @classmethod
    def parse(cls, value: object) -> TaskStatus:
        """``value`` as a status, else `BadStatus`."""
        try:
            return cls(str(value))
        except ValueError:
            raise BadStatus(value) from None


#: Open tasks are the ones still to do: shown above the prompt, restated after compaction.
OPEN_STATUSES = frozenset({TaskStatus.PENDING, TaskStatus.IN_PROGRESS})


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")


@dataclass(slots=True)
class Task:
    """One task of a list (see the module docstring for the fields)."""

    id: int
    subject: str
    description: str = ""
    active_form: str = ""
    status: TaskStatus = TaskStatus.PENDING
    blocked_by: list[int] = field(default_factory=list)
    blocks: list[int] = field(default_factory=list)
    owner: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    worktree: str = ""
    created_at: str = field(default_factory=now_iso)
    updated_at: str = field(default_factory=now_iso)

    def copy(self) -> Task:
        """A copy whose lists and metadata can change without touching this one."""
        return Task(
            self.id,
            self.subject,
            self.description,
            self.active_form,
            self.status,
            list(self.blocked_by),
            list(self.blocks),
            self.owner,
            dict(self.metadata),
            self.worktree,
            self.created_at,
            self.updated_at,
        )

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATUSES

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "subject": self.subject,
            "description": self.description,
            "activeForm": self.active_form,
            "status": str(self.status),
            "blockedBy": list(self.blocked_by),
            "blocks": list(self.blocks),
            "owner": self.owner,
            "metadata": dict(self.metadata),
            "worktree": self.worktree,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }

    @classmethod
    def from_json(cls, data: object, path: Path) -> Task:
        """A task file's object as a `Task`; `CorruptTask` naming ``path`` when it is not one."""
        if not isinstance(data, dict):
            raise CorruptTask(path, "not a JSON object")
        try:
            task_id = data["id"]
            if not isinstance(task_id, int) or isinstance(task_id, bool) or task_id < 1:
                raise CorruptTask(path, "'id' is not a positive integer")
            status = TaskStatus.parse(data.get("status", "pending"))
            return cls(
                id=task_id,
                subject=_text(data, "subject", path, required=True),
                description=_text(data, "description", path),
                active_form=_text(data, "activeForm", path),
                status=status,
                blocked_by=_ids(data, "blockedBy", path),
                blocks=_ids(data, "blocks", path),
                owner=_text(data, "owner", path),
                metadata=_metadata(data, path),
                worktree=_text(data, "worktree", path),
                created_at=_text(data, "createdAt", path),
                updated_at=_text(data, "updatedAt", path),
            )
        except KeyError as exc:
            raise CorruptTask(path, f"no {exc.args[0]!r}") from None
        except BadStatus as exc:
            raise CorruptTask(path, str(exc)) from None


def _text(data: dict[str, Any], key: str, path: Path, *, required: bool = False) -> str:
    value = data[key] if required else data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise CorruptTask(path, f"{key!r} is not a string")
    return value


def _ids(data: dict[str, Any], key: str, path: Path) -> list[int]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise CorruptTask(path, f"{key!r} is not a list of task ids")
    return list(value)


def _metadata(data: dict[str, Any], path: Path) -> dict[str, Any]:
    value = data.get("metadata") or {}
    if not isinstance(value, dict):
        raise CorruptTask(path, "'metadata' is not an object")
    return value


def is_ready(task: Task, by_id: Mapping[int, Task]) -> bool:
    """Pending with every blocker completed (a deleted or missing blocker blocks nothing)."""
    return task.status is TaskStatus.PENDING and not open_blockers(task, by_id)


def open_blockers(task: Task, by_id: Mapping[int, Task]) -> list[int]:
    """The ids of ``task``'s blockers not completed yet."""
    done = (TaskStatus.COMPLETED, TaskStatus.DELETED)
    return [i for i in task.blocked_by if (b := by_id.get(i)) is not None and b.status not in done]


class TaskError(Exception):
    """A task operation refused; ``str()`` is the sentence the model (or the user) reads."""


class UnknownTask(TaskError):
    def __init__(self, task_id: int, list_name: str) -> None:
        super().__init__(f"there is no task #{task_id} in task list '{list_name}'")
        self.task_id = task_id
        self.list_name = list_name


class SelfDependency(TaskError):
    def __init__(self, task_id: int) -> None:
        super().__init__(f"task #{task_id} cannot block or be blocked by itself")
        self.task_id = task_id


class DependencyCycle(TaskError):
    """Adding the dependency would close a loop: ``path`` goes blocker by blocker back to
    the start, e.g. [3, 5, 3]: #3 is blocked by #5, which is blocked by #3."""

    def __init__(self, path: list[int]) -> None:
        chain = " → ".join(f"#{i}" for i in path)
        super().__init__(
            f"that dependency would make a cycle ({chain}, each blocked by the next); "
            "no task could ever start"
        )
        self.path = path


class BadStatus(TaskError):
    def __init__(self, value: object) -> None:
        choices = ", ".join(s.value for s in TaskStatus)
        super().__init__(f"status {value!r} is not one of {choices}")
        self.value = value


class BadTaskInput(TaskError):
    """A tool argument of the wrong type or shape (``field`` names it)."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"'{field_name}' {message}")
        self.field = field_name


class TaskStoreUnavailable(TaskError):
    """The list's folder cannot be made, locked, read or written (``path``, the OS reason)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"the task list in {path} cannot be used: {reason}")
        self.path = path
        self.reason = reason


class CorruptTask(ValueError):
    """A task file that is not a task (skipped with a warning, the rest of the list loads)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


__all__ = [
    "OPEN_STATUSES",
    "BadStatus",
    "BadTaskInput",
    "CorruptTask",
    "DependencyCycle",
    "SelfDependency",
    "Task",
    "TaskError",
    "TaskStatus",
    "TaskStoreUnavailable",
    "UnknownTask",
    "is_ready",
    "now_iso",
    "open_blockers",
]
