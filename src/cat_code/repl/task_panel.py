"""The task panel: the model's task list drawn above the REPL's prompt while a task is open.

The panel is part of the prompt's message, so prompt_toolkit redraws it with the prompt
and it never breaks what the user is typing. Before each prompt the list is read again
(`refresh`: another process may share it); drawing reads that snapshot, never the disk.
The running task shows its ``activeForm``, the rest their subject, at most
`render.PANEL_TASKS` of them. Ctrl-T hides or shows it (`bind`); once no task is open it
is gone by itself. ``/tasks`` prints the whole list (`TaskPanel.full_text`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from prompt_toolkit.application.current import get_app
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from cat_code.host.tasks import TaskError, TaskStore
from cat_code.host.tasks.render import list_lines, panel_lines
from cat_code.tools.threads import in_daemon_thread

logger = logging.getLogger(__name__)

#: The key that hides or shows the panel (Claude Code's).
TOGGLE_KEY = "c-t"
#: Reading the list before a prompt waits at most this long (a lock held elsewhere):
#: the prompt must not wait on another process; the last list read is shown instead.
REFRESH_TIMEOUT_S = 0.5
_PANEL_STYLE = "fg:ansibrightblack"
_RUNNING_STYLE = "bold"


class TaskPanel:
    """What the prompt shows of ``store``'s list; ``visible`` is Ctrl-T's switch.
    ``shared_name``: the list's name when it is not the session's own (then shown)."""

    def __init__(self, store: TaskStore, shared_name: Callable[[], str | None]) -> None:
        self.store = store
        self.visible = True
        self._shared_name = shared_name

    def message(self, prompt: str) -> FormattedText:
        """The prompt's message: the panel's lines (when shown and a task is open), then
        ``prompt``."""
        parts: list[tuple[str, str]] = []
        # Once the line is sent, the prompt is drawn a last time for the scrollback:
        # without the panel, so the transcript is not one copy of the list per prompt.
        if self.visible and not get_app().is_done:
            for line in panel_lines(self.store.snapshot, self._shared_name()):
                running = line.lstrip().startswith("▶")
                parts.append((_RUNNING_STYLE if running else _PANEL_STYLE, line + "\n"))
        parts.append(("", prompt))
        return FormattedText(parts)

    async def refresh(self) -> None:
        """Read the list again before a prompt (another process may share it): on a
        thread, bounded; on failure the last list read stays."""
        try:
            async with asyncio.timeout(REFRESH_TIMEOUT_S):
                await in_daemon_thread(self.store.read, name="task-panel")
        except (TimeoutError, TaskError) as exc:
            logger.debug("the task list was not read again: %s", exc)
        self.store.notify()

    def toggle(self) -> None:
        self.visible = not self.visible

    def bind(self, bindings: KeyBindings) -> None:
        """Ctrl-T on ``bindings``: hide or show the panel, redrawn at once."""

        @bindings.add(TOGGLE_KEY)
        def _toggle(event: KeyPressEvent) -> None:
            self.toggle()
            event.app.invalidate()

    def full_text(self) -> str:
        """``/tasks``: the whole list, read afresh (another process may share it)."""
        try:
            tasks = self.store.read()
        except TaskError as exc:
            return f"cannot read the task list: {exc}"
        self.store.notify()
        shown = "" if self.visible else "\n(the panel above the prompt is hidden: Ctrl-T shows it)"
        return "\n".join(list_lines(tasks, self._shared_name())) + shown


__all__ = ["TOGGLE_KEY", "TaskPanel"]
