"""Messages written to a child's stdin as lines, batched per event-loop iteration.

Design: the first message written in a loop iteration goes out at once (no added
latency); any more in the same iteration are joined and written when it ends, or as soon
as about `WRITE_BATCH_BYTES` have gathered, so 1000 calls started together cost a few
system calls instead of 1000, and the server starts on the first ones while we prepare
the rest. Invariants: lines go out in the order written; each is one compact JSON text
(no embedded newline); above `WRITE_HIGH_WATER` unsent bytes the pipe pauses us, and
`can_write` is an event writers wait on until it resumes (or the connection ends).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

from cat_code.mcp.transports.base import JsonObject

#: Pause writers above this much unsent data (asyncio's 64 KiB default stalls 1000 small calls).
WRITE_HIGH_WATER = 4 * 1024 * 1024
#: Lines written in one loop iteration go out together, in writes of about this size:
#: few system calls, yet the server starts on the first ones while we prepare the rest.
WRITE_BATCH_BYTES = 16 * 1024
#: Compact separators: no embedded newline can appear, and fewer bytes to move. Built
#: once (``json.dumps`` with options builds an encoder per call); no cycle check, as
#: messages are built from JSON-decoded data, which cannot hold a cycle.
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


class StdinWriter:
    """Writes messages to one child's stdin pipe, which it closes in the end."""

    def __init__(self, stdin: asyncio.WriteTransport, loop: asyncio.AbstractEventLoop) -> None:
        stdin.set_write_buffer_limits(high=WRITE_HIGH_WATER)
        self._stdin = stdin
        self._loop = loop
        #: Lines written since the last flush; None when no flush is scheduled.
        self._outbox: list[str] | None = None
        self._outbox_bytes = 0
        #: While the pipe is paused: set when writers may go on (None: not paused).
        self.can_write: asyncio.Event | None = None

    def write(self, message: JsonObject) -> None:
        """Send ``message`` as one line: now if it is the iteration's first, else batched."""
        stdin = self._stdin
        text = _encode(message)
        outbox = self._outbox
        if outbox is not None:
            outbox.append(text)
            self._outbox_bytes += len(text)  # ASCII (the encoder escapes the rest)
            if self._outbox_bytes >= WRITE_BATCH_BYTES:
                # Enough for the server to start on while we prepare the rest.
                stdin.write(_lines(outbox))
                outbox.clear()
                self._outbox_bytes = 0
            return
        stdin.write(_lines((text,)))
        self._outbox = []
        self._loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write what the iteration batched (a no-op once the pipe is closing)."""
        texts, self._outbox = self._outbox, None
        self._outbox_bytes = 0
        stdin = self._stdin
        if texts and not stdin.is_closing():
            stdin.write(_lines(texts))

    def close(self) -> None:
        """Write what is batched, then close stdin: the child sees EOF."""
        self.flush()
        self._stdin.close()

    def pause(self) -> None:
        """The pipe is above its high-water mark: writers wait on `can_write`."""
        if self.can_write is None:
            self.can_write = asyncio.Event()

    def resume(self) -> None:
        """Writers may go on (the pipe drained, or the connection ended)."""
        if self.can_write is not None:
            self.can_write.set()
            self.can_write = None


def _lines(texts: Sequence[str]) -> bytes:
    """Encoded messages as newline-terminated lines, in one bytes object."""
    return ("\n".join(texts) + "\n").encode()


__all__ = ["WRITE_BATCH_BYTES", "WRITE_HIGH_WATER", "StdinWriter"]
