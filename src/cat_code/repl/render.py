"""What the REPL draws: the console, tool-call lines, Markdown answers, the spinner.

One rich `Console` writes everything (it looks up ``sys.stdout`` on each write, so text
printed while the prompt is up goes through prompt_toolkit's stdout patch and lands
above the prompt). `TurnView` is the REPL's `AgentEvents`: a single spinner line for
the running turn — "thinking…" or the running tool with its latest progress message —
and, above it, the model's text as Markdown and one ``⏺`` entry per finished call.
Questions pause the spinner (`TurnView.paused`) so they never share a line with it.
Under the spinner, each running subagent has one live line (``side_lines``).

The model's text streams into the live area just above the spinner: each Markdown block
is printed rendered (for good, above the live area) as soon as it is complete, and the
block still being written shows raw, its last lines only, in the live area. When the
turn ends, for whatever reason (Ctrl-C, an error), the text that arrived is printed too:
what the user saw stays on screen.

The console is a `SafeConsole`: every piece of text it draws (not rich's own control
codes) passes `safe_text`, so nothing a server or the model wrote — results, names,
errors, log lines, the Markdown answer — can drive the terminal, whichever line printed it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.segment import Segment
from rich.spinner import Spinner
from rich.text import Text

from cat_code.agent.compaction import Compaction
from cat_code.agent.loop import AgentEvents
from cat_code.agent.providers.base import AssistantMessage, ModelError, ThinkingBlock, ToolCall
from cat_code.agent.transcript import ARROW, BULLET, INDENT, call_head, compact_json, tool_line
from cat_code.base.safe_text import safe_text
from cat_code.host.status import one_line
from cat_code.repl.markdown_stream import MarkdownStream, RenderedPrefix
from cat_code.tools.base import FileChange, ToolResult

logger = logging.getLogger(__name__)

CANCEL_HINT = "(Ctrl-C cancels)"
#: Most lines of a block being written shown at once; a taller live area redraws badly.
PENDING_LINES = 12
#: Live-area redraws per second: the spinner's pace, and the most a stream is redrawn.
REFRESH_PER_SECOND = 12.5


class SafeConsole(Console):
    """A rich `Console` whose text segments pass `safe_text`: the one place the REPL's
    output is made safe (rich strips a few C0 codes itself, but passes ESC and C1)."""

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            # A control segment is rich's own (cursor moves of the live area): kept.
            if segment.control is None and segment.text:
                text = safe_text(segment.text)
                if text is not segment.text:
                    segment = Segment(text, segment.style)
            yield segment


def make_console() -> Console:
    # file=None: rich resolves sys.stdout at each write, which prompt_toolkit may patch.
    return SafeConsole(highlight=False, force_terminal=sys.stdout.isatty() or None)


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


#: Lines of a change shown in the approval question (a new file: its first lines).
DIFF_LINES = 60
NEW_FILE_LINES = 20


def change_diff(change: FileChange) -> Text:
    """A file change as a coloured unified diff (a new file: its first lines, all added)."""
    import difflib

    text = Text()
    if change.before is None:
        lines = change.after.splitlines()
        text.append(f"  new file {change.shown} ({len(lines)} lines)\n", style="bold")
        for line in lines[:NEW_FILE_LINES]:
            text.append(f"  + {line}\n", style="green")
        if len(lines) > NEW_FILE_LINES:
            text.append(f"  … {len(lines) - NEW_FILE_LINES} more lines\n", style="bright_black")
        return text
    diff = list(
        difflib.unified_diff(
            change.before.splitlines(),
            change.after.splitlines(),
            fromfile=f"a/{change.shown}",
            tofile=f"b/{change.shown}",
            lineterm="",
        )
    )
    if not diff:
        text.append(f"  {change.shown}: no change\n", style="bright_black")
        return text
    for line in diff[:DIFF_LINES]:
        style = (
            "bold"
            if line.startswith(("---", "+++"))
            else "cyan"
            if line.startswith("@@")
            else "green"
            if line.startswith("+")
            else "red"
            if line.startswith("-")
            else ""
        )
        text.append(f"  {line}\n", style=style)
    if len(diff) > DIFF_LINES:
        text.append(f"  … {len(diff) - DIFF_LINES} more diff lines\n", style="bright_black")
    return text


def markdown(text: str) -> Markdown:
    return Markdown(text, code_theme="ansi_dark")


def error_line(message: str) -> Text:
    return Text(f"✗ {message}", style="red")


def thinking_line(blocks: Sequence[ThinkingBlock]) -> Text | None:
    """Extended thinking, collapsed: one dim line with its size and its opening words."""
    if not blocks:
        return None
    text = " ".join(b.text for b in blocks if b.kind == "thinking")
    words = len(text.split())
    redacted = sum(1 for b in blocks if b.kind == "redacted_thinking")
    parts = [f"{words:,} word{'' if words == 1 else 's'}"] if words else []
    if redacted:
        parts.append(f"{redacted} redacted")
    opening = one_line(safe_text(text), 60) if text.strip() else ""
    return Text(
        f"✻ thought ({', '.join(parts)})" + (f": {opening}" if opening else ""),
        style="dim italic",
    )


def note_line(message: str) -> Text:
    return Text(message, style="yellow")


class TurnView(AgentEvents):
    """The spinner and transcript of the running turn."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._status: Live | None = None
        self._spinner = Spinner("dots", style="status.spinner")
        self._thinking = False
        self._running: dict[str, tuple[str, str]] = {}
        self._label = "thinking…"
        #: The message streaming now (None when it was not streamed, or is printed).
        self._stream: MarkdownStream | None = None
        self._printed: RenderedPrefix | None = None
        #: Calls a rule refused: their one "refused" line stands for the whole entry.
        self._refused: set[str] = set()
        #: Called between outputs (before a model request, after a tool's entry): the
        #: REPL shows the notes that waited for such a boundary.
        self.between: Callable[[], None] = lambda: None
        #: Lines shown under the spinner while they last (each running subagent's).
        self.side_lines: Callable[[], list[str]] = list
        #: The collapsed line of the current message's extended thinking, once printed None.
        self._thought: Text | None = None

    # -- lifecycle -------------------------------------------------------------------

    def begin(self, label: str = "thinking…") -> None:
        self._label = label
        self._thinking = False
        self._running.clear()
        if self._status is None:
            self._spinner.update(text=self._text())
            self._status = Live(
                _LiveArea(self),
                console=self.console,
                refresh_per_second=REFRESH_PER_SECOND,
                transient=True,
            )
            self._status.start()

    def end(self) -> None:
        self._finish_stream(None)  # a cut stream: what arrived stays on screen
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
        self._finish_stream(None)
        self.between()
        self._thinking = True
        self._update()

    def model_finished(self) -> None:
        self._thinking = False
        self._update()

    def retrying(self, error: ModelError, delay: float, attempt: int) -> None:
        self.console.print(note_line(f"⚠ {error} — retrying in {delay:.1f} s (attempt {attempt})"))

    def assistant_delta(self, text: str) -> None:
        if self._stream is None:
            self._stream = MarkdownStream()
            self._printed = RenderedPrefix(self.console, markdown)
            self._update()
        if self._stream.feed(text):
            self._print_new(self._stream.complete)

    def assistant_message(self, message: AssistantMessage) -> None:
        self._thought = thinking_line(message.thinking)
        if not message.text:  # no text follows: say it now
            self._print_thought()

    def assistant_text(self, text: str, *, final: bool) -> None:
        if self._stream is None:  # not streamed: all of it at once
            self.console.print(markdown(text))
        else:
            self._finish_stream(text)
        self._print_thought()

    def _print_thought(self) -> None:
        # After the text (thinking is not streamed), dim, one line: the answer stays in front.
        if self._thought is not None:
            self.console.print(self._thought)
            self._thought = None

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

    def tool_refused(self, call: ToolCall, notice: str) -> None:
        self._refused.add(call.id)
        self.console.print(note_line(f"⊘ {notice}"))

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        if call.id in self._refused:
            self._refused.discard(call.id)
            return
        self._running.pop(call.id, None)
        self.console.print(tool_entry(call.name, call.arguments, result, self.console.width))
        self.between()
        self._update()

    def compacting(self, automatic: bool) -> None:
        self._label = "compacting the conversation…"
        self._update()

    def compacted(self, result: Compaction) -> None:
        # Its line is the session's compaction note, shown at the next boundary.
        self._label = "thinking…"
        self.between()
        self._update()

    def compaction_failed(self, error: ModelError) -> None:
        self._label = "thinking…"
        self.console.print(note_line(f"⚠ could not compact the conversation: {error}"))
        self._update()

    # -- streaming -------------------------------------------------------------------

    def _finish_stream(self, text: str | None) -> None:
        """Print the rest of the streamed message (``text``: the whole, when known)."""
        stream = self._stream
        if stream is None:
            return
        if text is not None and text != stream.text:
            logger.debug("the streamed text differs from the message; showing the message")
            stream = MarkdownStream()
            stream.feed(text)
        stream.finish()
        self._print_new(stream.complete)
        self._stream = self._printed = None
        self._update()

    def _print_new(self, text: str) -> None:
        lines = self._printed.new_lines(text) if self._printed is not None else None
        if lines is not None:
            self.console.print(lines, end="")

    def pending_text(self, width: int) -> Text | None:
        """The last lines of the block being written, as the live area shows them."""
        stream = self._stream  # read once: the live area redraws from its own thread
        pending = stream.pending if stream is not None else ""
        if not pending.strip():
            return None
        lines = Text(pending.strip("\n")).wrap(self.console, width)
        keep = max(3, min(PENDING_LINES, self.console.height - 4))
        return Text("\n").join(lines[-keep:])

    # -- drawing ---------------------------------------------------------------------

    def _text(self) -> Text:
        if len(self._running) == 1:
            head, progress = next(iter(self._running.values()))
            line = f"{head} — {progress}" if progress else head
        elif self._running:
            line = f"{len(self._running)} tools running: " + ", ".join(self.running_calls())
        elif self._thinking:
            line = "writing…" if self._stream is not None else "thinking…"
        else:
            line = self._label
        width = max(20, self.console.width - 4 - len(CANCEL_HINT) - 1)
        if len(line) > width:
            line = line[: width - 1] + "…"
        return Text.assemble(line, " ", (CANCEL_HINT, "bright_black"))

    def _update(self) -> None:
        self._spinner.update(text=self._text())


class _LiveArea:
    """What the live area shows on each redraw: the text being written, then the spinner."""

    def __init__(self, view: TurnView) -> None:
        self.view = view

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        pending = self.view.pending_text(options.max_width)
        if pending is not None:
            yield pending
        yield self.view._spinner
        for line in self.view.side_lines():  # read at each redraw: they change as they run
            width = max(20, options.max_width - 1)
            yield Text(line if len(line) <= width else line[: width - 1] + "…", style="cyan")


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


__all__ = ["INDENT", "ConsoleLogHandler", "SafeConsole", "TurnView", "make_console", "tool_entry"]
