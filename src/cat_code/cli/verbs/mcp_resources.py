"""``cat-code mcp resources | read | prompts | skills`` (run in `cat_code.cli.mcp_resources`)."""

from __future__ import annotations

from cat_code.cli.options import Options, Run
from cat_code.cli.verbs.base import Subcommands, add_common


def register(commands: Subcommands) -> None:
    resources_cmd = commands.add_parser(
        "resources", help="list the resources and resource templates of every server (or one)",
        description="List the resources (and resource templates) of every connected server, "
        "or of SERVER. Exit 0 on success, 1 when a server failed, 2 for an unknown SERVER.",
    )  # fmt: skip
    add_common(resources_cmd, level=2)
    resources_cmd.add_argument("server", nargs="?", metavar="SERVER", help="only this server")
    resources_cmd.add_argument(
        "--json", action="store_true",
        help='print {"resources": [...], "resourceTemplates": [...]}, each entry with its server',
    )  # fmt: skip
    read_cmd = commands.add_parser(
        "read", help="read one resource and print its contents",
        description="Read the resource URI of SERVER. Text is printed as it is; binary "
        "contents are written as raw bytes when stdout is not a terminal (redirect to a "
        "file), described on a terminal. Exit 0 on success, 1 when the read failed, 2 for "
        "an unknown SERVER.",
    )  # fmt: skip
    add_common(read_cmd, level=2)
    read_cmd.add_argument("server", metavar="SERVER", help="the server's name in mcp.json")
    read_cmd.add_argument("uri", metavar="URI", help="the resource's URI (see mcp resources)")
    read_cmd.add_argument(
        "--json", action="store_true", help="print the result object (contents as sent)"
    )
    prompts_cmd = commands.add_parser(
        "prompts", help="list the prompts of every server (or of one)",
        description="List the prompts of every connected server, or of SERVER, with the "
        "REPL command that runs each (/mcp__SERVER__PROMPT ARGS). Exit 0 on success, 1 when "
        "a server failed, 2 for an unknown SERVER.",
    )  # fmt: skip
    add_common(prompts_cmd, level=2)
    prompts_cmd.add_argument("server", nargs="?", metavar="SERVER", help="only this server")
    prompts_cmd.add_argument("--json", action="store_true", help="print a JSON array")
    skills_cmd = commands.add_parser(
        "skills", help="list the skills of every server (or of one)",
        description="List the skills (SEP-2640) of every connected server, or of SERVER: "
        "name, files and description. No skill's file is read. Exit 0 on success, 1 when a "
        "server failed, 2 for an unknown SERVER.",
    )  # fmt: skip
    add_common(skills_cmd, level=2)
    skills_cmd.add_argument("server", nargs="?", metavar="SERVER", help="only this server")
    skills_cmd.add_argument(
        "--json", action="store_true",
        help="print a JSON array of the entries as listed (uri, frontmatter, resources), "
        "each with its server",
    )  # fmt: skip

    for verb, cmd in (
        ("resources", resources_cmd),
        ("read", read_cmd),
        ("prompts", prompts_cmd),
        ("skills", skills_cmd),
    ):
        cmd.set_defaults(run=_run(verb))


def _run(verb: str) -> Run:
    def run(options: Options) -> int:
        from cat_code.cli import mcp_servers

        return mcp_servers.VERBS[verb](options)

    return run
