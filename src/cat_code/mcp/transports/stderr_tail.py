"""The tail of a child's stderr: its last lines, kept for status and error messages.

Design: stderr is read as it comes (a child blocked on a full pipe would hang) and cut
into lines; only the last `STDERR_TAIL_LINES` non-blank ones are kept, each at most
`STDERR_LINE_MAX` characters. Invariants: the buffer never holds more than one line's
cut; an over-long line is kept once, by its start, and the rest of it up to its newline
is dropped, so one huge line cannot push every other line out of the tail.
"""

from __future__ import annotations

import logging
from collections import deque

logger = logging.getLogger(__name__)

#: How many of the last stderr lines are kept for status and error messages.
STDERR_TAIL_LINES = 20
#: A stderr line longer than this is cut; it is for humans and must not grow unbounded.
STDERR_LINE_MAX = 2000


class StderrTail:
    """The last lines of one child's stderr, fed its bytes as they arrive."""

    def __init__(self, name: str) -> None:
        #: How debug logs name the child.
        self.name = name
        #: The last non-blank lines, oldest first.
        self.lines: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._buffer = bytearray()
        #: Dropping the rest of an over-long line, up to its newline.
        self._cut = False

    def feed(self, data: bytes) -> None:
        """Take a chunk of stderr: its complete lines now, the rest with the next chunk."""
        buffer = self._buffer
        buffer += data
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            if self._cut:
                self._cut = False  # the end of a line whose start was kept
            else:
                self._line(buffer[start:end])
            start = end + 1
        del buffer[:start]
        if len(buffer) > STDERR_LINE_MAX:
            # An over-long line: keep its start once and drop the rest up to its newline.
            if not self._cut:
                self._line(buffer)
                self._cut = True
            buffer.clear()

    def flush(self) -> None:
        """Take the last line, which the child ended without a newline."""
        if self._buffer and not self._cut:
            self._line(self._buffer)
        self._buffer.clear()

    def last(self, count: int) -> list[str]:
        """The last ``count`` lines, oldest first."""
        return list(self.lines)[-count:]

    def _line(self, raw: bytes | bytearray) -> None:
        line = raw[:STDERR_LINE_MAX].decode(errors="replace").rstrip("\r")
        if line.strip():
            self.lines.append(line)
            logger.debug("%s stderr: %s", self.name, line)


__all__ = ["STDERR_LINE_MAX", "STDERR_TAIL_LINES", "StderrTail"]
