"""`OutputFile`: a job's output on disk, capped, the tail kept; reading what is new.

The job's stdout and stderr (one pipe) are copied here by its copier thread, so a job
that writes gigabytes fills neither memory (fixed-size chunks) nor the disk: once the
file passes ``cap`` bytes, it is rewritten as a one-line note saying how much was
dropped and the last ``cap // 2`` bytes (copied in chunks, then renamed over the file).
Offsets are counted in bytes of the whole stream, so a reader that asks for "what is
new since offset N" learns how much it missed when N fell out of the kept part.
Writes and reads hold one lock: a reader never sees a file half rewritten.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

#: The most a job's output file holds before its head is dropped.
DEFAULT_OUTPUT_CAP = 100 * 1024 * 1024
#: Copying the kept tail into the new file, this much at a time.
_COPY_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class OutputSlice:
    """What a read found: the bytes, and how many were skipped before them."""

    data: bytes
    #: Bytes between the reader's offset and ``data``: dropped at the cap, or cut because
    #: more was new than the reader wanted (the tail is what it gets).
    skipped: int
    #: The stream offset after ``data`` (the reader's next offset).
    end: int


class OutputFile:
    """The output of one job, written by one copier thread, read by anyone."""

    def __init__(self, path: Path, *, cap: int = DEFAULT_OUTPUT_CAP) -> None:
        self.path = path
        self.cap = max(cap, 2)
        self._lock = threading.Lock()
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        #: Bytes of the stream dropped from the head so far.
        self.dropped = 0
        #: Bytes of the stream in the file now (after the note line, if any).
        self.kept = 0
        #: Length of the note line at the top of the file (0 before the first cut).
        self._note_len = 0

    @property
    def total(self) -> int:
        """Every byte the job has written so far."""
        return self.dropped + self.kept

    def write(self, data: bytes) -> None:
        """Append ``data``; past the cap, keep only the tail. Raises OSError."""
        with self._lock:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            self.kept += len(data)
            if self._note_len + self.kept > self.cap:
                self._keep_tail()

    def _keep_tail(self) -> None:
        keep = self.cap // 2
        drop = self.kept - keep
        self.dropped += drop
        note = (
            f"[cat-code: this job wrote more than {self.cap} bytes; the first "
            f"{self.dropped} were dropped, the last {keep} are kept]\n"
        ).encode()
        temporary = self.path.with_name(self.path.name + ".tmp")
        out = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
        try:
            os.write(out, note)
            with open(self.path, "rb") as source:
                source.seek(self._note_len + drop)
                while chunk := source.read(_COPY_CHUNK):
                    os.write(out, chunk)
            os.replace(temporary, self.path)
        except BaseException:
            os.close(out)
            raise
        os.close(self._fd)
        self._fd = out
        self._note_len = len(note)
        self.kept = keep

    def read_from(self, offset: int, limit: int) -> OutputSlice:
        """What the job wrote after stream offset ``offset``: at most the last ``limit``
        bytes of it. Raises OSError."""
        with self._lock:
            total = self.total
            start = max(offset, self.dropped, total - limit)
            with open(self.path, "rb") as source:
                source.seek(self._note_len + start - self.dropped)
                data = source.read(total - start)
        return OutputSlice(data, skipped=start - offset, end=start + len(data))

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


def last_lines(data: bytes, count: int) -> str:
    """The last ``count`` lines of ``data``, decoded (undecodable bytes replaced)."""
    text = data.decode(errors="replace").rstrip("\n")
    return "\n".join(text.splitlines()[-count:])


__all__ = ["DEFAULT_OUTPUT_CAP", "OutputFile", "OutputSlice", "last_lines"]
