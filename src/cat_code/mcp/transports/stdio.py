"""stdio transport: a child process speaking newline-delimited JSON-RPC.

Design: the child runs in its own session (so its process group holds every descendant
an ``npx``/``uvx``/shell wrapper starts) with an allow-listed environment. One reader —
the asyncio subprocess protocol's data callbacks, so no task switch per message — splits
stdout on ``\\n`` (a chunk's complete lines decoded once, parsed in place) and resolves
the waiter for each response id. The first message written in a loop iteration goes out
at once, the rest of that iteration in batched writes. Invariants: a waiter is registered
before its request is written and removed on every path; a line that is not JSON is
logged and skipped; stderr is always drained into a bounded tail. When the child exits,
or a stdout line grows past ``max_message_bytes`` without a newline (`MessageTooLarge`,
and the child is closed), every waiter fails at once and ``on_close`` hears why, once.

Close: stdin EOF, 0.1 s grace, SIGTERM to the group, 2 s grace, SIGKILL (``hurry`` skips
the graces) — nothing in the group outlives `close`. A group is watched with the cheap
``killpg(pgid, 0)`` on the loop, backing off; only one it still finds is scanned in /proc,
on a thread, to tell zombies (a container init may not reap) from the living. Every group
started here stays in a module registry until seen gone: a cancelled close SIGKILLs it at
once, and an ``atexit`` hook SIGKILLs any group a skipped close left behind. The registry
is told to the transport's `ProcessGroupObserver` (cat-code's host mirrors it on disk, so
a run that is killed outright, ``kill -9``, leaves records a later run reaps).

`spawn` starts the child before anyone listens (so its start-up overlaps the caller's):
what it says, and its end, are held and handed over, in order, when `start` attaches
the handlers. A spawned transport is owned like a started one: `close` ends its group.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import signal
from collections import deque
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cat_code.mcp.errors import (
    ConnectError,
    MessageTooLarge,
    ProcessExited,
    TransportClosed,
    TransportError,
)
from cat_code.mcp.transports.base import (
    MAX_MESSAGE_BYTES,
    NO_CONTEXT,
    CloseHandler,
    JsonObject,
    MessageHandler,
    RequestContext,
    TransportKind,
    dispatch,
    hand_up,
    ignore_close,
    ignore_message,
    size_text,
)
from cat_code.mcp.transports.process_group import (
    group_gone as _group_gone,
    signal_group as _signal_group,
    wait_group_gone as _wait_group_gone,
)

if TYPE_CHECKING:
    from cat_code.mcp.transports.base import Transport

logger = logging.getLogger(__name__)

#: The parent's variables a server inherits; anything else (API keys!) must be given in ``env``.
INHERITED_ENV_VARS = (
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ",
)  # fmt: skip
#: A well-behaved server exits on stdin EOF, within milliseconds; one that has not after
#: this long is one that ignores EOF (many Node servers do), and it gets SIGTERM. Short,
#: because a finished command would otherwise sit this long on every such server.
STDIN_CLOSE_GRACE_S = 0.1
#: The grace for a server its `EofMemory` says ignored EOF last time: EOF still comes
#: first, but a second wait for the same answer buys nothing; a server that has learned
#: to exit on EOF is still seen doing so (and remembered) when it is this quick.
REMEMBERED_EOF_GRACE_S = 0.01
#: After SIGTERM, time for the group to clean up before SIGKILL.
TERMINATE_GRACE_S = 2.0
#: After SIGKILL, how long to wait for the kernel to finish the group off.
KILL_WAIT_S = 1.0
#: After the child exits, time for its last stdout bytes to arrive before waiters fail.
EXIT_FLUSH_GRACE_S = 0.5
#: How many of the last stderr lines are kept for status and error messages.
STDERR_TAIL_LINES = 20
#: A stderr line longer than this is cut; it is for humans and must not grow unbounded.
STDERR_LINE_MAX = 2000
#: Pause writers above this much unsent data (asyncio's 64 KiB default stalls 1000 small calls).
WRITE_HIGH_WATER = 4 * 1024 * 1024
#: Lines written in one loop iteration go out together, in writes of about this size:
#: few system calls, yet the server starts on the first ones while we prepare the rest.
WRITE_BATCH_BYTES = 16 * 1024
#: Compact separators: no embedded newline can appear, and fewer bytes to move. Built
#: once (``json.dumps`` with options builds an encoder per call); no cycle check, as
#: messages are built from JSON-decoded data, which cannot hold a cycle.
_encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
#: json's own scanner: parses one value at an offset of a longer text, so the lines of a
#: chunk are parsed where they are, without slicing each out first. (Set by
#: ``JSONDecoder.__init__``; the stubs do not declare it.)
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def child_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed part of our environment, with the entry's ``env`` merged over it."""
    env = {
        key: value
        for key in INHERITED_ENV_VARS
        if (value := os.environ.get(key)) is not None and not value.startswith("()")
    }
    env.update(extra)
    return env


