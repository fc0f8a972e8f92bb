"""``tasks.list_1000``: ``task_list`` on a list of 1,000 tasks, as the model waits for it.

The list is written once, untimed, straight to disk in the store's own format (a
thousand ``task_create`` calls would each re-read the growing list): 1,000 tasks, a
third done, one running, each after the first blocked by the one before it, so the
readiness of every task is worked out against its blockers. Each sample is one call of
the real `TaskListTool` on the session's `TaskStore`, which has read the list before (as
after any earlier task call): the lock, a stat of each of the 1,000 files (a file changed
since is read again), the dependencies, the listing's JSON, the hop to its thread and back.
``cpu`` (a side measurement) is the CPU time of that call (every thread), which a busy
machine does not inflate; ``cold`` is the same call on a fresh store that reads and checks
every file, as ``cat-code tasks`` does. The target is absolute (100 ms, issue 26), so the
reference of each sample is 0.1 s.
"""

from __future__ import annotations

import json
import time

from cat_code.agent.task_tools import TaskListTool
from cat_code.base.files import atomic_write
from cat_code.host.tasks import Task, TaskStatus, TaskStore

LIST = "bench-1000"
TASKS = 1000
#: The target: at most this long, whatever the machine (issue 26).
TARGET_S = 0.1


def write_list(store: TaskStore, count: int = TASKS) -> None:
    """``count`` tasks in ``store``'s folder, written as the store writes them."""
    store.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for n in range(1, count + 1):
        status = TaskStatus.COMPLETED if n <= count // 3 else TaskStatus.PENDING
        if n == count // 3 + 1:
            status = TaskStatus.IN_PROGRESS
        task = Task(
            id=n,
            subject=f"step {n}: change the module that handles part {n} of the work",
            description="What done means for this step, in a sentence or two. " * 3,
            active_form=f"Working on step {n}",
            status=status,
            blocked_by=[n - 1] if n > 1 else [],
            blocks=[n + 1] if n < count else [],
        )
        text = json.dumps(task.to_json(), ensure_ascii=False, indent=2) + "\n"
        atomic_write(store.folder / f"{n}.json", text, durable=False)


_session: list[TaskStore] = []


async def list_1000(impl: str, _sizes: object) -> dict[str, float]:
    """One timed ``task_list`` call on the session's store, one on a fresh store."""
    assert impl == "cat_code"
    if not _session:
        _session.append(TaskStore(LIST))
        write_list(_session[0])
        _session[0].read()  # the session's earlier task calls read it
    warm, cpu = await _timed_list(_session[0])
    cold, _ = await _timed_list(TaskStore(LIST))
    return {"tasks.list_1000": warm, "tasks.list_1000.cpu": cpu, "tasks.list_1000.cold": cold}


async def _timed_list(store: TaskStore) -> tuple[float, float]:
    """The call's wall time, and the CPU time the process spent on it (every thread)."""
    tool = TaskListTool(store)
    started, cpu = time.perf_counter(), time.process_time()
    result = await tool.execute({})
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    listed = json.loads(result.content)
    if result.is_error or len(listed) != TASKS:
        raise AssertionError(f"task_list gave {len(listed)} tasks: {result.content[:200]}")
    if sum(t["ready"] for t in listed) != 0 or listed[-1]["blockedBy"] != [TASKS - 1]:
        raise AssertionError("task_list got the dependencies wrong")
    return seconds, cpu
