"""The ``cat-code`` command line.

``cat-code`` starts the REPL, ``cat-code -p PROMPT`` runs the agent once, and
``cat-code mcp list|tools|call|login|logout`` inspect, use and sign in to the configured
MCP servers without a model; ``cat-code sessions`` lists the saved conversations and
``cat-code tasks`` prints a task list. Parsing
happens here (each verb group declares its parser and run function in `cat_code.cli.verbs`;
`cat_code.cli.options.Options` carries what was parsed down); each mode is imported only
when chosen, so ``--help`` and the ``mcp``
commands never import the model client or the terminal UI.

`run` is the program (the ``cat-code`` script, ``python -m cat_code``): `main`, and
then, for ``-p`` and the ``mcp`` verbs, an exit that skips the interpreter's teardown
(freeing every module and object one by one took a tenth of a second or more after the
last byte was written). Nothing is skipped that matters: by then every server is closed;
the exit waits for non-daemon threads (the orphan reaper) and runs the ``atexit`` hooks
(the stdio transport's last-resort SIGKILL of registered groups, logging's flush) as the
interpreter would, flushes stdout and stderr, and only then calls ``os._exit``. `main`
itself always returns, for callers in the same process (tests).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Sequence

from cat_code.cli.encoding import tolerate_unencodable_output
from cat_code.cli.log import configure_logging
from cat_code.cli.options import Options, from_namespace
from cat_code.cli.parser import build_parser
from cat_code.cli.verbs.base import merge_levels


def main(argv: Sequence[str] | None = None) -> int:
    return _dispatch(_options(argv))


def run() -> int:
    """The ``cat-code`` program; ``-p`` and the verbs end the process without teardown."""
    options = _options(None)
    code = _dispatch(options)
    if options.command == "mcp" or options.prompt is not None:
        _exit_now(code)
    return code


def _options(argv: Sequence[str] | None) -> Options:
    """The command line parsed (a usage error exits 2), its levels merged, as `Options`."""
    args = build_parser().parse_args(argv)
    merge_levels(args)
    return from_namespace(args)


def _exit_now(code: int) -> None:
    """Exit as the interpreter would, minus freeing memory nobody will use again."""
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not current and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: the reader left, nothing to do
            code = code or 1
    os._exit(code)


def _dispatch(options: Options) -> int:
    """The one dispatch: the verb's run function, else ``-p``, else the REPL."""
    tolerate_unencodable_output()  # before anything is printed: see cli/encoding.py
    configure_logging(options.verbose)
    try:
        if options.run is not None:
            return options.run(options)
        if options.prompt is not None:
            # Its stdio servers boot while the agent is imported (`cat_code.cli.early`).
            from cat_code.cli.early import run_oneshot_early

            return run_oneshot_early(options)
        from cat_code.repl.app import run_repl

        return run_repl(options)
    except KeyboardInterrupt:
        # SIGINT outside a command's handlers (`cat_code.host.servers.shutdown`): the same 128 + N.
        return 130


if __name__ == "__main__":
    raise SystemExit(run())
