"""``cat-code worktree list [--json] | remove NAME [--force] | gc``: cat-code's git worktrees
(run in `cat_code.cli.worktrees`; ``-w/--worktree`` itself is a top-level option)."""

from __future__ import annotations

import argparse

from cat_code.cli.options import Options, Run
from cat_code.cli.verbs.base import Subcommands


def register(commands: Subcommands) -> None:
    worktree = commands.add_parser(
        "worktree", help="list, remove and clean up cat-code's git worktrees",
        description="The git worktrees cat-code --worktree made in this repository "
        "(.cat-code/worktrees/NAME, branch cat-code/NAME). Exit 0 when done, 1 on an "
        "error or a refused remove, 2 for an invalid NAME.",
    )  # fmt: skip
    worktree.set_defaults(run=_help_of(worktree))
    verbs = worktree.add_subparsers(dest="worktree_command", metavar="SUBCOMMAND")
    list_cmd = verbs.add_parser("list", help="each worktree: branch, state, session, path")
    list_cmd.set_defaults(run=run)
    list_cmd.add_argument(
        "--json", action="store_true",
        help="print a JSON array of {name, path, branch, base, state, changes, commits, "
        "session, pid, created}",
    )  # fmt: skip
    remove_cmd = verbs.add_parser(
        "remove", help="remove a worktree and its branch",
        description="Remove worktree NAME and its branch cat-code/NAME. Refused while it "
        "holds uncommitted changes or new commits, or while a running cat-code works in it, "
        "unless --force.",
    )  # fmt: skip
    remove_cmd.set_defaults(run=run)
    remove_cmd.add_argument("name", metavar="NAME", help="the worktree's name")
    remove_cmd.add_argument(
        "-f", "--force", action="store_true", help="remove it even with work in it, or in use"
    )
    gc_cmd = verbs.add_parser(
        "gc", help="remove the clean worktrees of ended sessions; report the dirty ones",
        description="Remove every worktree (and its branch) whose session has ended and that "
        "holds no work; list the ones kept because they hold work, and those in use.",
    )  # fmt: skip
    gc_cmd.set_defaults(run=run)


def run(options: Options) -> int:
    from cat_code.cli.worktrees import run_worktree_command

    return run_worktree_command(options)


def _help_of(parser: argparse.ArgumentParser) -> Run:
    def run(options: Options) -> int:
        parser.parse_args(["--help"])  # `cat-code worktree` alone: its help, exit 0
        return 0

    return run
