"""Tasks: a ``tools/call`` the server runs in the background while the client polls it.

Two shapes, told apart by the answer (not by the era), followed by one `TaskWait`:
- the ``io.modelcontextprotocol/tasks`` extension (SEP-2663), which the client declares in
  ``capabilities.extensions``: the answer has ``resultType: "task"`` and the task's fields
  flat (``taskId``, ``status``, ``statusMessage``, ``ttlMs``, ``pollIntervalMs``);
  ``tasks/get`` returns the task with the outcome inlined (``result``; ``error`` when it
  failed; ``inputRequests`` while it waits for input, answered with ``tasks/update``);
  status notifications are ``notifications/tasks``.
- 2025-11-25's experimental tasks, used when the server declares
  ``tasks.requests.tools.call`` and the tool's ``execution.taskSupport`` allows it: the
  answer holds a ``task`` object (``ttl``, ``pollInterval``); ``tasks/result`` fetches the
  outcome (and carries the server's own requests while input is required); status
  notifications are ``notifications/tasks/status``.
Invariants: a poll is one request bounded by the request timeout, sent at the server's
interval (clamped to `POLL_S`) or sooner when a status notification arrives, but never
sooner than `POLL_S`'s floor after the previous one, whatever the server asks or sends
(a server answering ``pollInterval: 0`` made us poll 286 times in 15 s); the whole wait is
bounded by the task's TTL and the caller's limit (``toolTimeoutMs``; without one,
`DEFAULT_LIMIT_S`: a huge TTL does not make a wait endless), never by the request
timeout; giving up (a limit, Ctrl-C) sends ``tasks/cancel``; every change of status
is reported through the call's progress handler.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from cat_code.mcp.errors import McpClientError, McpError, ProtocolError, RequestTimeout
from cat_code.mcp.transports.base import JsonObject

logger = logging.getLogger(__name__)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: (fewest, most) seconds between two polls: a server asking for 0 ms (or notifying
#: without end) must not make us spin, one asking for an hour must not leave the user
#: without news.
POLL_S = (0.25, 10.0)
#: The longest a task is followed when the caller sets no limit (no ``toolTimeoutMs``),
#: whatever TTL the server names; a longer job needs the entry's ``toolTimeoutMs``.
DEFAULT_LIMIT_S = 600.0
#: Between polls when the server names no interval.
DEFAULT_POLL_S = 1.0
#: How long ``tasks/cancel`` may take when we give up on a task.
CANCEL_S = 5.0
INTERNAL_ERROR = -32603


class TaskStatus(StrEnum):
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Shape(StrEnum):
    """Which tasks a server speaks: the extension, or 2025-11-25's experimental ones."""

    EXTENSION = "extension"
    EXPERIMENTAL = "experimental"


@dataclass(slots=True)
class Task:
    """What the client knows of one task."""

    task_id: str
    status: TaskStatus
    message: str | None = None
    poll_s: float = DEFAULT_POLL_S
    #: Seconds the server keeps it from creation (None: no limit).
    ttl_s: float | None = None
    result: JsonObject | None = None
    error: JsonObject | None = None
    input_requests: JsonObject = field(default_factory=dict)


def task_shape(result: Any) -> Shape | None:
    """Whether a ``tools/call`` answer is a task (and which), or the call's result."""
    if not isinstance(result, dict):
        return None
    if result.get("resultType") == "task":
        return Shape.EXTENSION
    if isinstance(result.get("task"), dict) and "content" not in result:
        return Shape.EXPERIMENTAL
    return None


