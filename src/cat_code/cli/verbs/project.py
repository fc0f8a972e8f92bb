"""``cat-code project [show] | approve | reject [KIND...]``: the project's own permission
rules (run in `cat_code.cli.project`)."""

from __future__ import annotations

from cat_code.cli.options import Options
from cat_code.cli.verbs.base import Subcommands


def register(commands: Subcommands) -> None:
    project = commands.add_parser(
        "project", help="approve the project's own permission rules (.cat-code/settings.json)",
        description="Show, approve or reject what the project's .cat-code/settings.json "
        "would allow without asking. Its deny rules always apply; its allow rules only once "
        "you approve them as written (a changed list asks again). Its MCP servers: cat-code "
        "mcp approve. Exit 0; show exits 1 while something waits for approval.",
    )  # fmt: skip
    project.set_defaults(run=run)
    verbs = project.add_subparsers(dest="project_command", metavar="SUBCOMMAND")
    verbs.add_parser("show", help="what the project brings, and whether it is approved")
    for verb, what in (("approve", "let ... apply in this folder"),
                       ("reject", "keep ... from applying in this folder")):  # fmt: skip
        cmd = verbs.add_parser(verb, help=what.replace("...", "the project's allow rules"))
        cmd.add_argument(
            "kinds", nargs="*", metavar="KIND",
            help="what to decide (rules: the allow rules; default: everything)",
        )  # fmt: skip


def run(options: Options) -> int:
    from cat_code.cli.project import run_project_command

    return run_project_command(options)
