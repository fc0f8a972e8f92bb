"""A hook's child process, started by ``posix_spawn`` and watched through a pidfd.

Why not `asyncio.create_subprocess_exec`: with ``start_new_session`` CPython forks
(it uses ``posix_spawn`` only without one), and a fork from a busy agent process was
measured 2-3× slower than a ``posix_spawn`` from the same place; asyncio also starts a
watcher thread per child. ``posix_spawn`` with ``setsid`` starts the hook in its own
session (so its process group is its own), a pidfd in the event loop says when it exits,
and stdin, stdout and stderr are non-blocking pipes served by the loop's readers and writer.

Invariants: `communicate` reaps the child before it returns; when it raises (a timeout, a
cancel) it has removed its readers and writer and closed the pipes, and the caller
awaits `end`, which ends the group and reaps the child. Every descriptor is closed once
(a number may be reused after). `end_group` signals the hook's whole group, never
cat-code's. `available` says whether this platform has what it needs (Linux: pidfd);
elsewhere the runner uses asyncio.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping

#: Bytes read per wake-up (a pipe holds 64 KiB on Linux).
_CHUNK = 1 << 16


def available() -> bool:
    return hasattr(os, "pidfd_open") and hasattr(os, "posix_spawn")


class HookProcess:
    """One spawned hook (see the module docstring)."""

    def __init__(self, argv: list[str], env: Mapping[str, str]) -> None:
        child_in, stdin = os.pipe()
        stdout, child_out = os.pipe()
        stderr, child_err = os.pipe()
        try:
            self.pid = os.posix_spawn(
                argv[0],
                argv,
                env,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, child_in, 0),
                    (os.POSIX_SPAWN_DUP2, child_out, 1),
                    (os.POSIX_SPAWN_DUP2, child_err, 2),
                ],
                setsid=True,
            )
        except BaseException:
            for fd in (stdin, stdout, stderr):
                os.close(fd)
            raise
        finally:
            for fd in (child_in, child_out, child_err):
                os.close(fd)
        self._stdin, self._stdout, self._stderr = stdin, stdout, stderr
        #: The descriptors still open (each closed once: a number may be reused after).
        self._open = {stdin, stdout, stderr}
        self.returncode: int | None = None
        try:
            for fd in self._open:
                os.set_blocking(fd, False)
            self._pidfd = os.pidfd_open(self.pid)
        except OSError:  # out of descriptors: the hook goes at once, nothing is left open
            self.end_group(signal.SIGKILL)
            os.waitpid(self.pid, 0)
            for fd in (stdin, stdout, stderr):
                self._close(fd)
            raise
        self._open.add(self._pidfd)

    async def communicate(self, data: bytes, limit: int) -> tuple[bytes, bytes]:
        """Write ``data`` to stdin, read stdout and stderr (at most ``limit`` bytes of each
        kept) until both end and the process exits, and reap it. On an exception (a
        timeout, a cancel) the pipes are closed and the process is left to `end`."""
        loop = asyncio.get_running_loop()
        outputs = {self._stdout: bytearray(), self._stderr: bytearray()}
        reading = set(outputs)
        drained, exited = loop.create_future(), loop.create_future()
        pending = memoryview(data)

        def read(fd: int) -> None:
            try:
                chunk = os.read(fd, _CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if chunk:
                kept = outputs[fd]
                kept += chunk[: max(0, limit - len(kept))]
                return
            loop.remove_reader(fd)
            reading.discard(fd)
            self._close(fd)
            if not reading and not drained.done():
                drained.set_result(None)

        def write() -> None:
            nonlocal pending
            try:
                pending = pending[os.write(self._stdin, pending) :]
            except BlockingIOError:
                return
            except OSError:  # the hook exited or closed stdin without reading it: fine
                pending = pending[:0]
            if not pending:
                loop.remove_writer(self._stdin)
                self._close(self._stdin)

        loop.add_reader(self._pidfd, _settle, exited)
        for fd in outputs:
            loop.add_reader(fd, read, fd)
        loop.add_writer(self._stdin, write)
        try:
            await drained
            await exited
        finally:
            loop.remove_reader(self._pidfd)
            loop.remove_writer(self._stdin)
            for fd in (self._stdin, *reading):
                loop.remove_reader(fd)
                self._close(fd)
        self._reap(0)
        return bytes(outputs[self._stdout]), bytes(outputs[self._stderr])

    async def end(self, grace_s: float) -> None:
        """SIGTERM the hook's whole group, give it ``grace_s``, SIGKILL what is left of
        the group, and reap the hook."""
        if self.returncode is None:
            self.end_group(signal.SIGTERM)
            try:
                async with asyncio.timeout(grace_s):
                    await self._exited()
            except TimeoutError:
                pass
        self.end_group(signal.SIGKILL)  # what the hook started may outlive it
        if self.returncode is None:
            await self._exited()
            self._reap(0)

    async def _exited(self) -> None:
        loop = asyncio.get_running_loop()
        gone = loop.create_future()
        loop.add_reader(self._pidfd, _settle, gone)
        try:
            await gone
        finally:
            loop.remove_reader(self._pidfd)

    def _reap(self, flags: int) -> None:
        pid, status = os.waitpid(self.pid, flags)
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)
            self._close(self._pidfd)

    def end_group(self, sig: signal.Signals) -> None:
        """Send ``sig`` to the hook's whole process group (its own session)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def _close(self, fd: int) -> None:
        if fd in self._open:
            self._open.discard(fd)
            os.close(fd)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


__all__ = ["HookProcess", "available"]
