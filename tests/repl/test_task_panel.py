"""`TaskPanel`: what the prompt's message holds, Ctrl-T's switch, /tasks' text."""

from __future__ import annotations

from prompt_toolkit.formatted_text import to_plain_text
from prompt_toolkit.key_binding import KeyBindings

from cat_code.host.tasks import TaskStatus, TaskStore
from cat_code.repl.task_panel import TOGGLE_KEY, TaskPanel


def _panel(shared: str | None = None) -> TaskPanel:
    store = TaskStore("panel")
    store.create("Write it", active_form="Writing it")
    store.create("Check it")
    store.update(1, status=TaskStatus.IN_PROGRESS)
    return TaskPanel(store, lambda: shared)


def test_the_message_is_the_panel_then_the_prompt_and_ctrl_t_hides_the_panel() -> None:
    panel = _panel()
    assert to_plain_text(panel.message("› ")) == (
        "tasks: 0 of 2 done\n  ▶ #1 Writing it\n  ○ #2 Check it\n› "
    )
    panel.toggle()
    assert to_plain_text(panel.message("› ")) == "› "
    assert panel.full_text().endswith("(the panel above the prompt is hidden: Ctrl-T shows it)")


def test_with_every_task_done_the_prompt_stands_alone() -> None:
    panel = _panel("team")
    for task_id in (1, 2):
        panel.store.update(task_id, status=TaskStatus.COMPLETED)
    assert to_plain_text(panel.message("› ")) == "› "
    assert panel.full_text().splitlines()[0] == "tasks (team): 2 of 2 done"


def test_bind_adds_ctrl_t() -> None:
    bindings = KeyBindings()
    _panel().bind(bindings)
    assert [b.keys for b in bindings.bindings] == [(TOGGLE_KEY,)]
