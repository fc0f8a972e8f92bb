"""``cat-code sessions [--json]``: the saved conversations of this folder."""

from __future__ import annotations

from cat_code.cli.options import Options
from cat_code.cli.verbs.base import Subcommands


def register(commands: Subcommands) -> None:
    sessions_cmd = commands.add_parser(
        "sessions", help="list the saved conversations of this folder",
        description="List the conversations saved for this folder, the most recently used "
        "first: id, last use, turns (prompts sent), first prompt. Each is a JSONL file in "
        "$CAT_CODE_HOME/sessions/. Go on with one with cat-code --resume ID. Exit 0.",
    )  # fmt: skip
    sessions_cmd.add_argument(
        "--json", action="store_true",
        help="print a JSON array of {id, last_use, turns, first_prompt, path}",
    )  # fmt: skip
    sessions_cmd.set_defaults(run=run)


def run(options: Options) -> int:
    from cat_code.cli.sessions import run_sessions_command

    return run_sessions_command(options)
