"""`TaskStore`: files on disk, dependencies kept symmetric, errors, several processes."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cat_code.host.tasks import (
    TASK_LIST_ENV,
    BadStatus,
    BadTaskInput,
    DependencyCycle,
    SelfDependency,
    TaskError,
    TaskStatus,
    TaskStore,
    TaskStoreUnavailable,
    UnknownTask,
    list_from_env,
)


def test_each_task_is_one_private_json_file_in_a_private_folder(cat_code_home: Path) -> None:
    store = TaskStore("work")
    task = store.create("Write the parser", description="d", active_form="Writing the parser")
    folder = cat_code_home / "tasks" / "work"
    path = folder / f"{task.id}.json"
    data = json.loads(path.read_text())
    assert data["subject"] == "Write the parser" and data["activeForm"] == "Writing the parser"
    assert data["status"] == "pending" and data["id"] == 1
    assert data["createdAt"] and data["updatedAt"] and data["metadata"] == {}
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((cat_code_home / "tasks").stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_ids_count_up_and_a_deleted_tasks_id_is_never_reused() -> None:
    store = TaskStore("ids")
    first, second = store.create("a"), store.create("b")
    assert (first.id, second.id) == (1, 2)
    store.update(2, status=TaskStatus.DELETED)
    assert store.create("c").id == 3
    assert [t.id for t in store.read()] == [1, 3]
    assert store.get(2).status is TaskStatus.DELETED


def test_blocked_by_and_blocks_are_kept_symmetric_both_ways() -> None:
    store = TaskStore("deps")
    a, b, c = store.create("a"), store.create("b"), store.create("c")
    store.update(b.id, add_blocked_by=[a.id])
    store.update(a.id, add_blocks=[c.id])
    tasks = {t.id: t for t in store.read()}
    assert tasks[a.id].blocks == [b.id, c.id]
    assert tasks[b.id].blocked_by == [a.id] and tasks[c.id].blocked_by == [a.id]
    made = store.create("d", blocked_by=[b.id, c.id])
    assert store.get(b.id).blocks == [made.id] and store.get(c.id).blocks == [made.id]


def test_completing_a_task_says_which_tasks_it_unblocked_and_calls_the_hook() -> None:
    store = TaskStore("unblock")
    heard: list[tuple[str, int, list[int]]] = []
    store.unblocked_hooks.append(
        lambda name, t, ready: heard.append((name, t.id, [r.id for r in ready]))
    )
    a, b = store.create("a"), store.create("b")
    c = store.create("c", blocked_by=[a.id])
    d = store.create("d", blocked_by=[a.id, b.id])
    update = store.update(a.id, status=TaskStatus.COMPLETED)
    assert [t.id for t in update.unblocked] == [c.id]  # d still waits for b
    assert heard == []  # told on the caller's thread, by notify
    store.notify()
    assert heard == [("unblock", a.id, [c.id])]
    assert [t.id for t in store.update(b.id, status=TaskStatus.COMPLETED).unblocked] == [d.id]


def test_deleting_a_task_takes_it_out_of_every_dependency() -> None:
    store = TaskStore("delete")
    a = store.create("a")
    b = store.create("b", blocked_by=[a.id])
    update = store.update(a.id, status=TaskStatus.DELETED)
    assert [t.id for t in update.unblocked] == [b.id]
    assert store.get(b.id).blocked_by == [] and [t.id for t in store.read()] == [b.id]
    with pytest.raises(TaskError, match="deleted"):
        store.update(a.id, status=TaskStatus.PENDING)


def test_an_unknown_id_a_self_dependency_and_a_cycle_are_refused_and_nothing_is_written(
    cat_code_home: Path,
) -> None:
    store = TaskStore("refused")
    a, b, c = store.create("a"), store.create("b"), store.create("c")
    store.update(b.id, add_blocked_by=[a.id])
    store.update(c.id, add_blocked_by=[b.id])
    before = {p.name: p.read_bytes() for p in (cat_code_home / "tasks" / "refused").glob("*.json")}
    with pytest.raises(UnknownTask, match="no task #9"):
        store.update(9, status=TaskStatus.COMPLETED)
    with pytest.raises(UnknownTask):
        store.update(a.id, add_blocked_by=[9])
    with pytest.raises(SelfDependency):
        store.update(a.id, add_blocks=[a.id])
    with pytest.raises(DependencyCycle) as cycle:
        store.update(a.id, add_blocked_by=[c.id])
    assert cycle.value.path == [a.id, c.id, b.id, a.id]
    with pytest.raises(BadStatus, match="pending, in_progress, completed, deleted"):
        TaskStatus.parse("done")
    with pytest.raises(UnknownTask):
        store.get(42)
    after = {p.name: p.read_bytes() for p in (cat_code_home / "tasks" / "refused").glob("*.json")}
    assert after == before


def test_metadata_merges_and_a_null_value_removes_a_key() -> None:
    store = TaskStore("meta")
    task = store.create("a", metadata={"keep": 1, "drop": 2})
    store.update(task.id, metadata={"drop": None, "new": "x"}, owner="alice", worktree="wt-a")
    got = store.get(task.id)
    assert got.metadata == {"keep": 1, "new": "x"}
    assert (got.owner, got.worktree) == ("alice", "wt-a")


def test_a_corrupt_task_file_is_skipped_with_one_warning_and_the_rest_loads(
    cat_code_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = TaskStore("corrupt")
    store.create("a")
    store.create("b")
    folder = cat_code_home / "tasks" / "corrupt"
    (folder / "2.json").write_text("{not json")
    (folder / "3.json").write_text(json.dumps({"id": 3, "subject": 7}))
    with caplog.at_level(logging.WARNING, logger="cat_code.host.tasks.store"):
        assert [t.id for t in store.read()] == [1]
        assert [t.id for t in store.read()] == [1]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2  # one per bad file, not one per read
    assert any("2.json" in w and "not JSON" in w for w in warnings)
    assert any("3.json" in w and "'subject'" in w for w in warnings)
    assert store.create("c").id == 4  # the corrupt files' ids stay theirs


def test_an_unwritable_folder_is_a_clear_error(cat_code_home: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into a read-only folder")
    store = TaskStore("locked")
    store.create("a")
    folder = cat_code_home / "tasks" / "locked"
    folder.chmod(0o500)
    try:
        with pytest.raises(TaskStoreUnavailable, match="cannot be used"):
            store.create("b")
        assert [t.subject for t in store.read()] == ["a"]  # read without the lock
    finally:
        folder.chmod(0o700)


def test_a_tasks_folder_that_is_a_file_is_a_clear_error(cat_code_home: Path) -> None:
    (cat_code_home / "tasks").write_text("not a folder")
    with pytest.raises(TaskStoreUnavailable, match="cannot be used"):
        TaskStore("x").create("a")


def test_listeners_hear_the_list_only_when_it_changed() -> None:
    store = TaskStore("listen")
    heard: list[list[str]] = []
    store.listeners.append(lambda tasks: heard.append([f"{t.id}:{t.status}" for t in tasks]))
    store.switch("listen")  # the baseline: an empty list
    store.notify()
    assert heard == []
    store.create("a")
    store.notify()
    store.read()
    store.notify()
    store.update(1, status=TaskStatus.IN_PROGRESS)
    store.notify()
    assert heard == [["1:pending"], ["1:in_progress"]]


def test_list_names_from_the_environment_are_checked() -> None:
    assert list_from_env({TASK_LIST_ENV: "team-plan.v2"}) == "team-plan.v2"
    assert list_from_env({}) is None
    for bad in ("../x", ".hidden", "a/b", "x" * 101):
        with pytest.raises(BadTaskInput):
            list_from_env({TASK_LIST_ENV: bad})
    with pytest.raises(BadTaskInput):
        TaskStore("../escape")


WRITER = """
import sys
from cat_code.host.tasks import TaskStore
store = TaskStore("shared")
for n in range(int(sys.argv[2])):
    task = store.create(f"{sys.argv[1]}-{n}")
    if n:
        store.update(task.id, add_blocked_by=[task.id - 1] if task.id > 1 else [])
print("done", flush=True)
"""


def test_two_processes_writing_one_list_at_once_lose_nothing(cat_code_home: Path) -> None:
    count = 40
    env = {**os.environ, "CAT_CODE_HOME": str(cat_code_home)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, name, str(count)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("left", "right")
    ]
    try:
        for writer in writers:
            out, err = writer.communicate(timeout=60)
            assert writer.returncode == 0, err
            assert out == "done\n"
    finally:
        for writer in writers:
            if writer.poll() is None:
                writer.kill()
                writer.wait()
    tasks = TaskStore("shared").read()
    assert sorted(t.id for t in tasks) == list(range(1, 2 * count + 1))
    subjects = {t.subject for t in tasks}
    assert subjects == {f"{side}-{n}" for side in ("left", "right") for n in range(count)}
    by_id = {t.id: t for t in tasks}
    for task in tasks:  # every edge either process added is there on both ends
        for blocker in task.blocked_by:
            assert task.id in by_id[blocker].blocks
        for blocked in task.blocks:
            assert task.id in by_id[blocked].blocked_by
    assert sum(len(t.blocked_by) for t in tasks) == 2 * (count - 1)
