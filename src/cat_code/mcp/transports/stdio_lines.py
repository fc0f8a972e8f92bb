"""A child's stdout cut into newline-delimited JSON messages: the stdio transport's reader.

Design: fed the pipe's chunks as they arrive (on the event loop, no task of its own), it
decodes all complete lines of a chunk at once and parses each where it lies in that text,
without slicing it out first; the usual chunk (whole lines, nothing kept back) is not even
copied. Invariants: a message split anywhere, inside a UTF-8 sequence too, arrives whole;
a line that is not UTF-8 or not exactly one JSON value costs only itself (logged, skipped);
no more than ``max_message_bytes`` is ever held without a newline: past it, the buffer is
dropped and the owner told (it fails the connection).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

#: json's own scanner: parses one value at an offset of a longer text, so the lines of a
#: chunk are parsed where they are, without slicing each out first. (Set by
#: ``JSONDecoder.__init__``; the stubs do not declare it.)
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class StdoutLines:
    """Cuts one child's stdout into messages and hands each to ``deliver``, in order."""

    def __init__(
        self,
        name: str,
        max_message_bytes: int,
        deliver: Callable[[Any], None],
        too_large: Callable[[int], None],
    ) -> None:
        #: How logs name the child.
        self.name = name
        self.max_message_bytes = max_message_bytes
        #: The start of a line whose newline has not come yet.
        self.buffer = bytearray()
        #: Takes each parsed message (any JSON value: the owner checks it is a message).
        self._deliver = deliver
        #: Told how much was held when a line outgrew ``max_message_bytes``; after that,
        #: the owner stops feeding this reader.
        self._too_large = too_large

    def feed(self, data: bytes) -> None:
        """Take a chunk of stdout: its complete lines now, the rest with the next chunk."""
        buffer = self.buffer
        if not buffer and data.endswith(b"\n"):
            raw: bytes | bytearray = data  # the usual case: whole lines, nothing to keep
            text = _utf8(data)
        else:
            buffer += data
            if b"\n" not in data:
                if len(buffer) > self.max_message_bytes:
                    self._overflow()
                return
            end = buffer.rfind(b"\n") + 1
            # Decoded straight from the buffer: a 10 MB line is copied once, into its text.
            with memoryview(buffer) as view, view[:end] as complete:
                text = _utf8(complete)
            raw = buffer[:end] if text is None else b""
            del buffer[:end]
            if len(buffer) > self.max_message_bytes:  # a cap below one read's size
                self._overflow()
                return
        if text is not None:
            self._on_text(text)
        else:
            # Some line is not UTF-8: take the lines one by one so only that one is lost.
            for line in raw.split(b"\n"):
                if line:
                    self._on_line(line)

    def finish(self) -> None:
        """Stdout ended: what is left is a last line the child ended without a newline."""
        if self.buffer:
            self._on_line(bytes(self.buffer))
            self.buffer.clear()

    def _overflow(self) -> None:
        buffered = len(self.buffer)
        self.buffer = bytearray()
        self._too_large(buffered)

    def _on_text(self, text: str) -> None:
        """Every line of ``text`` (which ends with a newline), parsed in place."""
        start = 0
        size = len(text)
        while start < size:
            newline = text.find("\n", start)
            if newline == start:
                start += 1
                continue
            try:
                message, stop = _scan(text, start)
            except (StopIteration, ValueError, RecursionError):
                stop = -1
            if stop == newline:
                self._deliver(message)
            else:
                # Not exactly one JSON value on the line (whitespace around it, more after
                # it, or no JSON at all): the full parser takes the line alone and decides.
                self._on_line(text[start:newline])
            start = newline + 1

    def _on_line(self, line: str | bytes | bytearray) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
            if line.strip():
                logger.warning(
                    "%s: skipping stdout line that is not JSON-RPC: %.200r", self.name, line
                )
            return
        self._deliver(message)


def _utf8(raw: bytes | memoryview) -> str | None:
    try:
        return str(raw, "utf-8")
    except UnicodeDecodeError:
        return None


__all__ = ["StdoutLines"]
