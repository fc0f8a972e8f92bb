"""`NotificationQueue`: notes folded by key, drained by priority, the model's side apart."""

from __future__ import annotations

import threading

from cat_code.host.notifications import (
    Note,
    NoteKind,
    NotificationQueue,
    Priority,
    model_block,
    server_note,
    task_unblocked,
)


def test_a_newer_note_with_the_same_key_replaces_the_older_so_a_flapping_server_is_one_line() -> (
    None
):
    queue = NotificationQueue()
    for attempt in range(100):
        queue.post(server_note(NoteKind.SERVER_FAILED, "flaky", f"stopped ({attempt})"))
    queue.post(server_note(NoteKind.SERVER_RESTARTED, "flaky", "restarted"))
    [note] = queue.take_for_user()
    assert (note.kind, note.text) == (NoteKind.SERVER_RESTARTED, "restarted")
    assert queue.take_for_user() == []


def test_notes_come_highest_priority_first_then_in_the_order_posted() -> None:
    queue = NotificationQueue()
    queue.post(Note(NoteKind.COMPACTED, "a", "low", Priority.LOW))
    queue.post(Note(NoteKind.JOB_ENDED, "b", "first normal"))
    queue.post(Note(NoteKind.SERVER_GAVE_UP, "c", "high", Priority.HIGH))
    queue.post(Note(NoteKind.JOB_ENDED, "d", "second normal"))
    assert [n.text for n in queue.take_for_user()] == [
        "high",
        "first normal",
        "second normal",
        "low",
    ]


def test_the_model_gets_only_the_notes_meant_for_it_and_a_withdrawn_one_not_at_all() -> None:
    queue = NotificationQueue()
    queue.post(server_note(NoteKind.SERVER_FAILED, "x", "server x stopped"))
    queue.post(Note(NoteKind.JOB_ENDED, "job:1", "job 1 ended", for_model=True, model_text="J1"))
    queue.post(Note(NoteKind.JOB_ENDED, "job:2", "job 2 ended", for_model=True, model_text="J2"))
    queue.withdraw("job:2")
    block = model_block(queue.take_for_model())
    assert block == "<system-notification>\nJ1\n</system-notification>"
    assert queue.take_for_model() == [] and model_block([]) == ""
    assert len(queue.take_for_user()) == 3  # the user sees all of them, apart


def test_listeners_hear_each_post_from_any_thread_until_they_stop() -> None:
    queue = NotificationQueue()
    heard: list[str] = []
    stop = queue.listen(lambda note: heard.append(note.text))
    thread = threading.Thread(target=queue.post, args=(Note(NoteKind.JOB_ENDED, "k", "one"),))
    thread.start()
    thread.join(5)
    stop()
    queue.post(Note(NoteKind.JOB_ENDED, "k", "two"))
    assert heard == ["one"]


def test_a_broken_listener_loses_no_note() -> None:
    queue = NotificationQueue()

    def broken(note: Note) -> None:
        raise RuntimeError("bug")

    queue.listen(broken)
    queue.post(Note(NoteKind.JOB_ENDED, "k", "kept"))
    assert [n.text for n in queue.take_for_user()] == ["kept"]


def test_a_task_unblocked_note_names_the_task_and_has_a_key_per_task() -> None:
    note = task_unblocked(7, "write the docs", task_list="team")
    assert note.kind is NoteKind.TASK_UNBLOCKED and note.key == "task:team:7"
    assert note.text == "task 7 is ready: write the docs in list team"
    assert note.to_json()["task_id"] == 7 and note.to_json()["kind"] == "task_unblocked"
