"""``cat-code mcp approve | reject``: the project's servers (./.mcp.json) run only once
approved (run in `cat_code.cli.mcp_trust`)."""

from __future__ import annotations

from cat_code.cli.options import Options
from cat_code.cli.verbs.base import Subcommands, add_common


def register(commands: Subcommands) -> None:
    approve_cmd = commands.add_parser(
        "approve", help="let project servers (./.mcp.json) run in this folder",
        description="Approve the project servers NAME... (entries of ./.mcp.json), or all of "
        "them with --all, for this folder and these entries as written: a changed entry, or "
        "the same file in another folder, asks again. Approvals are kept in "
        "$CAT_CODE_HOME/approvals.json. Exit 0 when recorded, 2 for an unknown NAME.",
    )  # fmt: skip
    add_common(approve_cmd, level=2)
    approve_cmd.add_argument("names", nargs="*", metavar="NAME", help="a project server's name")
    approve_cmd.add_argument("--all", action="store_true", help="every server of ./.mcp.json")
    reject_cmd = commands.add_parser(
        "reject", help="keep project servers (./.mcp.json) from running in this folder",
        description="Reject the project servers NAME... (entries of ./.mcp.json): they are "
        "shown as REJECTED and never started, until cat-code mcp approve NAME. Exit 0 when "
        "recorded, 2 for an unknown NAME.",
    )  # fmt: skip
    add_common(reject_cmd, level=2)
    reject_cmd.add_argument("names", nargs="+", metavar="NAME", help="a project server's name")
    approve_cmd.set_defaults(run=run)
    reject_cmd.set_defaults(run=run)


def run(options: Options) -> int:
    from cat_code.cli.mcp_trust import run_trust_command

    return run_trust_command(options)
