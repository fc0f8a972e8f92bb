"""The task tools: ``task_create``, ``task_update``, ``task_get`` and ``task_list``.

Built-in and read-only (they touch only cat-code's own task list, never the user's
files, so they never ask), all four on one `TaskStore`. Arguments are checked here and
turned into the store's types; every `TaskError` (an unknown id, a self-dependency, a
cycle, a bad status, a folder that cannot be written) becomes an error result the model
reads, and the turn goes on. The store works on a daemon thread (it locks and reads
files), one call at a time in the order the model asked (tasks created in one message
get their ids in that order); when it is done, `TaskStore.notify` runs on the loop, so
the REPL's panel and stream-json hear of the change on their own thread. ``task_list``
and ``task_get`` answer in JSON; the changes answer in a sentence that says what
changed and what it unblocked.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from cat_code.host.tasks import (
    BadTaskInput,
    TaskError,
    TaskStatus,
    TaskStore,
    TaskUpdate,
    list_from_env,
)
from cat_code.host.tasks.render import listing
from cat_code.tools.base import ProgressCallback, Tool, ToolResult
from cat_code.tools.threads import in_daemon_thread

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

#: What the system prompt says about the task tools.
TASKS_GUIDANCE = (
    "Tracking work: for a request of several steps (three or more, or several files or "
    "commands), make a task list with task_create, one task per step, with an activeForm "
    '("Running the tests") for each. Keep exactly one task in_progress: set it with '
    "task_update before you start the step and set it completed as soon as it is done, "
    "then start the next. Use addBlockedBy for steps that must wait for others; task_list "
    "shows which tasks are ready. Skip the list for a single simple step. The list outlives "
    "compactions: after one, go on from the tasks restated to you."
)

_ID_SCHEMA = {"type": "integer", "minimum": 1, "description": "The task's id"}
_IDS_SCHEMA = {"type": "array", "items": {"type": "integer", "minimum": 1}}
_STATUS_SCHEMA = {"type": "string", "enum": [s.value for s in TaskStatus]}


def _task_id(arguments: dict[str, Any], key: str = "id") -> int:
    value = arguments.get(key)
    if isinstance(value, str) and value.strip().lstrip("#").isdigit():
        value = int(value.strip().lstrip("#"))  # models write "3" or "#3" for 3
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise BadTaskInput(key, f"must be a task id (a positive integer), not {value!r}")
    return value


def _ids(arguments: dict[str, Any], key: str) -> list[int]:
    value = arguments.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        value = [value]  # one id given bare
    return [_task_id({key: v}, key) for v in value]


def _text(arguments: dict[str, Any], key: str) -> str | None:
    value = arguments.get(key)
    if value is not None and not isinstance(value, str):
        raise BadTaskInput(key, "must be a string")
    return value


def _metadata(arguments: dict[str, Any]) -> dict[str, Any] | None:
    value = arguments.get("metadata")
    if value is not None and not isinstance(value, dict):
        raise BadTaskInput("metadata", "must be an object")
    return value


class _TaskTool(Tool):
    read_only = True  # cat-code's own list: never the user's files, never a question

    def __init__(self, store: TaskStore, order: asyncio.Lock | None = None) -> None:
        self.store = store
        #: Shared by the four tools: calls of one message run in the order asked (FIFO).
        self._order = order or asyncio.Lock()

    async def _run(self, work: Callable[[], _T]) -> _T:
        async with self._order:
            try:
                return await in_daemon_thread(work, name=self.name)
            finally:
                self.store.notify()

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        try:
            return ToolResult(content=await self._answer(arguments))
        except TaskError as exc:
            return ToolResult.error(f"Error: {exc}")

    async def _answer(self, arguments: dict[str, Any]) -> str:
        raise NotImplementedError


class TaskCreateTool(_TaskTool):
    name = "task_create"
    description = (
        "Add a task (one step of the work) to your task list; it starts pending. Give a "
        "short imperative subject, a description of what done means, and an activeForm "
        "(the present-continuous text shown while it runs, e.g. 'Running the tests'). "
        "blockedBy: ids of tasks that must be completed first. Returns the new task's id."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "subject": {"type": "string", "description": "What to do, imperative"},
            "description": {"type": "string"},
            "activeForm": {"type": "string", "description": "Shown while it runs"},
            "blockedBy": {**_IDS_SCHEMA, "description": "Tasks to complete first"},
            "metadata": {"type": "object", "description": "Any extra fields to keep"},
        },
        "required": ["subject"],
    }

    async def _answer(self, arguments: dict[str, Any]) -> str:
        subject = _text(arguments, "subject")
        if subject is None:
            raise BadTaskInput("subject", "is required")
        description = _text(arguments, "description") or ""
        active_form = _text(arguments, "activeForm") or ""
        blocked_by = _ids(arguments, "blockedBy")
        metadata = _metadata(arguments)
        task = await self._run(
            lambda: self.store.create(
                subject,
                description=description,
                active_form=active_form,
                blocked_by=blocked_by,
                metadata=metadata,
            )
        )
        waits = f" (blocked by {', '.join(f'#{i}' for i in blocked_by)})" if blocked_by else ""
        return f"Task #{task.id} created: {task.subject}{waits}"


class TaskUpdateTool(_TaskTool):
    name = "task_update"
    description = (
        "Change a task: status (pending, in_progress, completed, deleted), subject, "
        "description, activeForm, owner, worktree, metadata (merged; a key set to null is "
        "removed), addBlockedBy / addBlocks (ids). Set a task in_progress when you start it "
        "and completed as soon as it is done; keep exactly one in_progress. Deleting a task "
        "takes it off the list. Completing one says which tasks it unblocked."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "id": _ID_SCHEMA,
            "status": _STATUS_SCHEMA,
            "subject": {"type": "string"},
            "description": {"type": "string"},
            "activeForm": {"type": "string"},
            "addBlockedBy": {**_IDS_SCHEMA, "description": "Tasks this one waits for"},
            "addBlocks": {**_IDS_SCHEMA, "description": "Tasks that wait for this one"},
            "owner": {"type": "string"},
            "metadata": {"type": "object"},
            "worktree": {"type": "string", "description": "The worktree the task is done in"},
        },
        "required": ["id"],
    }

    async def _answer(self, arguments: dict[str, Any]) -> str:
        task_id = _task_id(arguments)
        raw_status = arguments.get("status")
        status = None if raw_status is None else TaskStatus.parse(raw_status)
        texts = {k: _text(arguments, k) for k in ("subject", "description", "activeForm")}
        owner, worktree = _text(arguments, "owner"), _text(arguments, "worktree")
        add_blocked_by, add_blocks = _ids(arguments, "addBlockedBy"), _ids(arguments, "addBlocks")
        metadata = _metadata(arguments)
        update = await self._run(
            lambda: self.store.update(
                task_id,
                status=status,
                subject=texts["subject"],
                description=texts["description"],
                active_form=texts["activeForm"],
                add_blocked_by=add_blocked_by,
                add_blocks=add_blocks,
                owner=owner,
                metadata=metadata,
                worktree=worktree,
            )
        )
        return describe_update(update)


def describe_update(update: TaskUpdate) -> str:
    """The sentence ``task_update`` answers: what changed, what is ready now, and a
    reminder when more than one task is in progress."""
    task = update.task
    if not update.changed:
        return f"Task #{task.id} unchanged ({task.status}): {task.subject}"
    text = f"Task #{task.id} updated ({', '.join(update.changed)}): {task.subject}"
    if update.unblocked:
        ready = ", ".join(f"#{t.id} {t.subject}" for t in update.unblocked)
        text += f"\nThis unblocked: {ready}"
    if task.status is TaskStatus.IN_PROGRESS and update.also_in_progress:
        others = ", ".join(f"#{t.id}" for t in update.also_in_progress)
        text += f"\nNote: {others} also in progress; keep exactly one task in_progress."
    return text


class TaskGetTool(_TaskTool):
    name = "task_get"
    description = "One task in full (every field, its dependencies and times), by id."
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {"id": _ID_SCHEMA},
        "required": ["id"],
    }

    async def _answer(self, arguments: dict[str, Any]) -> str:
        task_id = _task_id(arguments)
        task = await self._run(lambda: self.store.get(task_id))
        return json.dumps(task.to_json(), ensure_ascii=False, indent=2)


class TaskListTool(_TaskTool):
    name = "task_list"
    description = (
        "Your task list: each task's id, subject, status, owner, whether it is ready "
        "(pending with every blocker completed), its blockers and activeForm. Deleted tasks "
        "are left out. Use task_get for a task's description."
    )
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    async def _answer(self, arguments: dict[str, Any]) -> str:
        tasks = await self._run(self.store.read)
        entries = listing(tasks)
        # One task a line: compact for the context, still one JSON array.
        body = ",\n".join(json.dumps(e, ensure_ascii=False) for e in entries)
        return f"[\n{body}\n]" if entries else "[]"


def session_task_list(session_id: str, saved: str | None) -> str:
    """The list a conversation uses: ``$CAT_CODE_TASK_LIST`` (shared), else the one its
    session file names (resumed), else its own, named by its id."""
    try:
        shared = list_from_env()
    except BadTaskInput as exc:
        logger.warning("%s; this session keeps its own task list", exc)
        shared = None
    return shared or saved or session_id


def task_tools(store: TaskStore) -> list[Tool]:
    """The four task tools on ``store``, in the order they are registered."""
    order = asyncio.Lock()
    kinds = (TaskCreateTool, TaskUpdateTool, TaskGetTool, TaskListTool)
    return [kind(store, order) for kind in kinds]


__all__ = [
    "TASKS_GUIDANCE",
    "TaskCreateTool",
    "TaskGetTool",
    "TaskListTool",
    "TaskUpdateTool",
    "describe_update",
    "session_task_list",
    "task_tools",
]