class EofMemory(Protocol):
    """Remembers, across runs, which servers ignore stdin EOF (keyed by whatever the
    implementation derives from the command line: keep secrets out of it)."""

    def ignores_eof(self, command: Sequence[str], cwd: str | None) -> bool:
        """Whether this command ignored EOF the last time it was closed."""

    def remember(self, command: Sequence[str], cwd: str | None, ignores: bool) -> None:
        """What this close saw (called only when it differs from what was remembered)."""


class ProcessGroupObserver(Protocol):
    """Told of each child process group's life, so a host can keep a record on disk that
    outlives a ``kill -9`` of this process (cat-code's run records)."""

    def started(self, pgid: int) -> None:
        """The child (the group's leader) exists."""

    def settled(self, pgid: int) -> None:
        """The child spoke: a wrapper (``sh -c 'exec ...'``) has become the server by now."""

    def ended(self, pgid: int) -> None:
        """The whole group is gone."""


#: Process groups started here and not yet known to be gone (pgid = the child's pid),
#: each with the observer of the transport that started it.
_live_groups: dict[int, ProcessGroupObserver | None] = {}


def _group_ended(pgid: int) -> None:
    observer = _live_groups.pop(pgid, None)
    if observer is not None:
        observer.ended(pgid)


def kill_registered_groups() -> None:
    """SIGKILL every process group a `StdioTransport` started and no close saw gone.

    Runs at interpreter exit, for any path where cancellation skipped a close.
    """
    for pgid in list(_live_groups):
        _signal_group(pgid, signal.SIGKILL)
        _group_ended(pgid)


atexit.register(kill_registered_groups)


