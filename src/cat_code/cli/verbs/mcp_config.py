"""``cat-code mcp add | remove | get | enable | disable | import``: the config files from the
shell (run in `cat_code.cli.mcp_manage`)."""

from __future__ import annotations

import argparse

from cat_code.cli.add_options import SCOPE_HELP, declare_add_options
from cat_code.cli.options import Options, Run
from cat_code.cli.verbs.base import Subcommands, add_common


def register(commands: Subcommands) -> None:
    scope_help = SCOPE_HELP
    add_cmd = commands.add_parser(
        "add", help="add a server to mcp.json (then try connecting it)",
        usage="cat-code mcp add [options] NAME -- COMMAND [ARGS...]\n"
        "       cat-code mcp add [options] NAME URL [--transport http|sse] [--header 'K: V']...",
        description="Add server NAME: a command to start (stdio; after --, with its own\n"
        "arguments) or a URL (http:// or https://; Streamable HTTP unless --transport sse).\n"
        "Every other entry and key of the file stays as it was; the write is atomic. Then\n"
        "the server is connected once and the result shown; the entry stays either way.\n"
        "Exit 0 when written, 1 when NAME exists (without --force) or the file is not\n"
        "valid JSON, 2 on a usage error.",
        epilog="examples:\n"
        "  cat-code mcp add echo -- python3 examples/echo_server.py\n"
        "  cat-code mcp add --scope project github --env GITHUB_TOKEN='${GITHUB_TOKEN}' "
        "-- npx -y @modelcontextprotocol/server-github\n"
        "  cat-code mcp add remote https://mcp.example.com/mcp --header 'Authorization: "
        "Bearer ${TOKEN}'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    declare_add_options(add_cmd)
    # NAME is read with the rest (cli/mcp_add.py `parse_add`): as a positional of its own,
    # argparse would swallow a "--" right after it, and a command must come after "--".
    add_cmd.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        metavar="NAME {URL | -- COMMAND [ARGS...]}",
        help="the server's name, then where it is or the command that starts it",
    )
    remove_cmd = commands.add_parser(
        "remove",
        help="remove a server from mcp.json",
        description="Remove server NAME from the file that defines it (with --scope, from "
        "that file only). Exit 0 when removed, 1 when not found, 2 when both files define "
        "it and --scope is missing.",
    )
    add_common(remove_cmd, level=2)
    remove_cmd.add_argument("name", metavar="NAME", help="the server's name")
    remove_cmd.add_argument("-s", "--scope", choices=("user", "project"), help=scope_help)
    get_cmd = commands.add_parser(
        "get",
        help="show one server's entry (secrets masked), state and tools",
        description="Show server NAME: where it is defined, its entry with secrets masked "
        "(env and header values, the URL's password and query values, the value after a "
        "secret-looking argument: --api-key ****, --token=****; ${VAR} references "
        "are shown as written), then connect it and show its state and tools. Exit 0 when "
        "it connected (or is disabled), 1 when it failed or is not configured.",
    )
    add_common(get_cmd, level=2)
    get_cmd.add_argument("name", metavar="NAME", help="the server's name")
    get_cmd.add_argument("--json", action="store_true", help="print a JSON object")
    for verb, what in (("enable", "false"), ("disable", "true")):
        toggle = commands.add_parser(
            verb, help=f"{verb} a server (its 'disabled' field in mcp.json)",
            description=f"Set \"disabled\": {what} on server NAME, in the file that defines "
            "it (your own when both do: a project entry never takes its name; --scope "
            "says otherwise). "
            "Exit 0 when done (or already so), 1 when not found.",
        )  # fmt: skip
        add_common(toggle, level=2)
        toggle.add_argument("name", metavar="NAME", help="the server's name")
        toggle.add_argument("-s", "--scope", choices=("user", "project"), help=scope_help)
        toggle.set_defaults(run=_run(verb))
    import_cmd = commands.add_parser(
        "import",
        help="copy servers from Claude Desktop, Claude Code, Cursor, VS Code, Gemini",
        description="Find the MCP servers other tools have configured (their usual files on "
        "Linux and macOS, user and project) and add them to cat-code's config. Servers of "
        "the project's own files (.vscode/, .cursor/, .gemini/) go into ./.mcp.json as "
        "project servers waiting for approval. A name cat-code already has is skipped "
        "unless --force. Exit 0 when done.",
    )
    add_common(import_cmd, level=2)
    import_cmd.add_argument(
        "--from", dest="source",
        choices=("claude-desktop", "claude-code", "cursor", "vscode", "gemini"),
        help="only this tool's files (default: all of them)",
    )  # fmt: skip
    import_cmd.add_argument(
        "--dry-run", action="store_true", help="show what would be imported; write nothing"
    )
    import_cmd.add_argument(
        "-f", "--force", action="store_true", help="replace entries of the same name"
    )
    import_cmd.add_argument("-s", "--scope", choices=("user", "project"), help=scope_help)
    for verb, cmd in (
        ("add", add_cmd),
        ("remove", remove_cmd),
        ("get", get_cmd),
        ("import", import_cmd),
    ):
        cmd.set_defaults(run=_run(verb))


def _run(verb: str) -> Run:
    def run(options: Options) -> int:
        # Imported only when chosen: `mcp list` and `mcp call` start faster without it.
        from cat_code.cli import mcp_manage

        return mcp_manage.run_manage_command(verb, options)

    return run
