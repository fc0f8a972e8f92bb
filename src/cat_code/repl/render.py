"""What the REPL draws: the console, tool-call lines, Markdown answers, the spinner.

One rich `Console` writes everything (it looks up ``sys.stdout`` on each write, so text
printed while the prompt is up goes through prompt_toolkit's stdout patch and lands
above the prompt). `TurnView` is the REPL's `AgentEvents`: a single spinner line for
the running turn — "thinking…" or the running tool with its latest progress message —
and, above it, the model's text as Markdown and one ``⏺`` entry per finished call.
Questions pause the spinner (`TurnView.paused`) so they never share a line with it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.status import Status
from rich.text import Text

from cat_code.agent.loop import AgentEvents
from cat_code.agent.providers.base import ModelError, ToolCall
from cat_code.agent.transcript import ARROW, BULLET, INDENT, call_head, compact_json, tool_line
from cat_code.tools.base import ToolResult

logger = logging.getLogger(__name__)

CANCEL_HINT = "(Ctrl-C cancels)"


def make_console() -> Console:
    # file=None: rich resolves sys.stdout at each write, which prompt_toolkit may patch.
    return Console(highlight=False, force_terminal=sys.stdout.isatty() or None)


def tool_entry(name: str, arguments: Any, result: ToolResult, width: int) -> Text:
    """A finished call: ``⏺ name {json} → result`` with the result's first lines."""
    plain = tool_line(name, arguments, result.content, width=width)
    head = f"{BULLET} {name} {compact_json(arguments)} {ARROW} "
    text = Text()
    text.append(BULLET + " ", style="red" if result.is_error else "green")
    text.append(name, style="bold")
    text.append(" " + compact_json(arguments), style="bright_black")
    text.append(f" {ARROW} ")
    text.append(plain[len(head) :], style="red" if result.is_error else "")
    return text


def markdown(text: str) -> Markdown:
    return Markdown(text, code_theme="ansi_dark")


def error_line(message: str) -> Text:
    return Text(f"✗ {message}", style="red")


def note_line(message: str) -> Text:
    return Text(message, style="yellow")


class TurnView(AgentEvents):
    """The spinner and transcript of the running turn."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._status: Status | None = None
        self._thinking = False
        self._running: dict[str, tuple[str, str]] = {}
        self._label = "thinking…"

    # -- lifecycle -------------------------------------------------------------------

    def begin(self, label: str = "thinking…") -> None:
        self._label = label
        self._thinking = False
        self._running.clear()
        if self._status is None:
            self._status = Status(self._text(), console=self.console, spinner="dots")
            self._status.start()

    def end(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
        self._running.clear()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No spinner while the user answers a question."""
        status = self._status
        if status is not None:
            status.stop()
        try:
            yield
        finally:
            if status is not None and self._status is status:
                status.start()

    def running_calls(self) -> list[str]:
        """The names of the tools running now."""
        return [head.split(" ")[1] for head, _ in self._running.values()]

    # -- AgentEvents -----------------------------------------------------------------

    def model_started(self) -> None:
        self._thinking = True
        self._update()

    def model_finished(self) -> None:
        self._thinking = False
        self._update()

    def retrying(self, error: ModelError, delay: float, attempt: int) -> None:
        self.console.print(note_line(f"⚠ {error} — retrying in {delay:.1f} s (attempt {attempt})"))

    def assistant_text(self, text: str, *, final: bool) -> None:
        self.console.print(markdown(text))

    def tool_started(self, call: ToolCall) -> None:
        self._running[call.id] = (call_head(call.name, call.arguments), "")
        self._update()

    def tool_progress(
        self, call: ToolCall, progress: float, total: float | None, message: str | None
    ) -> None:
        head, _ = self._running.get(call.id, (call_head(call.name, call.arguments), ""))
        amount = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        self._running[call.id] = (head, f"{message} ({amount})" if message else amount)
        self._update()

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        self._running.pop(call.id, None)
        self.console.print(tool_entry(call.name, call.arguments, result, self.console.width))
        self._update()

    # -- drawing ---------------------------------------------------------------------

    def _text(self) -> Text:
        if len(self._running) == 1:
            head, progress = next(iter(self._running.values()))
            line = f"{head} — {progress}" if progress else head
        elif self._running:
            line = f"{len(self._running)} tools running: " + ", ".join(self.running_calls())
        elif self._thinking:
            line = "thinking…"
        else:
            line = self._label
        width = max(20, self.console.width - 4 - len(CANCEL_HINT) - 1)
        if len(line) > width:
            line = line[: width - 1] + "…"
        return Text.assemble(line, " ", (CANCEL_HINT, "bright_black"))

    def _update(self) -> None:
        if self._status is not None:
            self._status.update(self._text())


class ConsoleLogHandler(logging.Handler):
    """Log records printed through the console, so they land above the prompt and spinner."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = f"cat-code: {record.levelname.lower()}: {record.getMessage()}"
            self.console.print(
                Text(text, style="bright_black" if record.levelno < 30 else "yellow")
            )
        except Exception:
            self.handleError(record)


__all__ = ["INDENT", "ConsoleLogHandler", "TurnView", "make_console", "tool_entry"]
