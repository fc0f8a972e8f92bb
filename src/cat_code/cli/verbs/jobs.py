"""``cat-code jobs [--json]``: every background job in the registry, from the shell."""

from __future__ import annotations

from cat_code.cli.options import Options
from cat_code.cli.verbs.base import Subcommands


def register(commands: Subcommands) -> None:
    jobs_cmd = commands.add_parser(
        "jobs", help="list the background jobs (the model's shell run_in_background)",
        description="List every background job in $CAT_CODE_HOME/jobs/, running ones first: "
        "id, state or how it ended, start, owner, command. Jobs a killed cat-code left are "
        "ended first. Exit 0.",
    )  # fmt: skip
    jobs_cmd.add_argument(
        "--json", action="store_true",
        help="print a JSON array of {id, command, cwd, pid, pgid, state, exit_code, reason, "
        "started_at, ended_at, owner_pid, session_id, output}",
    )  # fmt: skip
    jobs_cmd.set_defaults(run=run)


def run(options: Options) -> int:
    from cat_code.cli.jobs import run_jobs_command

    return run_jobs_command(options)