class StdioTransport:
    """A `Transport` over a child process's stdin and stdout."""

    kind: TransportKind = "stdio"
    can_listen: bool = False

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        name: str = "",
        shown: str = "",
        shown_command: str = "",
        shown_cwd: str = "",
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        observer: ProcessGroupObserver | None = None,
        eof_memory: EofMemory | None = None,
    ) -> None:
        self.command = command
        #: How logs name the command line: the host passes its entry as written, masked
        #: (``--token ${TOKEN}``, never the expanded secret); default the words as given.
        self.shown = shown or " ".join([command, *args])
        #: How errors name the program and the working directory, for the same reason: as
        #: written (``/opt/${TOKEN}/server``), never expanded; default as given.
        self.shown_command = shown_command or command
        self.shown_cwd = shown_cwd or cwd
        #: Told when the child's process group starts, speaks and ends (may be None).
        self.observer = observer
        #: Which servers ignored EOF before: their close waits `REMEMBERED_EOF_GRACE_S`.
        self.eof_memory = eof_memory
        #: The EOF grace the last close used (None: not closed, or hurried).
        self.eof_grace_used: float | None = None
        self.args = tuple(args)
        self.env = dict(env or {})
        self.cwd = cwd
        self.name = name or self.shown_command
        self.max_message_bytes = max_message_bytes
        self.pid: int | None = None
        self._on_message: MessageHandler = ignore_message
        self._on_close: CloseHandler = ignore_close
        #: Between `spawn` and `start`: the child's messages, held for the handler to come.
        self._held: list[JsonObject] | None = None
        #: Between `spawn` and `start`: why the connection ended, if it did.
        self._held_close: str | None = None
        self._process: asyncio.SubprocessTransport | None = None
        self._protocol: _ChildProtocol | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._pending: dict[Any, asyncio.Future[JsonObject]] = {}
        self._buffer = bytearray()
        self._stderr_buffer = bytearray()
        #: Dropping the rest of an over-long stderr line, up to its newline.
        self._stderr_cut = False
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._closed_error: TransportError | None = None
        #: Why the connection ended by itself (None while it lives, or after our close).
        self._closed_reason: str | None = None
        self._stdout_eof = False
        self._stderr_eof = False
        self._returncode: int | None = None
        self._exited = asyncio.Event()
        self._fail_handle: asyncio.TimerHandle | None = None
        self._can_write: asyncio.Event | None = None
        #: Lines written since the last flush; None when no flush is scheduled.
        self._outbox: list[str] | None = None
        self._outbox_bytes = 0
        self._loop: asyncio.AbstractEventLoop  # set by start()
        self._close_task: asyncio.Task[None] | None = None
        #: Skip the close's grace periods (`hurry`).
        self._hurried = False
        #: The grace period the close is waiting out, which `hurry` ends at once.
        self._grace: asyncio.Timeout | None = None

    # -- Transport ---------------------------------------------------------------

    async def spawn(self) -> None:
        """Start the child now; what it says (and its exit) is held until `start`.

        For a front end that starts its servers before it has built what talks to them,
        so a server's own start-up overlaps ours. The transport is then owned as if
        started: its `close` (or `kill_now`) ends the group, `start` or no `start`.
        """
        held: list[JsonObject] = []
        await self._spawn(held.append, self._hold_close)
        self._held = held

    @property
    def spawned(self) -> bool:
        """Spawned (`spawn`) and not yet started: `start` will only attach its handlers."""
        return self._held is not None

    async def start(self, on_message: MessageHandler, on_close: CloseHandler) -> None:
        held = self._held
        if held is None:
            await self._spawn(on_message, on_close)
            return
        self._held = None
        self._on_message = on_message
        self._on_close = on_close
        # What the child said before anyone listened, in order; then its end, if it came.
        for message in held:
            hand_up(message, on_message, self.name)
        if self._held_close is not None:
            reason, self._held_close = self._held_close, None
            try:
                on_close(reason)
            except Exception:
                logger.exception("%s: close handler failed", self.name)

    def _hold_close(self, reason: str) -> None:
        self._held_close = reason

    async def _spawn(self, on_message: MessageHandler, on_close: CloseHandler) -> None:
        if self._process is not None or self._closed_error is not None:
            # A second child would have no owner: nothing would ever close it.
            raise RuntimeError(f"{self.name}: transport already started (or closed)")
        self._on_message = on_message
        self._on_close = on_close
        if self.cwd is not None and not Path(self.cwd).is_dir():
            raise ConnectError(f"working directory does not exist: {self.shown_cwd}")
        loop = self._loop = asyncio.get_running_loop()
        try:
            process, _ = await loop.subprocess_exec(
                self._make_protocol,
                self.command,
                *self.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=child_environment(self.env),
                cwd=self.cwd,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise ConnectError(f"command not found: {self.shown_command}") from exc
        except PermissionError as exc:
            raise ConnectError(f"permission denied running {self.shown_command}") from exc
        except OSError as exc:
            # Not ``str(exc)``: it quotes the expanded file name.
            reason = exc.strerror or type(exc).__name__
            raise ConnectError(f"cannot start {self.shown_command}: {reason}") from exc
        self._process = process
        self.pid = process.get_pid()
        stdin = process.get_pipe_transport(0)
        assert isinstance(stdin, asyncio.WriteTransport)
        stdin.set_write_buffer_limits(high=WRITE_HIGH_WATER)
        self._stdin = stdin
        logger.debug("%s: started pid %s: stdio: %s", self.name, self.pid, self.shown)

    async def request(
        self, message: JsonObject, context: RequestContext = NO_CONTEXT
    ) -> JsonObject:
        if self._closed_error is not None:
            raise self._closed()
        request_id = message["id"]
        future: asyncio.Future[JsonObject] = self._loop.create_future()
        self._pending[request_id] = future
        try:
            self._write(message)
            if self._can_write is not None:
                await self._can_write.wait()
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def send(self, message: JsonObject, context: RequestContext = NO_CONTEXT) -> None:
        if self._closed_error is not None:
            raise self._closed()
        self._write(message)
        if self._can_write is not None:
            await self._can_write.wait()

    async def listen(self, context: RequestContext) -> None:
        """A child has no separate stream of its own messages: they come on stdout."""

    async def release(self, context: RequestContext) -> None:
        """A child keeps no state a request could release."""

    async def close(self) -> None:
        self._begin_close()
        assert self._close_task is not None
        # Shielded: a cancelled caller must not leave the process group half-terminated;
        # the shutdown goes on, and if it is cancelled itself it SIGKILLs the group.
        await asyncio.shield(self._close_task)

    def hurry(self) -> None:
        self._hurried = True
        if self._close_task is not None and not self._close_task.done():
            self.kill_now()
            grace = self._grace
            if grace is not None and not grace.expired():
                grace.reschedule(0)  # a time already past: the grace ends now

    def kill_now(self) -> None:
        """SIGKILL the process group at once, without waiting (for last-resort paths)."""
        self._hurried = True
        if self.pid is not None and self.pid in _live_groups:
            logger.debug("%s: sending SIGKILL to process group %s", self.name, self.pid)
            _signal_group(self.pid, signal.SIGKILL)

    @property
    def closed_reason(self) -> str | None:
        return self._closed_reason

    def describe(self) -> str:
        return "stdio: " + " ".join([self.command, *self.args])

    def diagnostics(self) -> list[str]:
        return list(self._stderr_tail)

    @property
    def returncode(self) -> int | None:
        return self._returncode

    def _make_protocol(self) -> _ChildProtocol:
        self._protocol = _ChildProtocol(self)
        return self._protocol

    # -- writing -----------------------------------------------------------------

    def _write(self, message: JsonObject) -> None:
        stdin = self._stdin
        assert stdin is not None, "start() first"
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
        # The first line of a loop iteration goes out at once (no added latency); any
        # more in the same iteration are joined into one write when it ends, so 1000
        # calls started together cost a few system calls instead of 1000.
        stdin.write(_lines((text,)))
        self._outbox = []
        self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        texts, self._outbox = self._outbox, None
        self._outbox_bytes = 0
        stdin = self._stdin
        if texts and stdin is not None and not stdin.is_closing():
            stdin.write(_lines(texts))

    def _pause_writing(self) -> None:
        if self._can_write is None:
            self._can_write = asyncio.Event()

    def _resume_writing(self) -> None:
        if self._can_write is not None:
            self._can_write.set()
            self._can_write = None

    # -- reading (called by _ChildProtocol on the event loop) ----------------------

    def _on_stdout(self, data: bytes) -> None:
        buffer = self._buffer
        if not buffer and data.endswith(b"\n"):
            raw: bytes | bytearray = data  # the usual case: whole lines, nothing to keep
            text = _utf8(data)
        else:
            buffer += data
            if b"\n" not in data:
                if len(buffer) > self.max_message_bytes:
                    self._too_large()
                return
            end = buffer.rfind(b"\n") + 1
            # Decoded straight from the buffer: a 10 MB line is copied once, into its text.
            with memoryview(buffer) as view, view[:end] as complete:
                text = _utf8(complete)
            raw = buffer[:end] if text is None else b""
            del buffer[:end]
            if len(buffer) > self.max_message_bytes:  # a cap below one read's size
                self._too_large()
                return
        if text is not None:
            self._on_text(text)
        else:
            # Some line is not UTF-8: take the lines one by one so only that one is lost.
            for line in raw.split(b"\n"):
                if line:
                    self._on_line(line)

    def _too_large(self) -> None:
        """A line past the cap: fail the connection, drop the rest of stdout, close."""
        buffered = len(self._buffer)
        self._buffer = bytearray()
        assert self._protocol is not None
        self._protocol.on_stdout = _drop
        self._end(
            MessageTooLarge(
                f"server sent a single message larger than {size_text(self.max_message_bytes)}"
                f" ({size_text(buffered)} without a newline so far); connection closed"
            )
        )
        self._begin_close()

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
                self._on_parsed(message)
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
        self._on_parsed(message)

    def _on_parsed(self, message: Any) -> None:
        dispatch(message, self._pending, self._on_message, self.name)

    def _on_stderr(self, data: bytes) -> None:
        buffer = self._stderr_buffer
        buffer += data
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            if self._stderr_cut:
                self._stderr_cut = False  # the end of a line whose start was kept
            else:
                self._stderr_line(buffer[start:end])
            start = end + 1
        del buffer[:start]
        if len(buffer) > STDERR_LINE_MAX:
            # An over-long line: keep its start once and drop the rest up to its newline,
            # so one huge line cannot push every other line out of the tail.
            if not self._stderr_cut:
                self._stderr_line(buffer)
                self._stderr_cut = True
            buffer.clear()

    def _flush_stderr(self) -> None:
        """Take the last stderr line, which the child ended without a newline."""
        if self._stderr_buffer and not self._stderr_cut:
            self._stderr_line(self._stderr_buffer)
        self._stderr_buffer.clear()

    def _stderr_line(self, raw: bytes | bytearray) -> None:
        line = raw[:STDERR_LINE_MAX].decode(errors="replace").rstrip("\r")
        if line.strip():
            self._stderr_tail.append(line)
            logger.debug("%s stderr: %s", self.name, line)

    def _on_stdout_eof(self) -> None:
        self._stdout_eof = True
        if self._buffer:
            self._on_line(bytes(self._buffer))
            self._buffer.clear()
        self._schedule_failure()

    def _on_stderr_eof(self) -> None:
        self._stderr_eof = True
        self._flush_stderr()
        self._schedule_failure()

    def _on_exit(self) -> None:
        assert self._process is not None
        self._returncode = self._process.get_returncode()
        self._flush_stderr()
        logger.debug("%s: process exited with code %s", self.name, self._returncode)
        self._exited.set()
        self._schedule_failure()

    def _schedule_failure(self) -> None:
        """Fail every waiter once the process and both its pipes are done, or after a grace."""
        if self._closed_error is not None:
            return
        if self._stdout_eof and self._stderr_eof and self._exited.is_set():
            self._end(self._exit_error())
        elif self._fail_handle is None and (self._stdout_eof or self._exited.is_set()):
            # stderr EOF alone is no end: a server may close or redirect its stderr.
            loop = asyncio.get_running_loop()
            self._fail_handle = loop.call_later(
                EXIT_FLUSH_GRACE_S, lambda: self._end(self._exit_error())
            )

    def _exit_error(self) -> ProcessExited:
        if self._returncode is None:
            what = "closed its stdout"
        elif self._returncode < 0:
            what = f"was killed by signal {-self._returncode}"
        else:
            what = f"exited with code {self._returncode}"
        message = f"server process {what}"
        tail = [line for line in self._stderr_tail if line.strip()][-5:]
        if tail:
            message += "; last stderr: " + " | ".join(tail)
        return ProcessExited(message, self._returncode)

    def _end(self, error: TransportError) -> None:
        """The connection ended by itself: fail every waiter, and say why, once."""
        if self._closed_error is not None:
            return  # already ended, or closed by us: no second word
        self._closed_reason = str(error)
        self._fail_all(error)
        try:
            self._on_close(self._closed_reason)
        except Exception:
            logger.exception("%s: close handler failed", self.name)

    def _fail_all(self, error: TransportError) -> None:
        if self._fail_handle is not None:
            self._fail_handle.cancel()
            self._fail_handle = None
        if self._closed_error is None:
            self._closed_error = error
        for future in self._pending.values():
            if not future.done():
                future.set_exception(self._closed())
        self._resume_writing()

    def _closed(self) -> TransportError:
        """A fresh copy of the closing error (one exception object per raise site)."""
        error = self._closed_error
        assert error is not None
        if isinstance(error, ProcessExited):
            return ProcessExited(str(error), error.returncode)
        if isinstance(error, MessageTooLarge):
            return MessageTooLarge(str(error))
        return TransportClosed(str(error))

    # -- shutdown ------------------------------------------------------------------

    def _begin_close(self) -> None:
        task = self._close_task
        # A shutdown cancelled by someone else already SIGKILLed the group; a new close
        # goes on from there (hurried: no graces) to reap the child and free its pipes.
        if task is None or task.cancelled():
            self._close_task = asyncio.ensure_future(self._shutdown())

    async def _shutdown(self) -> None:
        try:
            await self._end_child()
        except BaseException:
            # Cancelled mid-way (asyncio.run cancels every task as it ends): whatever wait
            # was skipped, the group must not outlive us. A signal needs no await.
            self.kill_now()
            raise

    async def _end_child(self) -> None:
        self._fail_all(TransportClosed("connection closed"))
        process = self._process
        if process is None:
            return
        pgid = self.pid
        assert pgid is not None
        if self._stdin is not None:
            self._flush()
            self._stdin.close()
        if not self._hurried:
            await self._eof_grace()
        gone = await _group_gone(pgid)
        if not gone and not self._hurried:
            logger.debug("%s: sending SIGTERM to process group %s", self.name, pgid)
            _signal_group(pgid, signal.SIGTERM)
            gone = await self._wait_grace(_wait_group_gone(pgid), TERMINATE_GRACE_S)
        if not gone:
            logger.debug("%s: sending SIGKILL to process group %s", self.name, pgid)
            _signal_group(pgid, signal.SIGKILL)
            gone = await _within(_wait_group_gone(pgid), KILL_WAIT_S)
        if gone:
            _group_ended(pgid)
        else:  # stays registered: the exit hook tries SIGKILL once more
            logger.warning("%s: process group %s outlived SIGKILL", self.name, pgid)
        # A killed child is a zombie until the event loop's watcher reaps it: wait for that,
        # so `returncode` is known and process.close() does not reap it behind the watcher.
        await _within(self._exited.wait(), KILL_WAIT_S)
        process.close()
        if self._fail_handle is not None:
            self._fail_handle.cancel()

    async def _eof_grace(self) -> None:
        """Give the child its chance to exit on stdin EOF (already sent), and remember
        whether it took it when that differs from last time."""
        memory = self.eof_memory
        command = (self.command, *self.args)
        known = memory is not None and memory.ignores_eof(command, self.cwd)
        grace = REMEMBERED_EOF_GRACE_S if known else STDIN_CLOSE_GRACE_S
        self.eof_grace_used = grace
        exited = await self._wait_grace(self._exited.wait(), grace)
        if memory is not None and not self._hurried and exited == known:
            memory.remember(command, self.cwd, not exited)

    async def _wait_grace(self, waiting: Coroutine[Any, Any, Any], seconds: float) -> bool:
        """Whether ``waiting`` finished within a grace period, which `hurry` cuts short."""
        try:
            async with asyncio.timeout(seconds) as grace:
                self._grace = grace
                await waiting
        except TimeoutError:
            return False
        finally:
            self._grace = None
        return True


class _ChildProtocol(asyncio.SubprocessProtocol):
    """Routes the child's pipe events to its `StdioTransport`."""

    def __init__(self, owner: StdioTransport) -> None:
        self._owner = owner
        #: Where stdout goes: `_first_stdout` once, then the owner (`_drop` once the
        #: connection failed on an over-long line).
        self.on_stdout: Callable[[bytes], None] = self._first_stdout

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Called before subprocess_exec returns: a child that exits at once must already
        # find its transport here, and a start cancelled from now on leaves a child (and
        # its group) that close() must be able to end.
        assert isinstance(transport, asyncio.SubprocessTransport)
        self._owner._process = transport
        self._owner.pid = pid = transport.get_pid()
        observer = self._owner.observer
        _live_groups[pid] = observer
        if observer is not None:
            observer.started(pid)

    def _first_stdout(self, data: bytes) -> None:
        # The child speaks: a wrapper (``sh -c 'exec ...'``) has become the server by now,
        # so its record gets the command line a later reap will find.
        self.on_stdout = self._owner._on_stdout
        if self._owner.pid is not None and self._owner.observer is not None:
            self._owner.observer.settled(self._owner.pid)
        self.on_stdout(data)

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        assert isinstance(data, bytes)
        if fd == 1:
            self.on_stdout(data)
        else:
            self._owner._on_stderr(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self._owner._on_stdout_eof()
        elif fd == 2:
            self._owner._on_stderr_eof()

    def process_exited(self) -> None:
        self._owner._on_exit()

    def pause_writing(self) -> None:
        self._owner._pause_writing()

    def resume_writing(self) -> None:
        self._owner._resume_writing()


def _lines(texts: Sequence[str]) -> bytes:
    """Encoded messages as newline-terminated lines, in one bytes object."""
    return ("\n".join(texts) + "\n").encode()


def _utf8(raw: bytes | memoryview) -> str | None:
    try:
        return str(raw, "utf-8")
    except UnicodeDecodeError:
        return None


def _drop(data: bytes) -> None:
    """Stdout after the connection failed: still read, so the child never blocks on it."""


async def _within(waiting: Coroutine[Any, Any, Any], seconds: float) -> bool:
    """Whether ``waiting`` finished within ``seconds``."""
    try:
        async with asyncio.timeout(seconds):
            await waiting
    except TimeoutError:
        return False
    return True


if TYPE_CHECKING:

    def _is_a_transport(transport: StdioTransport) -> Transport:
        return transport
