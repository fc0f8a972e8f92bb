"""How a task list is shown: the panel, /tasks and cat-code tasks lines, the restatement."""

from __future__ import annotations

from cat_code.host.tasks import Task, TaskStatus
from cat_code.host.tasks.render import PANEL_TASKS, list_lines, listing, panel_lines, restatement


def _tasks(count: int, *, done: int = 0, running: int | None = None) -> list[Task]:
    tasks = [
        Task(id=n, subject=f"step {n}", active_form=f"Doing step {n}") for n in range(1, count + 1)
    ]
    for task in tasks[:done]:
        task.status = TaskStatus.COMPLETED
    if running is not None:
        tasks[running - 1].status = TaskStatus.IN_PROGRESS
    return tasks


def test_the_panel_is_empty_once_no_task_is_open() -> None:
    assert panel_lines(_tasks(3, done=3), None) == []
    assert panel_lines([], None) == []


def test_the_panel_shows_the_running_task_by_its_active_form_and_names_only_shared_lists() -> None:
    tasks = _tasks(3, done=1, running=2)
    tasks[2].blocked_by = [2]
    assert panel_lines(tasks, None) == [
        "tasks: 1 of 3 done",
        "  ✔ #1 step 1",
        "  ▶ #2 Doing step 2",
        "  ○ #3 step 3  (blocked by #2)",
    ]
    assert panel_lines(tasks, "team")[0] == "tasks (team): 1 of 3 done"


def test_a_long_list_shows_the_open_tasks_first_and_counts_the_rest() -> None:
    tasks = _tasks(30, done=20, running=21)
    lines = panel_lines(tasks, None)
    assert len(lines) == 1 + PANEL_TASKS + 1
    assert lines[1] == "  ▶ #21 Doing step 21"  # in id order; done ones left for /tasks
    assert lines[-1] == "  … 22 more (/tasks lists them all)"
    assert len(list_lines(tasks, None)) == 31


def test_model_text_cannot_drive_the_terminal_or_fake_a_line() -> None:
    [task] = _tasks(1)
    task.subject = "evil\x1b[2J\nfake line"
    [_, line] = list_lines([task], None)
    assert "\x1b" not in line and "\n" not in line and line.endswith("evil\\x1b[2J fake line")


def test_deleted_tasks_are_left_out_and_ready_follows_the_blockers() -> None:
    tasks = _tasks(3, done=1)
    tasks[1].blocked_by = [1]
    tasks[2].blocked_by = [2]
    tasks.append(Task(id=4, subject="gone", status=TaskStatus.DELETED))
    entries = listing(tasks)
    assert [(e["id"], e["ready"]) for e in entries] == [(1, False), (2, True), (3, False)]


def test_the_restatement_lists_open_tasks_in_full_and_done_ones_by_id() -> None:
    tasks = _tasks(4, done=2, running=3)
    tasks[3].blocked_by = [3]
    tasks[3].owner = "bob"
    text = restatement(tasks, "plan")
    assert text.splitlines()[1:] == [
        "- #3 [in_progress] step 3",
        "- #4 [pending] step 4 (blocked by #3) (owner bob)",
        "Completed: #1, #2.",
    ]
    assert restatement(_tasks(2, done=2), "plan") == ""
