"""``cat-code agents [--json]``: the subagent definitions this folder's sessions offer."""

from __future__ import annotations

from cat_code.cli.options import Options
from cat_code.cli.verbs.base import Subcommands


def register(commands: Subcommands) -> None:
    agents_cmd = commands.add_parser(
        "agents", help="list the subagent definitions the model can start here",
        description="List the subagent definitions: the built-in general-purpose agent, "
        "$CAT_CODE_HOME/agents/*.md, and the project's .claude/agents/ and .cat-code/agents/, "
        "each with its source, and the files that could not be used. No model needed. Exit 0.",
    )  # fmt: skip
    agents_cmd.add_argument(
        "--json", action="store_true", help="print {agents: [...], warnings: [...]}"
    )
    agents_cmd.set_defaults(run=run)


def run(options: Options) -> int:
    from cat_code.cli.agents import run_agents_command

    return run_agents_command(json_output=options.json)
