"""``cat-code mcp list | tools | call | login | logout`` (run in `cat_code.cli.mcp_servers`)."""

from __future__ import annotations

from cat_code.cli.options import Options, Run
from cat_code.cli.verbs.base import Subcommands, add_common


def register(commands: Subcommands) -> None:
    list_cmd = commands.add_parser(
        "list", help="connect every server and show its status",
        description="Connect every configured server and show its status. "
        "Exit 0 when every enabled server connected, else 1.",
    )  # fmt: skip
    add_common(list_cmd, level=2)
    list_cmd.add_argument("--json", action="store_true", help="print a JSON array")
    tools_cmd = commands.add_parser(
        "tools", help="list the tools of every server (or of one)",
        description="List the tools of every connected server, or of SERVER.",
    )  # fmt: skip
    add_common(tools_cmd, level=2)
    tools_cmd.add_argument("server", nargs="?", metavar="SERVER", help="only this server")
    tools_cmd.add_argument("--json", action="store_true", help="print a JSON array")
    call_cmd = commands.add_parser(
        "call", help="call one tool and print its result",
        description="Call TOOL (its registered name, e.g. mcp__echo__echo) with JSON_ARGS "
        "(a JSON object, default {}). Exit 0 on success, 1 when the tool failed, "
        "2 on a usage error.",
    )  # fmt: skip
    add_common(call_cmd, level=2)
    call_cmd.add_argument("tool", metavar="TOOL", help="registered tool name")
    call_cmd.add_argument("arguments", nargs="?", default="{}", metavar="JSON_ARGS")
    call_cmd.add_argument("--json", action="store_true", help="print the raw result object")
    login_cmd = commands.add_parser(
        "login", help="sign in to a remote server (OAuth) and keep its tokens",
        description="Sign in to SERVER (an http or sse entry) with OAuth: open the printed "
        "URL, sign in, and the browser comes back to cat-code on 127.0.0.1. Tokens are kept "
        "in $CAT_CODE_HOME/credentials.json (mode 0600) and refreshed by themselves. "
        "Exit 0 when signed in, 1 when the sign-in failed, 2 on a usage error.",
    )  # fmt: skip
    add_common(login_cmd, level=2)
    login_cmd.add_argument("server", metavar="SERVER", help="the server's name in mcp.json")
    login_cmd.add_argument(
        "--no-browser", action="store_true",
        help="do not open a browser; open the URL anywhere and paste the address it ends "
        "on here (for SSH sessions)",
    )  # fmt: skip
    logout_cmd = commands.add_parser(
        "logout", help="forget a server's sign-in",
        description="Forget the tokens kept for SERVER. Exit 0 even if there were none.",
    )  # fmt: skip
    add_common(logout_cmd, level=2)
    logout_cmd.add_argument("server", metavar="SERVER", help="the server's name in mcp.json")
    list_cmd.set_defaults(run=_run("list"))
    tools_cmd.set_defaults(run=_run("tools"))
    call_cmd.set_defaults(run=_run("call"))
    login_cmd.set_defaults(run=_run("login"))
    logout_cmd.set_defaults(run=_run("logout"))


def _run(verb: str) -> Run:
    def run(options: Options) -> int:
        # Imported only when chosen: `--help` never loads the host.
        from cat_code.cli import mcp_servers

        return mcp_servers.VERBS[verb](options)

    return run
