"""``cat-code hooks [--json]``: every configured hook (run in `cat_code.cli.hooks`)."""

from __future__ import annotations

from cat_code.cli.options import Options
from cat_code.cli.verbs.base import Subcommands


def register(commands: Subcommands) -> None:
    hooks_cmd = commands.add_parser(
        "hooks", help="list the hooks of the settings files and whether they run",
        description="List every command hook of $CAT_CODE_HOME/settings.json, the project's "
        ".cat-code/settings.json and settings.local.json: event, matcher, command, the file "
        "it comes from, and whether it runs (a project's hooks wait for cat-code project "
        "approve hooks). Runs none of them. Exit 0; 1 while a project hook waits for approval.",
    )  # fmt: skip
    hooks_cmd.add_argument(
        "--json", action="store_true",
        help="print a JSON array of {event, matcher, command, timeout, file, scope, approved, "
        "state}",
    )  # fmt: skip
    hooks_cmd.set_defaults(run=run)


def run(options: Options) -> int:
    from cat_code.cli.hooks import run_hooks_command

    return run_hooks_command(as_json=options.json, trust_project=options.trust_project)
