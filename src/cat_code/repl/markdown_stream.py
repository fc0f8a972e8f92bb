"""A streamed answer shown as it comes: complete Markdown blocks rendered, the rest raw.

`MarkdownStream` takes the text in whatever pieces it arrives and moves a boundary
forward over the blocks that are complete: a block (paragraph, list, table, code) ends
at a blank line outside a code fence once the next line cannot continue it (it is not
indented, and is not a list item after a list), and a code block ends with its closing
fence. A line's first character can already tell. Text before the boundary never
changes meaning as more arrives; text after it (`pending`) is shown raw until then.

`RenderedPrefix` renders the complete part whole, each time it grows, and hands out only
the lines not printed yet: printed lines are never redrawn (no flicker, nothing printed
twice), and the screen ends as if the whole answer had been rendered at once.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from rich.console import Console, RenderableType
from rich.segment import Segment, Segments

logger = logging.getLogger(__name__)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_LIST_STARTS = frozenset("-*+0123456789")


class MarkdownStream:
    """The text so far, and how much of it forms complete Markdown blocks."""

    def __init__(self) -> None:
        self.text = ""
        #: Length of the complete prefix.
        self.done = 0
        self._scanned = 0  # start of the first line not looked at yet
        self._fence: str | None = None  # the marker of the open code fence
        self._in_block = False  # a non-blank line since `done`
        self._list = False  # the current block starts with a list item
        self._blank = False  # a blank line ended the current block's last line

    @property
    def complete(self) -> str:
        return self.text[: self.done]

    @property
    def pending(self) -> str:
        return self.text[self.done :]

    def feed(self, piece: str) -> bool:
        """Add ``piece``; whether the complete prefix grew."""
        before = self.done
        self.text += piece
        while (end := self.text.find("\n", self._scanned)) >= 0:
            start, self._scanned = self._scanned, end + 1
            self._line(self.text[start:end], start)
        # The first character of the next line can be enough: after a blank line, one at
        # the margin ends the block, unless it may begin a list item after a list.
        head = self.text[self._scanned : self._scanned + 1]
        if self._blank and head.strip() and not (self._list and head in _LIST_STARTS):
            self._complete(self._scanned)
        return self.done > before

    def finish(self) -> None:
        """The answer is over: all of it counts as complete."""
        self.done = self._scanned = len(self.text)
        self._fence = None

    def _line(self, line: str, start: int) -> None:
        if self._fence is not None:
            stripped = line.strip()
            if stripped.startswith(self._fence) and not stripped.strip(self._fence[0]):
                self._fence = None
                self._complete(self._scanned)
            return
        if not line.strip():
            self._blank = self._in_block
            return
        if self._blank:
            continues = line[:1] in (" ", "\t") or (self._list and _LIST_ITEM.match(line))
            if not continues:
                self._complete(start)
            self._blank = False
        fence = _FENCE.match(line)
        if fence is not None:
            if self._in_block:  # a fence may interrupt a paragraph: that one is done
                self._complete(start)
            self._fence = fence.group(1)
        if not self._in_block:
            self._in_block = True
            self._list = _LIST_ITEM.match(line) is not None

    def _complete(self, position: int) -> None:
        self.done = position
        self._in_block = self._blank = False


class RenderedPrefix:
    """Prints a growing Markdown text one new line at a time."""

    def __init__(self, console: Console, render: Callable[[str], RenderableType]) -> None:
        self.console = console
        self.render = render
        self.lines_shown = 0

    def new_lines(self, text: str) -> Segments | None:
        """The rendered lines of ``text`` not shown yet (None when there are none)."""
        if not text.strip():
            return None
        lines = self.console.render_lines(self.render(text), self.console.options, pad=False)
        fresh = lines[self.lines_shown :]
        self.lines_shown = len(lines)
        if not fresh:
            return None
        return Segments([segment for line in fresh for segment in (*line, Segment.line())])


__all__ = ["MarkdownStream", "RenderedPrefix"]