def read_task(result: Any, shape: Shape, known: Task | None = None) -> Task:
    """A task from an answer or a notification (its fields flat, or under ``task``)."""
    body = result.get("task") if shape is Shape.EXPERIMENTAL and "task" in result else result
    if not isinstance(body, dict):
        raise ProtocolError(f"a task answer is not an object: {result!r:.200}")
    task_id = body.get("taskId", known.task_id if known else None)
    if not isinstance(task_id, str):
        raise ProtocolError(f"a task answer has no taskId: {result!r:.200}")
    try:
        status = TaskStatus(str(body.get("status")))
    except ValueError:
        shown = f"{body.get('status')!r:.60}"
        raise ProtocolError(f"task {task_id!r}: unknown status {shown}") from None
    extension = shape is Shape.EXTENSION
    poll = _ms(body.get("pollIntervalMs" if extension else "pollInterval"))
    ttl = _ms(body.get("ttlMs" if extension else "ttl"))
    message = body.get("statusMessage")
    requests = body.get("inputRequests")
    return Task(
        task_id=task_id,
        status=status,
        message=message if isinstance(message, str) else None,
        poll_s=(
            min(max(poll, POLL_S[0]), POLL_S[1])
            if poll is not None
            else (known.poll_s if known else DEFAULT_POLL_S)
        ),
        ttl_s=ttl if ttl is not None else (known.ttl_s if known else None),
        result=body["result"] if isinstance(body.get("result"), dict) else None,
        error=body["error"] if isinstance(body.get("error"), dict) else None,
        input_requests=requests if isinstance(requests, dict) else {},
    )


def _ms(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value) / 1000


#: ``request(method, params, timeout=...)`` on the task's connection.
Request = Callable[..., Awaitable[Any]]
#: The answers to a map of input requests (elicitation, roots), keyed like it.
AnswerInputs = Callable[[JsonObject], Awaitable[JsonObject]]
#: Run a coroutine in the background (owned, and ended on close, by the client).
Spawn = Callable[[Awaitable[Any]], None]
#: (polls so far, None, "task working: …") for each change of status.
Report = Callable[[float, float | None, str | None], None]


