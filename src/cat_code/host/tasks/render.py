"""A task list in words: the panel and ``/tasks`` lines, the JSON the tools and
``--json`` give, and the text restated to the model after a compaction.

Subjects and forms are the model's (or another process's) text: every line here goes
through `safe_line`, so a task can neither drive the terminal nor fake another line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cat_code.base.safe_text import safe_line
from cat_code.host.status import one_line
from cat_code.host.tasks.model import Task, TaskStatus, is_ready, open_blockers

#: A subject (or active form) in the panel and ``/tasks`` is cut after this many characters.
SUBJECT_CHARS = 100
#: The panel above the prompt shows at most this many tasks (the rest are counted).
PANEL_TASKS = 8

_MARK = {
    TaskStatus.COMPLETED: "✔",
    TaskStatus.IN_PROGRESS: "▶",
    TaskStatus.PENDING: "○",
    TaskStatus.DELETED: "✗",
}


def listing(tasks: Sequence[Task]) -> list[dict[str, Any]]:
    """``task_list``'s entries: id, subject, status, owner, ready, blockers, active form,
    worktree (deleted tasks left out)."""
    by_id = {t.id: t for t in tasks}
    return [
        {
            "id": t.id,
            "subject": t.subject,
            "status": str(t.status),
            "owner": t.owner,
            "ready": is_ready(t, by_id),
            "blockedBy": list(t.blocked_by),
            "blocks": list(t.blocks),
            "activeForm": t.active_form,
            "worktree": t.worktree,
        }
        for t in tasks
        if t.status is not TaskStatus.DELETED
    ]


def task_line(task: Task, by_id: Mapping[int, Task]) -> str:
    """One task on one line: its mark, id, subject (the active form while it runs) and
    what holds it."""
    running = task.status is TaskStatus.IN_PROGRESS and task.active_form.strip()
    text = one_line(task.active_form if running else task.subject, SUBJECT_CHARS)
    extras = []
    if task.status is TaskStatus.PENDING:
        blockers = open_blockers(task, by_id)
        if blockers:
            extras.append("blocked by " + ", ".join(f"#{i}" for i in blockers))
    if task.owner:
        extras.append(f"owner {one_line(task.owner, 40)}")
    if task.worktree:
        extras.append(f"worktree {one_line(task.worktree, 60)}")
    tail = f"  ({'; '.join(extras)})" if extras else ""
    return safe_line(f"{_MARK[task.status]} #{task.id} {text}{tail}")


def summary_line(tasks: Sequence[Task], list_name: str | None) -> str:
    """``tasks (NAME): 2 of 5 done``; the name left out for a session's own list (None)."""
    shown = [t for t in tasks if t.status is not TaskStatus.DELETED]
    done = sum(t.status is TaskStatus.COMPLETED for t in shown)
    named = f" ({list_name})" if list_name else ""
    return safe_line(f"tasks{named}: {done} of {len(shown)} done")


def list_lines(tasks: Sequence[Task], list_name: str | None) -> list[str]:
    """``/tasks`` and ``cat-code tasks``: a summary line, then every task."""
    shown = [t for t in tasks if t.status is not TaskStatus.DELETED]
    if not shown:
        return [safe_line(f"no tasks in list '{list_name}'" if list_name else "no tasks yet")]
    by_id = {t.id: t for t in shown}
    return [summary_line(shown, list_name), *(f"  {task_line(t, by_id)}" for t in shown)]


def panel_lines(tasks: Sequence[Task], list_name: str | None) -> list[str]:
    """The panel above the prompt: nothing when no task is open; else the summary, the
    tasks in progress, then the open ones, then the latest done, `PANEL_TASKS` at most."""
    shown = [t for t in tasks if t.status is not TaskStatus.DELETED]
    if not any(t.is_open for t in shown):
        return []
    by_id = {t.id: t for t in shown}
    order = {TaskStatus.IN_PROGRESS: 0, TaskStatus.PENDING: 1, TaskStatus.COMPLETED: 2}
    ranked = sorted(shown, key=lambda t: (order[t.status], t.id))
    picked = ranked[:PANEL_TASKS]
    lines = [summary_line(shown, list_name)]
    lines += [f"  {task_line(t, by_id)}" for t in sorted(picked, key=lambda t: t.id)]
    if len(shown) > len(picked):
        lines.append(f"  … {len(shown) - len(picked)} more (/tasks lists them all)")
    return lines


def restatement(tasks: Sequence[Task], list_name: str) -> str:
    """What the model is told after a compaction: every open task in full, the done ones
    by id, so no step is lost or redone. Empty when no task is open."""
    shown = [t for t in tasks if t.status is not TaskStatus.DELETED]
    open_tasks = [t for t in shown if t.is_open]
    if not open_tasks:
        return ""
    by_id = {t.id: t for t in shown}
    lines = [
        f"Your task list '{list_name}' (kept by cat-code, unchanged by the compaction; "
        "task_list and task_get read it, task_update changes it). Open tasks:"
    ]
    for task in open_tasks:
        ready = ", ready" if is_ready(task, by_id) else ""
        line = f"- #{task.id} [{task.status}{ready}] {one_line(task.subject, 300)}"
        blockers = open_blockers(task, by_id)
        if blockers:
            line += " (blocked by " + ", ".join(f"#{i}" for i in blockers) + ")"
        if task.owner:
            line += f" (owner {one_line(task.owner, 60)})"
        lines.append(line)
    done = [t.id for t in shown if t.status is TaskStatus.COMPLETED]
    if done:
        lines.append("Completed: " + ", ".join(f"#{i}" for i in done) + ".")
    return "\n".join(lines)


__all__ = [
    "PANEL_TASKS",
    "SUBJECT_CHARS",
    "list_lines",
    "listing",
    "panel_lines",
    "restatement",
    "summary_line",
    "task_line",
]
