"""``cat-code tasks [--list NAME] [--json]``: a task list, printed from the shell."""

from __future__ import annotations

from cat_code.cli.options import Options
from cat_code.cli.verbs.base import Subcommands


def register(commands: Subcommands) -> None:
    tasks_cmd = commands.add_parser(
        "tasks", help="print a task list (the model's steps of work)",
        description="Print a task list: --list NAME, else $CAT_CODE_TASK_LIST, else the "
        "list of this folder's latest conversation. Lists live in $CAT_CODE_HOME/tasks/. "
        "Exit 0; 2 for a name that cannot be a list; 1 when it cannot be read.",
    )  # fmt: skip
    tasks_cmd.add_argument("--list", dest="task_list", metavar="NAME", help="the list to print")
    tasks_cmd.add_argument(
        "--json", action="store_true",
        help="print a JSON array of the tasks (every field, and whether each is ready)",
    )  # fmt: skip
    tasks_cmd.set_defaults(run=run)


def run(options: Options) -> int:
    from cat_code.cli.tasks import run_tasks_command

    return run_tasks_command(options)