class TaskWait:
    """Follows one task to its end: `outcome` returns the ``tools/call`` result."""

    def __init__(
        self,
        first: JsonObject,
        shape: Shape,
        *,
        server: str,
        request: Request,
        answer_inputs: AnswerInputs,
        spawn: Spawn,
        limit: float | None = None,
        report: Report | None = None,
    ) -> None:
        self.shape = shape
        self.task = read_task(first, shape)
        self.server = server
        self._request = request
        self._answer_inputs = answer_inputs
        self._spawn = spawn
        self._limit = limit if limit is not None and limit < math.inf else None
        self._report = report
        self._wake = asyncio.Event()
        self._polls = 0
        #: The loop time of the last request about the task (the first: its creation).
        self._last_poll: float | None = None
        self._shown: tuple[TaskStatus, str | None] | None = None

    @property
    def task_id(self) -> str:
        return self.task.task_id

    def notified(self, params: JsonObject) -> None:
        """A status notification: take what it says, and poll at once."""
        try:
            self.task = read_task(params, self.shape, known=self.task)
        except ProtocolError as exc:
            logger.debug("%s: ignoring a task notification: %s", self.server, exc)
            return
        self._wake.set()

    async def outcome(self) -> JsonObject:
        """The call's result; raises `RequestTimeout` past the TTL or the caller's limit
        (after ``tasks/cancel``), the task's error when it failed."""
        ttl = self.task.ttl_s if self.task.ttl_s is not None else math.inf
        limit, why = (
            (self._limit, "toolTimeoutMs")
            if self._limit is not None
            else (DEFAULT_LIMIT_S, "cat-code's default limit for tasks")
        )
        bound, why = (ttl, "its TTL") if ttl <= limit else (limit, why)
        deadline = asyncio.timeout(bound)
        try:
            async with deadline:
                return await self._follow()
        except TimeoutError:
            if not deadline.expired():
                raise
            await self._cancel()
            raise RequestTimeout(
                f"task {self.task_id} of server '{self.server}' did not finish within {why} "
                f"({bound:g} s); it was cancelled"
            ) from None
        except asyncio.CancelledError:
            self._spawn(self._cancel())
            raise

    async def _follow(self) -> JsonObject:
        self._last_poll = asyncio.get_running_loop().time()
        while True:
            task = self.task
            self._show(task)
            if self.shape is Shape.EXPERIMENTAL and task.status is not TaskStatus.WORKING:
                # tasks/result waits for the end, and carries the server's own requests
                # (elicitation) while input is required; the outer limit bounds it.
                result = await self._request(
                    "tasks/result", {"taskId": self.task_id}, timeout=math.inf
                )
                return result if isinstance(result, dict) else {}
            if task.status is TaskStatus.COMPLETED and task.result is not None:
                return task.result
            if task.status is TaskStatus.FAILED:
                error = task.error or {}
                code = error.get("code")
                raise McpError(
                    code if isinstance(code, int) else INTERNAL_ERROR,
                    f"task {self.task_id} failed: {error.get('message', task.message)}",
                    error.get("data"),
                )
            if task.status is TaskStatus.CANCELLED:
                raise ProtocolError(
                    f"task {self.task_id} of server '{self.server}' was cancelled"
                    + (f": {task.message}" if task.message else "")
                )
            if task.status is TaskStatus.INPUT_REQUIRED and task.input_requests:
                answers = await self._answer_inputs(task.input_requests)
                await self._request(
                    "tasks/update", {"taskId": self.task_id, "inputResponses": answers}
                )
            else:
                await self._pause(task.poll_s)
            await self._floor()
            self._wake.clear()
            self._polls += 1
            self._last_poll = asyncio.get_running_loop().time()
            self.task = read_task(
                await self._request("tasks/get", {"taskId": self.task_id}), self.shape, task
            )

    async def _pause(self, seconds: float) -> None:
        """Wait for the next poll: the interval, or less if a notification arrives."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)

    async def _floor(self) -> None:
        """Wait out what is left of the floor since the last poll: a notification, or a
        server that answers input after input, never makes polls come faster."""
        assert self._last_poll is not None
        left = self._last_poll + POLL_S[0] - asyncio.get_running_loop().time()
        if left > 0:
            await asyncio.sleep(left)

    def _show(self, task: Task) -> None:
        shown = (task.status, task.message)
        if self._report is None or shown == self._shown:
            return
        self._shown = shown
        text = f"task {task.status}" + (f": {task.message}" if task.message else "")
        self._report(float(self._polls), None, text)

    async def _cancel(self) -> None:
        try:
            await self._request("tasks/cancel", {"taskId": self.task_id}, timeout=CANCEL_S)
        except McpClientError as exc:
            logger.debug("%s: tasks/cancel %s failed: %s", self.server, self.task_id, exc)
        else:
            logger.info("%s: cancelled task %s", self.server, self.task_id)


#: How many status notifications of not-yet-followed tasks a `TaskTable` keeps.
EARLY_TASK_NOTES = 32


class TaskTable:
    """The tasks one connection follows: a status notification wakes the call that follows
    its task; one that arrives before that call has resumed is kept for it (the server
    may notify first), the last `EARLY_TASK_NOTES` of them."""

    def __init__(self) -> None:
        self._waits: dict[str, TaskWait] = {}
        self._early: dict[str, JsonObject] = {}

    def notified(self, params: JsonObject) -> None:
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            return
        wait = self._waits.get(task_id)
        if wait is not None:
            wait.notified(params)
            return
        self._early[task_id] = params
        while len(self._early) > EARLY_TASK_NOTES:
            del self._early[next(iter(self._early))]

    async def follow(self, wait: TaskWait) -> JsonObject:
        """``wait``'s outcome, with the notes of its task delivered on the way."""
        self._waits[wait.task_id] = wait
        early = self._early.pop(wait.task_id, None)
        if early is not None:
            wait.notified(early)
        try:
            return await wait.outcome()
        finally:
            self._waits.pop(wait.task_id, None)


def task_support(capabilities: JsonObject, tools: list[Any] | None, tool: str) -> bool:
    """Whether a 2025-11-25 server runs ``tool`` as a task: it declares task-augmented
    ``tools/call`` and the tool (as listed) allows it (``execution.taskSupport``)."""
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    calls = requests.get("tools") if isinstance(requests, dict) else None
    if not isinstance(calls, dict) or "call" not in calls:
        return False
    for definition in tools or ():
        if definition.get("name") == tool:
            execution = definition.get("execution")
            support = execution.get("taskSupport") if isinstance(execution, dict) else None
            return support in ("optional", "required")
    return False


__all__ = [
    "EARLY_TASK_NOTES",
    "TASKS_EXTENSION",
    "Shape",
    "Task",
    "TaskStatus",
    "TaskTable",
    "TaskWait",
    "read_task",
    "task_shape",
    "task_support",
]
