"""Drive the REPL in a pseudo-terminal (pexpect) and read its screen output as plain text.

The REPL draws with escape sequences (colours, the spinner, prompt_toolkit's redraws);
`Terminal.wait_for` matches against the output with those stripped, from where the
last match ended, bounded by a timeout (pexpect's own reads), so tests wait on what is
shown, never on time.
"""

from __future__ import annotations

import re
import signal
import time
from pathlib import Path

import pexpect

#: CSI and OSC sequences, charset selections, keypad modes, bare carriage returns.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>]|\r"
)


def plain(text: str) -> str:
    return _ANSI.sub("", text)


class Terminal:
    """One REPL process on a pty."""

    def __init__(self, command: str, args: list[str], *, env: dict[str, str], cwd: Path) -> None:
        env = {**env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "120"}
        self.child = pexpect.spawn(
            command, args, env=env, cwd=str(cwd), dimensions=(50, 120), encoding="utf-8"
        )
        self.raw = ""
        self._pos = 0

    @property
    def screen(self) -> str:
        return plain(self.raw)

    def wait_for(self, text: str, timeout: float = 15.0) -> str:
        """Block until ``text`` appears after the previous match; return what came before it."""
        # One deadline for the whole wait: a spinner keeps output flowing, so a per-read
        # timeout alone would never fire.
        deadline = time.monotonic() + timeout
        while True:
            found = self.screen.find(text, self._pos)
            if found >= 0:
                before = self.screen[self._pos : found]
                self._pos = found + len(text)
                return before
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise pexpect.TIMEOUT("deadline")
                self.raw += self.child.read_nonblocking(65536, timeout=left)
            except pexpect.TIMEOUT:
                raise AssertionError(
                    f"{text!r} did not appear; the screen since the last match:\n"
                    + self.screen[self._pos :]
                ) from None
            except pexpect.EOF:
                raise AssertionError(
                    f"the REPL exited before {text!r} appeared; it showed:\n" + self.screen
                ) from None

    def type(self, line: str) -> None:
        """Type a line and press Enter (a carriage return, as a terminal sends it)."""
        self.child.send(line + "\r")

    def press(self, keys: str) -> None:
        self.child.send(keys)

    def wait_for_exit(self, timeout: float = 30.0) -> int:
        """Read to the end; the exit status (128 + N when a signal N ended it)."""
        try:
            while True:
                self.raw += self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.EOF:
            pass
        self.child.wait()
        if self.child.signalstatus is not None:
            return 128 + self.child.signalstatus
        return int(self.child.exitstatus)

    def signal(self, sig: signal.Signals) -> None:
        self.child.kill(sig)

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close()
