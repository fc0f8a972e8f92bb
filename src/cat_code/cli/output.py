"""What every ``cat-code`` verb prints with, and the exit codes they share.

Results go to stdout one flushed line at a time (a pipe reader sees each at once);
errors go to stderr as ``cat-code: …``. 0 success, 1 something failed, 2 a usage error.
Both pass their text through `safe_text`: what a server or the network said (names,
descriptions, results, errors) can never drive the terminal.
"""

from __future__ import annotations

import sys

from cat_code.base.safe_text import safe_text

EXIT_OK = 0


EXIT_FAILED = 1


EXIT_USAGE = 2


def print_line(text: str) -> None:
    """One line to stdout, flushed (a pipe reader sees it at once)."""
    sys.stdout.write(safe_text(text) + "\n")
    sys.stdout.flush()


def print_error(text: str) -> None:
    """One ``cat-code: …`` line to stderr."""
    sys.stderr.write(f"cat-code: {safe_text(text)}\n")
