"""The ``cat-code`` command line.

``cat-code`` starts the REPL, ``cat-code -p PROMPT`` runs the agent once, and
``cat-code mcp list|tools|call|login|logout`` inspect, use and sign in to the configured
MCP servers without a model; ``cat-code sessions`` lists the saved conversations. Parsing
happens here; each mode is imported only when chosen, so ``--help`` and the ``mcp``
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

import argparse
import atexit
import os
import sys
import threading
from collections.abc import Sequence

from cat_code.cli.log import configure_logging
from cat_code.cli.parser import build_parser, merge_levels


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return _dispatch(parser, args)


def run() -> int:
    """The ``cat-code`` program; ``-p`` and ``mcp`` end the process without teardown."""
    parser = build_parser()
    args = parser.parse_args()
    code = _dispatch(parser, args)
    if args.command == "mcp" or args.prompt is not None:
        _exit_now(code)
    return code


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


def _run_session(args: argparse.Namespace) -> int:
    if args.prompt is not None:
        # Its stdio servers boot while the agent is imported (`cat_code.cli.early`).
        from cat_code.cli.early import run_oneshot_early

        return run_oneshot_early(args)
    from cat_code.repl.app import run_repl

    return run_repl(args)


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    merge_levels(args)
    configure_logging(args.verbose)
    try:
        if args.command == "mcp":
            if args.mcp_command is None:
                parser.parse_args(["mcp", "--help"])
            from cat_code.cli.mcp_servers import run_mcp_command

            return run_mcp_command(args)
        if args.command == "project":
            from cat_code.cli.project import run_project_command

            return run_project_command(args)
        if args.command == "sessions":
            from cat_code.cli.sessions import run_sessions_command

            return run_sessions_command(args)
        if args.command == "worktree":
            if args.worktree_command is None:
                parser.parse_args(["worktree", "--help"])
            from cat_code.cli.worktrees import run_worktree_command

            return run_worktree_command(args)
        from cat_code.cli.worktree_session import run_session

        return run_session(args, lambda: _run_session(args))
    except KeyboardInterrupt:
        # SIGINT outside a command's handlers (`cat_code.host.shutdown`): the same 128 + N.
        return 130


if __name__ == "__main__":
    raise SystemExit(run())
