"""What a verb module is given: the subcommands it adds its parsers to, and the options
common to every level (``-v``, ``--mcp-config``, ``--add-dir``, ``--trust-project``), which
may be given before or after a verb; `merge_levels` folds them into one namespace."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TypeAlias

#: ``parser.add_subparsers(...)``: a verb module calls ``add_parser`` on it and sets
#: ``run`` (``set_defaults(run=...)``) on each parser it adds.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


#: Parser levels below the top one that take the common options (``mcp``, its subcommands).
_NESTED_LEVELS = (1, 2)


def add_common(parser: argparse.ArgumentParser, *, level: int = 0) -> None:
    """``--mcp-config``, ``--add-dir``, ``--trust-project`` and ``-v``, ``level`` verbs deep.

    argparse copies a subcommand's namespace over its parent's, so options given at two
    levels would keep only the deeper ones: each level stores its own (absent unless
    given), and `merge_levels` adds them up after parsing.
    """
    suffix = f"_{level}" if level else ""
    parser.add_argument(
        "--mcp-config",
        action="append",
        metavar="PATH",
        dest=f"mcp_config{suffix}",
        default=argparse.SUPPRESS if level else None,
        help="use only this MCP config file (repeatable; mcp add and import write to it)",
    )
    parser.add_argument(
        "--add-dir", action="append", metavar="DIR", type=_add_dir,
        dest=f"add_dir{suffix}", default=argparse.SUPPRESS if level else [],
        help="also offer DIR to MCP servers as a root, beside the working directory "
        "(repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--trust-project", action="store_true", dest=f"trust_project{suffix}",
        default=argparse.SUPPRESS if level else False,
        help="trust this project's servers (./.mcp.json) and allow rules "
        "(.cat-code/settings.json) for this run only (remembers nothing)",
    )  # fmt: skip
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        dest=f"verbose{suffix}",
        default=argparse.SUPPRESS if level else 0,
        help="log debug details (MCP traffic, server stderr) to stderr",
    )


def merge_levels(args: argparse.Namespace) -> None:
    """Fold the common options given after a subcommand into the top-level ones."""
    given = vars(args)
    for level in _NESTED_LEVELS:
        paths = given.pop(f"mcp_config_{level}", None)
        if paths:
            args.mcp_config = [*(args.mcp_config or []), *paths]
        args.add_dir = [*args.add_dir, *given.pop(f"add_dir_{level}", [])]
        args.verbose += given.pop(f"verbose_{level}", 0)
        args.trust_project = given.pop(f"trust_project_{level}", False) or args.trust_project


def _add_dir(text: str) -> Path:
    """The ``type`` of ``--add-dir``: argparse turns the error into a usage error (exit 2)."""
    from cat_code.mcp.roots import RootError, check_dir  # pathlib only: cheap

    try:
        return check_dir(text)
    except RootError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
