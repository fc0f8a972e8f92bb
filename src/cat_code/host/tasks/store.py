"""`TaskStore`: a task list on disk, one JSON file per task, safe for several processes.

``$CAT_CODE_HOME/tasks/<list>/<id>.json`` (folders 0700, files 0600). Every change is one
transaction under the list's lock file (`cat_code.base.files.file_lock`): read every task,
check, write each changed task with `atomic_write`. So two cat-code processes on one list
lose nothing, a reader never sees half a file, and ``blockedBy`` / ``blocks`` stay
symmetric across files. Reads take the lock too (a change touching two files is seen
whole). The next id is the highest id of any file in the folder plus one — a deleted task
keeps its file, a corrupt one its name — so an id is never reused. A corrupt file is
skipped with one warning per file and the rest of the list loads.

The store is synchronous (the tools run it on a thread). What changed is not announced
from inside an operation, which may run on that thread: the caller calls `notify` on its
own thread, and then the ``listeners`` (the REPL's panel, ``-p``'s stream-json line) get
the list if it differs from the one they last got, and the ``unblocked`` hooks hear of each
task whose last open blocker was completed or deleted (a notification queue can feed on it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cat_code.base.files import (
    PRIVATE_FILE_MODE,
    FileLockTimeout,
    JsonTooDeep,
    atomic_write,
    file_lock,
    parse_json,
    read_bounded,
)
from cat_code.host.state.home import cat_code_home, ensure_home
from cat_code.host.tasks.model import (
    BadTaskInput,
    CorruptTask,
    DependencyCycle,
    SelfDependency,
    Task,
    TaskError,
    TaskStatus,
    TaskStoreUnavailable,
    UnknownTask,
    is_ready,
    now_iso,
)

logger = logging.getLogger(__name__)

TASKS_DIR = "tasks"
#: Names a list shared between sessions and ``-p`` runs (else each session has its own).
TASK_LIST_ENV = "CAT_CODE_TASK_LIST"
#: A list name is a folder name: no separators, no leading dot (never ``..`` or hidden).
_LIST_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$")
_TASK_FILE = re.compile(r"^([1-9][0-9]{0,8})\.json$")
LOCK_FILE = ".lock"
#: A task file larger than this is not one the tools wrote (skipped as corrupt).
MAX_TASK_FILE_BYTES = 1_000_000

#: Called with every task of the list (deleted ones left out) when it changed.
Listener = Callable[[list[Task]], None]
#: Called with the list's name, the task completed (or deleted) and the tasks it made ready.
UnblockedHook = Callable[[str, Task, list[Task]], None]


def valid_list_name(name: str) -> bool:
    return bool(_LIST_NAME.match(name))


def list_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """``$CAT_CODE_TASK_LIST`` when set; `BadTaskInput` when it is not a usable name."""
    env = os.environ if environ is None else environ
    name = env.get(TASK_LIST_ENV, "").strip()
    if not name:
        return None
    if not valid_list_name(name):
        raise BadTaskInput(
            TASK_LIST_ENV, f"is {name!r}: use letters, digits, '.', '_' and '-' (at most 100)"
        )
    return name


def tasks_root() -> Path:
    return cat_code_home() / TASKS_DIR


@dataclass(slots=True)
class TaskUpdate:
    """What `TaskStore.update` did: the task after it, what changed, what became ready."""

    task: Task
    changed: list[str] = field(default_factory=list)
    unblocked: list[Task] = field(default_factory=list)
    #: The other tasks in progress after this update (the model is told to keep one).
    also_in_progress: list[Task] = field(default_factory=list)


class TaskStore:
    """One task list (``name``), its folder in ``$CAT_CODE_HOME/tasks`` (read at each use)."""

    def __init__(self, name: str) -> None:
        if not valid_list_name(name):
            raise BadTaskInput("list", f"{name!r} is not a task list name")
        self.name = name
        self.listeners: list[Listener] = []
        self.unblocked_hooks: list[UnblockedHook] = []
        #: The list as this store last read or wrote it (what the REPL's panel draws).
        self.snapshot: list[Task] = []
        self._notified: list[dict[str, Any]] | None = None
        self._unblocked: list[tuple[str, Task, list[Task]]] = []
        self._guard = threading.Lock()  # snapshot and pending notes, across threads
        self._warned: set[str] = set()
        #: Each task file's (inode, mtime, size) when last read, and its task.
        self._cache: dict[str, tuple[tuple[int, int, int], Task]] = {}
        self._highest_named = 0

    @property
    def folder(self) -> Path:
        return tasks_root() / self.name

    def switch(self, name: str) -> None:
        """Use the list ``name`` from now on (a resumed session's own); `notify` tells."""
        if not valid_list_name(name):
            raise BadTaskInput("list", f"{name!r} is not a task list name")
        self.name = name
        try:
            self.read()
        except TaskError as exc:
            logger.warning("%s", exc)
            self._keep([])
        # What the list holds now is where "changed" starts from for the listeners.
        self._notified = [t.to_json() for t in self.snapshot]

    # -- reading -------------------------------------------------------------------------

    def read(self, *, include_deleted: bool = False) -> list[Task]:
        """Every task by id (deleted ones only when asked); nothing is made on disk."""
        if not self.folder.is_dir():
            self._keep([])
            return []
        with self._locked(create=False) as tasks:
            pass
        return [t for t in tasks.values() if include_deleted or t.status is not TaskStatus.DELETED]

    def get(self, task_id: int) -> Task:
        """The task ``task_id`` (a deleted one too); `UnknownTask` when there is none."""
        task = {t.id: t for t in self.read(include_deleted=True)}.get(task_id)
        if task is None:
            raise UnknownTask(task_id, self.name)
        return task

    # -- changing ------------------------------------------------------------------------

    def create(
        self,
        subject: str,
        *,
        description: str = "",
        active_form: str = "",
        blocked_by: Sequence[int] = (),
        owner: str = "",
        metadata: Mapping[str, Any] | None = None,
    ) -> Task:
        """A new pending task with the next id, blocked by ``blocked_by`` (each of which
        gets it in its ``blocks``)."""
        if not subject.strip():
            raise BadTaskInput("subject", "must not be empty")
        with self._locked(create=True) as tasks:
            task = Task(
                id=self._next_id(tasks),
                subject=subject,
                description=description,
                active_form=active_form,
                owner=owner,
                metadata=dict(metadata or {}),
            )
            tasks[task.id] = task
            changed = {task.id}
            for blocker in dict.fromkeys(blocked_by):
                changed |= _link(tasks, blocker=blocker, blocked=task.id, list_name=self.name)
            self._write(tasks, changed)
        return task

    def update(
        self,
        task_id: int,
        *,
        status: TaskStatus | None = None,
        subject: str | None = None,
        description: str | None = None,
        active_form: str | None = None,
        add_blocked_by: Sequence[int] = (),
        add_blocks: Sequence[int] = (),
        owner: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        worktree: str | None = None,
    ) -> TaskUpdate:
        """Change the fields given (``metadata`` merges; a key set to None is removed).
        Deleting a task takes it out of every other task's dependencies."""
        if subject is not None and not subject.strip():
            raise BadTaskInput("subject", "must not be empty")
        with self._locked(create=True) as tasks:
            task = tasks.get(task_id)
            if task is None:
                raise UnknownTask(task_id, self.name)
            if task.status is TaskStatus.DELETED:
                raise TaskError(f"task #{task_id} was deleted; create a new one instead")
            before = {t.id: is_ready(t, tasks) for t in tasks.values()}
            result = TaskUpdate(task)
            fields = {
                "subject": subject,
                "description": description,
                "activeForm": active_form,
                "owner": owner,
                "worktree": worktree,
            }
            for name, value in fields.items():
                attribute = "active_form" if name == "activeForm" else name
                if value is not None and getattr(task, attribute) != value:
                    setattr(task, attribute, value)
                    result.changed.append(name)
            if metadata:
                for key, value in metadata.items():
                    if value is None:
                        task.metadata.pop(key, None)
                    else:
                        task.metadata[key] = value
                result.changed.append("metadata")
            changed = {task_id}
            for blocker in dict.fromkeys(add_blocked_by):
                changed |= _link(tasks, blocker=blocker, blocked=task_id, list_name=self.name)
            for blocked in dict.fromkeys(add_blocks):
                changed |= _link(tasks, blocker=task_id, blocked=blocked, list_name=self.name)
            if len(changed) > 1:
                result.changed.append("dependencies")
            if status is not None and status is not task.status:
                result.changed.append(f"status {task.status} → {status}")
                task.status = status
                if status is TaskStatus.DELETED:
                    changed |= _unlink_all(tasks, task)
            if not result.changed:
                return result
            task.updated_at = now_iso()
            if status in (TaskStatus.COMPLETED, TaskStatus.DELETED):
                result.unblocked = [
                    tasks[i]
                    for i in sorted(before)
                    if i in tasks and not before[i] and is_ready(tasks[i], tasks) and i != task_id
                ]
            result.also_in_progress = [
                t for t in tasks.values() if t.status is TaskStatus.IN_PROGRESS and t.id != task_id
            ]
            self._write(tasks, changed)
        if result.unblocked:
            with self._guard:
                self._unblocked.append((self.name, task, list(result.unblocked)))
        return result

    # -- telling -------------------------------------------------------------------------

    def notify(self) -> None:
        """Tell the listeners the list, if it changed since they were last told, and the
        hooks each task unblocked since the last call. Call it on the listeners' thread."""
        with self._guard:
            tasks = list(self.snapshot)
            unblocked, self._unblocked = self._unblocked, []
        shown = [t.to_json() for t in tasks]
        if shown != self._notified:
            self._notified = shown
            for listener in self.listeners:
                listener(tasks)
        for list_name, task, ready in unblocked:
            for hook in self.unblocked_hooks:
                hook(list_name, task, ready)

    def open_tasks(self) -> list[Task]:
        """The tasks still to do, from the last read (no disk access)."""
        with self._guard:
            return [t for t in self.snapshot if t.is_open]

    # -- disk ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, *, create: bool) -> Iterator[dict[int, Task]]:
        """Every task of the list, by id, with the list's lock held (the folder made when
        ``create``; a folder we may only read is read without the lock)."""
        folder = self.folder
        try:
            if create:
                ensure_home(TASKS_DIR)  # each level 0700: ensure_home tightens only the last
                ensure_home(TASKS_DIR, self.name)
            if create or os.access(folder, os.W_OK):
                hold: contextlib.AbstractContextManager[None] = file_lock(folder / LOCK_FILE)
            else:
                hold = contextlib.nullcontext()
            with hold:
                tasks = self._read_all(folder, to_change=create)
                yield tasks
        except FileLockTimeout as exc:
            raise TaskStoreUnavailable(folder, str(exc)) from exc
        except OSError as exc:
            raise TaskStoreUnavailable(folder, exc.strerror or str(exc)) from exc
        self._keep([t for t in tasks.values() if t.status is not TaskStatus.DELETED])

    def _keep(self, tasks: list[Task]) -> None:
        with self._guard:
            self.snapshot = tasks

    def _read_all(self, folder: Path, *, to_change: bool) -> dict[int, Task]:
        """Every readable task by id (copies, when ``to_change``: the cached ones are
        never changed); the highest id any file's name holds is kept for `_next_id` (a
        corrupt file's id is not reused either)."""
        tasks: dict[int, Task] = {}
        highest = 0
        cache: dict[str, tuple[tuple[int, int, int], Task]] = {}
        with os.scandir(folder) as entries:
            found = [(e.name, e.path) for e in entries if _TASK_FILE.match(e.name)]
        for name, where in found:
            task_id = int(name.removesuffix(".json"))
            highest = max(highest, task_id)
            try:
                info = os.stat(where)
                # Every write replaces the file, so a new inode: a file unchanged since
                # the last read is not read again (1,000 tasks: one stat each).
                key = (info.st_ino, info.st_mtime_ns, info.st_size)
                known = self._cache.get(where)
                task = known[1] if known is not None and known[0] == key else None
                if task is None:
                    task = self._read_one(Path(where), task_id)
                cache[where] = (key, task)
            except FileNotFoundError:
                continue  # removed by hand while we listed: it is simply not there
            except (CorruptTask, OSError) as exc:
                if where not in self._warned:
                    self._warned.add(where)
                    logger.warning("skipped a task file that cannot be read: %s", exc)
                continue
            tasks[task_id] = task.copy() if to_change else task
        self._cache = cache
        self._highest_named = highest
        return dict(sorted(tasks.items()))

    def _read_one(self, path: Path, task_id: int) -> Task:
        raw = read_bounded(path, MAX_TASK_FILE_BYTES)  # a FIFO or a huge file: refused
        try:
            data = parse_json(raw.decode("utf-8"))
        except (ValueError, JsonTooDeep) as exc:  # UnicodeDecodeError and JSONDecodeError too
            raise CorruptTask(path, f"not JSON ({exc})") from None
        task = Task.from_json(data, path)
        if task.id != task_id:
            raise CorruptTask(path, f"its 'id' is {task.id}, not {task_id}")
        return task

    def _next_id(self, tasks: dict[int, Task]) -> int:
        # Set by the `_read_all` of this transaction, under the lock.
        return max(self._highest_named, *tasks, 0) + 1

    def _write(self, tasks: dict[int, Task], changed: set[int]) -> None:
        for task_id in sorted(changed):
            text = json.dumps(tasks[task_id].to_json(), ensure_ascii=False, indent=2) + "\n"
            atomic_write(self.folder / f"{task_id}.json", text, mode=PRIVATE_FILE_MODE)


def _link(tasks: dict[int, Task], *, blocker: int, blocked: int, list_name: str) -> set[int]:
    """Record that ``blocker`` blocks ``blocked`` on both; the ids of the tasks changed."""
    if blocker == blocked:
        raise SelfDependency(blocker)
    for task_id in (blocker, blocked):
        task = tasks.get(task_id)
        if task is None or task.status is TaskStatus.DELETED:
            raise UnknownTask(task_id, list_name)
    path = _blocker_path(tasks, start=blocker, goal=blocked)
    if path is not None:
        raise DependencyCycle([blocked, *path])
    changed: set[int] = set()
    if blocker not in tasks[blocked].blocked_by:
        tasks[blocked].blocked_by.append(blocker)
        changed.add(blocked)
    if blocked not in tasks[blocker].blocks:
        tasks[blocker].blocks.append(blocked)
        changed.add(blocker)
    for task_id in changed:
        tasks[task_id].updated_at = now_iso()
    return changed


def _blocker_path(tasks: Mapping[int, Task], *, start: int, goal: int) -> list[int] | None:
    """The chain of blockers from ``start`` to ``goal`` (both included), if there is one."""
    came_from: dict[int, int] = {start: start}
    frontier = [start]
    while frontier:
        current = frontier.pop()
        if current == goal:
            path = [current]
            while path[-1] != start:
                path.append(came_from[path[-1]])
            return path[::-1]
        for nxt in tasks[current].blocked_by if current in tasks else ():
            if nxt not in came_from:
                came_from[nxt] = current
                frontier.append(nxt)
    return None


def _unlink_all(tasks: dict[int, Task], task: Task) -> set[int]:
    """Take the deleted ``task`` out of every other task's dependencies."""
    changed: set[int] = set()
    for other in tasks.values():
        if other.id == task.id:
            continue
        if task.id in other.blocked_by or task.id in other.blocks:
            other.blocked_by = [i for i in other.blocked_by if i != task.id]
            other.blocks = [i for i in other.blocks if i != task.id]
            other.updated_at = now_iso()
            changed.add(other.id)
    task.blocked_by, task.blocks = [], []
    return changed


__all__ = [
    "LOCK_FILE",
    "TASKS_DIR",
    "TASK_LIST_ENV",
    "Listener",
    "TaskStore",
    "TaskUpdate",
    "UnblockedHook",
    "list_from_env",
    "tasks_root",
    "valid_list_name",
]
