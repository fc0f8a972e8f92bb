"""The fast exit of ``-p`` and the ``mcp`` verbs: nothing that matters is skipped.

Each test runs a fresh interpreter that ends through `cat_code.cli._exit_now`, as the
program does after ``-p``; the skipped teardown must not lose a waiting thread's work,
an ``atexit`` hook, or buffered output.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_PROGRAM = """
import atexit, sys, threading
from pathlib import Path
from cat_code.cli import _exit_now

out = Path(sys.argv[1])
started = threading.Event()

def late_work():
    started.set()
    threading.Event().wait(0.2)  # still busy when the exit begins
    with open(out, "a") as f:
        f.write("thread\\n")

threading.Thread(target=late_work).start()
started.wait(5)
atexit.register(lambda: open(out, "a").write("hook\\n"))
sys.stdout.write("buffered, no newline")
_exit_now(3)
"""


def test_the_fast_exit_waits_for_threads_runs_exit_hooks_and_flushes_output(
    tmp_path: Path,
) -> None:
    marks = tmp_path / "marks"
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, str(marks)],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": ":".join(sys.path)},
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout == "buffered, no newline"
    assert marks.read_text().splitlines() == ["thread", "hook"]
