"""The ``cat-code`` argument parser: every verb, option and help text in one place.

Building it imports only argparse and pathlib, so ``--help`` and the ``mcp`` verbs stay
light. Options common to every level (``-v``, ``--mcp-config``, ...) may be given before
or after a verb; `merge_levels` folds them into one namespace.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cat_code import __version__

EPILOG = """\
MCP servers come from $CAT_CODE_HOME/mcp.json (default ~/.cat-code/mcp.json) and
./.mcp.json, or only from the files given with --mcp-config. The servers of
./.mcp.json (the project's) start only once approved: cat-code mcp approve NAME.

examples:
  cat-code mcp list                       connect every server and show its status
  cat-code mcp tools                      list every MCP tool
  cat-code mcp call mcp__echo__echo '{"text": "hi"}'
  cat-code mcp login linear               sign in to a remote server (OAuth, in a browser)
  cat-code mcp add echo -- python3 examples/echo_server.py
  cat-code mcp add docs https://mcp.example.com/mcp --header 'Authorization: Bearer ${TOKEN}'
  cat-code mcp get echo                   one server's entry (secrets masked), state, tools
  cat-code mcp approve docs               let ./.mcp.json's server 'docs' run in this folder
  cat-code mcp import --dry-run           servers from Claude, Cursor, VS Code, Gemini
  cat-code mcp resources                  list every server's resources and templates
  cat-code mcp read docs file:///a.md     print one resource (binary: redirect to a file)
  cat-code mcp prompts                    list every prompt and its REPL command
  cat-code mcp skills                     list every server's skills (none of their files read)
  cat-code                                start the REPL (/help lists its commands)
  cat-code -p "summarise README.md"       run the agent once (needs a model API key)
  cat-code --continue                     go on with this folder's latest conversation
  cat-code sessions                       list this folder's saved conversations
  cat-code -w fix-login                   work in a git worktree of its own (docs/worktrees.md)

models: ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL) for anthropic:<model>;
OPENAI_API_KEY or OPENAI_BASE_URL (Ollama, llama.cpp, vLLM) for openai:<model>.
"""


#: Parser levels below the top one that take the common options (``mcp``, its subcommands).
_NESTED_LEVELS = (1, 2)


def _add_common(parser: argparse.ArgumentParser, *, level: int = 0) -> None:
    """``--mcp-config``, ``--add-dir``, ``--trust-project`` and ``-v``, ``level`` verbs deep.

    argparse copies a subcommand's namespace over its parent's, so options given at two
    levels would keep only the deeper ones: each level stores its own (absent unless
    given), and `merge_levels` adds them up after parsing.
    """
    suffix = f"_{level}" if level else ""
    parser.add_argument(
        "--mcp-config",
        action="append",
        metavar="PATH",
        dest=f"mcp_config{suffix}",
        default=argparse.SUPPRESS if level else None,
        help="use only this MCP config file (repeatable; mcp add and import write to it)",
    )
    parser.add_argument(
        "--add-dir", action="append", metavar="DIR", type=_add_dir,
        dest=f"add_dir{suffix}", default=argparse.SUPPRESS if level else [],
        help="also offer DIR to MCP servers as a root, beside the working directory "
        "(repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--trust-project", action="store_true", dest=f"trust_project{suffix}",
        default=argparse.SUPPRESS if level else False,
        help="trust this project's servers (./.mcp.json) and allow rules "
        "(.cat-code/settings.json) for this run only (remembers nothing)",
    )  # fmt: skip
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        dest=f"verbose{suffix}",
        default=argparse.SUPPRESS if level else 0,
        help="log debug details (MCP traffic, server stderr) to stderr",
    )


def merge_levels(args: argparse.Namespace) -> None:
    """Fold the common options given after a subcommand into the top-level ones."""
    given = vars(args)
    for level in _NESTED_LEVELS:
        paths = given.pop(f"mcp_config_{level}", None)
        if paths:
            args.mcp_config = [*(args.mcp_config or []), *paths]
        args.add_dir = [*args.add_dir, *given.pop(f"add_dir_{level}", [])]
        args.verbose += given.pop(f"verbose_{level}", 0)
        args.trust_project = given.pop(f"trust_project_{level}", False) or args.trust_project


def _add_project(commands: Any) -> None:
    """``cat-code project [show] | approve | reject [KIND...]`` (cli/project.py)."""
    project = commands.add_parser(
        "project", help="approve the project's own permission rules (.cat-code/settings.json)",
        description="Show, approve or reject what the project's .cat-code/settings.json "
        "would allow without asking. Its deny rules always apply; its allow rules only once "
        "you approve them as written (a changed list asks again). Its MCP servers: cat-code "
        "mcp approve. Exit 0; show exits 1 while something waits for approval.",
    )  # fmt: skip
    verbs = project.add_subparsers(dest="project_command", metavar="SUBCOMMAND")
    verbs.add_parser("show", help="what the project brings, and whether it is approved")
    for verb, what in (("approve", "let ... apply in this folder"),
                       ("reject", "keep ... from applying in this folder")):  # fmt: skip
        cmd = verbs.add_parser(verb, help=what.replace("...", "the project's allow rules"))
        cmd.add_argument(
            "kinds", nargs="*", metavar="KIND",
            help="what to decide (rules: the allow rules; default: everything)",
        )  # fmt: skip


def _add_worktree(parser: argparse.ArgumentParser, commands: Any) -> None:
    """``-w/--worktree [NAME]`` and ``cat-code worktree list|remove|gc`` (cli/worktrees.py)."""
    parser.add_argument(
        "-w", "--worktree", nargs="?", const="", default=None, metavar="NAME",
        help="run the session in a new git worktree .cat-code/worktrees/NAME on branch "
        "cat-code/NAME (no NAME: a generated one); removed on exit unless it holds work",
    )  # fmt: skip
    worktree = commands.add_parser(
        "worktree", help="list, remove and clean up cat-code's git worktrees",
        description="The git worktrees cat-code --worktree made in this repository "
        "(.cat-code/worktrees/NAME, branch cat-code/NAME). Exit 0 when done, 1 on an "
        "error or a refused remove, 2 for an invalid NAME.",
    )  # fmt: skip
    verbs = worktree.add_subparsers(dest="worktree_command", metavar="SUBCOMMAND")
    list_cmd = verbs.add_parser("list", help="each worktree: branch, state, session, path")
    list_cmd.add_argument(
        "--json", action="store_true",
        help="print a JSON array of {name, path, branch, base, state, changes, commits, "
        "session, pid, created}",
    )  # fmt: skip
    remove_cmd = verbs.add_parser(
        "remove", help="remove a worktree and its branch",
        description="Remove worktree NAME and its branch cat-code/NAME. Refused while it "
        "holds uncommitted changes or new commits, or while a running cat-code works in it, "
        "unless --force.",
    )  # fmt: skip
    remove_cmd.add_argument("name", metavar="NAME", help="the worktree's name")
    remove_cmd.add_argument(
        "-f", "--force", action="store_true", help="remove it even with work in it, or in use"
    )
    verbs.add_parser(
        "gc", help="remove the clean worktrees of ended sessions; report the dirty ones",
        description="Remove every worktree (and its branch) whose session has ended and that "
        "holds no work; list the ones kept because they hold work, and those in use.",
    )  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cat-code",
        description="A terminal coding agent whose tools plug in through MCP.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cat-code {__version__}")
    _add_common(parser)
    parser.add_argument(
        "-p", "--print", dest="prompt", metavar="PROMPT",
        help="run the agent once on PROMPT ('-' reads it from stdin); answer on stdout, "
        "tool calls on stderr; exit 0 on an answer, 1 otherwise",
    )  # fmt: skip
    parser.add_argument(
        "--model",
        help="model as PROVIDER:NAME, e.g. anthropic:claude-haiku-5-5 or openai:gpt-5.5 "
        "(default: $CAT_CODE_MODEL, else anthropic:claude-sonnet-5-5)",
    )
    parser.add_argument("--yes", action="store_true", help="approve every tool call without asking")
    parser.add_argument(
        "--allow-tool", action="append", default=[], metavar="PATTERN",
        help="approve tools whose registered name matches this glob (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--max-turns", action=_MaxTurns, default=None, metavar="N",
        help="stop after N model turns per prompt (a whole number >= 1; default 50)",
    )  # fmt: skip
    parser.add_argument(
        "--output-format", choices=("text", "json", "stream-json"), default="text",
        help="with -p: text (the answer, as it streams), json (one result object at the end) "
        "or stream-json (one JSON object per line as things happen, the result last)",
    )  # fmt: skip
    parser.add_argument(
        "--append-system-prompt", metavar="TEXT", default=None,
        help="add TEXT at the end of the system prompt",
    )  # fmt: skip
    saved = parser.add_mutually_exclusive_group()
    saved.add_argument(
        "-c", "--continue", dest="continue_session", action="store_true",
        help="go on with the latest conversation of this folder (in the REPL, or with -p)",
    )  # fmt: skip
    saved.add_argument(
        "-r", "--resume", metavar="ID", default=None,
        help="go on with saved conversation ID of this folder (cat-code sessions lists "
        "them; exit 2 if there is none)",
    )  # fmt: skip
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
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
    _add_project(commands)
    _add_worktree(parser, commands)
    mcp = commands.add_parser(
        "mcp", help="inspect and call the configured MCP servers (no model needed)",
        description="Inspect and call the configured MCP servers. No model or API key needed.",
    )  # fmt: skip
    _add_common(mcp, level=1)
    mcp_commands = mcp.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND")
    list_cmd = mcp_commands.add_parser(
        "list", help="connect every server and show its status",
        description="Connect every configured server and show its status. "
        "Exit 0 when every enabled server connected, else 1.",
    )  # fmt: skip
    _add_common(list_cmd, level=2)
    list_cmd.add_argument("--json", action="store_true", help="print a JSON array")
    tools_cmd = mcp_commands.add_parser(
        "tools", help="list the tools of every server (or of one)",
        description="List the tools of every connected server, or of SERVER.",
    )  # fmt: skip
    _add_common(tools_cmd, level=2)
    tools_cmd.add_argument("server", nargs="?", metavar="SERVER", help="only this server")
    tools_cmd.add_argument("--json", action="store_true", help="print a JSON array")
    call_cmd = mcp_commands.add_parser(
        "call", help="call one tool and print its result",
        description="Call TOOL (its registered name, e.g. mcp__echo__echo) with JSON_ARGS "
        "(a JSON object, default {}). Exit 0 on success, 1 when the tool failed, "
        "2 on a usage error.",
    )  # fmt: skip
    _add_common(call_cmd, level=2)
    call_cmd.add_argument("tool", metavar="TOOL", help="registered tool name")
    call_cmd.add_argument("arguments", nargs="?", default="{}", metavar="JSON_ARGS")
    call_cmd.add_argument("--json", action="store_true", help="print the raw result object")
    login_cmd = mcp_commands.add_parser(
        "login", help="sign in to a remote server (OAuth) and keep its tokens",
        description="Sign in to SERVER (an http or sse entry) with OAuth: open the printed "
        "URL, sign in, and the browser comes back to cat-code on 127.0.0.1. Tokens are kept "
        "in $CAT_CODE_HOME/credentials.json (mode 0600) and refreshed by themselves. "
        "Exit 0 when signed in, 1 when the sign-in failed, 2 on a usage error.",
    )  # fmt: skip
    _add_common(login_cmd, level=2)
    login_cmd.add_argument("server", metavar="SERVER", help="the server's name in mcp.json")
    login_cmd.add_argument(
        "--no-browser", action="store_true",
        help="do not open a browser; open the URL anywhere and paste the address it ends "
        "on here (for SSH sessions)",
    )  # fmt: skip
    logout_cmd = mcp_commands.add_parser(
        "logout", help="forget a server's sign-in",
        description="Forget the tokens kept for SERVER. Exit 0 even if there were none.",
    )  # fmt: skip
    _add_common(logout_cmd, level=2)
    logout_cmd.add_argument("server", metavar="SERVER", help="the server's name in mcp.json")
    # -- workspace trust: the project's servers (./.mcp.json) run only once approved --
    approve_cmd = mcp_commands.add_parser(
        "approve", help="let project servers (./.mcp.json) run in this folder",
        description="Approve the project servers NAME... (entries of ./.mcp.json), or all of "
        "them with --all, for this folder and these entries as written: a changed entry, or "
        "the same file in another folder, asks again. Approvals are kept in "
        "$CAT_CODE_HOME/approvals.json. Exit 0 when recorded, 2 for an unknown NAME.",
    )  # fmt: skip
    _add_common(approve_cmd, level=2)
    approve_cmd.add_argument("names", nargs="*", metavar="NAME", help="a project server's name")
    approve_cmd.add_argument("--all", action="store_true", help="every server of ./.mcp.json")
    reject_cmd = mcp_commands.add_parser(
        "reject", help="keep project servers (./.mcp.json) from running in this folder",
        description="Reject the project servers NAME... (entries of ./.mcp.json): they are "
        "shown as REJECTED and never started, until cat-code mcp approve NAME. Exit 0 when "
        "recorded, 2 for an unknown NAME.",
    )  # fmt: skip
    _add_common(reject_cmd, level=2)
    reject_cmd.add_argument("names", nargs="+", metavar="NAME", help="a project server's name")
    # -- managing the config: add, remove, get, enable, disable, import (cli/mcp_manage.py) --
    scope_help = "user: $CAT_CODE_HOME/mcp.json (the default); project: ./.mcp.json"
    add_cmd = mcp_commands.add_parser(
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
    _add_common(add_cmd, level=2)
    add_cmd.add_argument("-s", "--scope", choices=("user", "project"), help=scope_help)
    add_cmd.add_argument(
        "-e",
        "--env",
        action="append",
        metavar="KEY=VALUE",
        help="an environment variable for a stdio server (repeatable)",
    )
    add_cmd.add_argument(
        "-H",
        "--header",
        action="append",
        metavar="'NAME: VALUE'",
        help="an HTTP header for a URL server (repeatable)",
    )
    add_cmd.add_argument(
        "-t",
        "--transport",
        choices=("http", "sse", "stdio"),
        help="http (a URL's default: Streamable HTTP) or sse for a URL; stdio (the "
        "default) for a command after --",
    )
    add_cmd.add_argument(
        "-f", "--force", action="store_true", help="replace an existing entry of the same name"
    )
    # NAME is read with the rest (cli/mcp_manage.py `parse_add`): as a positional of its own,
    # argparse would swallow a "--" right after it, and a command must come after "--".
    add_cmd.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        metavar="NAME {URL | -- COMMAND [ARGS...]}",
        help="the server's name, then where it is or the command that starts it",
    )
    remove_cmd = mcp_commands.add_parser(
        "remove",
        help="remove a server from mcp.json",
        description="Remove server NAME from the file that defines it (with --scope, from "
        "that file only). Exit 0 when removed, 1 when not found, 2 when both files define "
        "it and --scope is missing.",
    )
    _add_common(remove_cmd, level=2)
    remove_cmd.add_argument("name", metavar="NAME", help="the server's name")
    remove_cmd.add_argument("-s", "--scope", choices=("user", "project"), help=scope_help)
    get_cmd = mcp_commands.add_parser(
        "get",
        help="show one server's entry (secrets masked), state and tools",
        description="Show server NAME: where it is defined, its entry with secrets masked "
        "(env and header values, the URL's password and query values, the value after a "
        "secret-looking argument: --api-key ****, --token=****; ${VAR} references "
        "are shown as written), then connect it and show its state and tools. Exit 0 when "
        "it connected (or is disabled), 1 when it failed or is not configured.",
    )
    _add_common(get_cmd, level=2)
    get_cmd.add_argument("name", metavar="NAME", help="the server's name")
    get_cmd.add_argument("--json", action="store_true", help="print a JSON object")
    for verb, what in (("enable", "false"), ("disable", "true")):
        toggle = mcp_commands.add_parser(
            verb, help=f"{verb} a server (its 'disabled' field in mcp.json)",
            description=f"Set \"disabled\": {what} on server NAME, in the file that defines "
            "it (your own when both do: a project entry never takes its name; --scope "
            "says otherwise). "
            "Exit 0 when done (or already so), 1 when not found.",
        )  # fmt: skip
        _add_common(toggle, level=2)
        toggle.add_argument("name", metavar="NAME", help="the server's name")
        toggle.add_argument("-s", "--scope", choices=("user", "project"), help=scope_help)
    import_cmd = mcp_commands.add_parser(
        "import",
        help="copy servers from Claude Desktop, Claude Code, Cursor, VS Code, Gemini",
        description="Find the MCP servers other tools have configured (their usual files on "
        "Linux and macOS, user and project) and add them to cat-code's config. Servers of "
        "the project's own files (.vscode/, .cursor/, .gemini/) go into ./.mcp.json as "
        "project servers waiting for approval. A name cat-code already has is skipped "
        "unless --force. Exit 0 when done.",
    )
    _add_common(import_cmd, level=2)
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
    # -- resources and prompts (issue 12) --
    resources_cmd = mcp_commands.add_parser(
        "resources", help="list the resources and resource templates of every server (or one)",
        description="List the resources (and resource templates) of every connected server, "
        "or of SERVER. Exit 0 on success, 1 when a server failed, 2 for an unknown SERVER.",
    )  # fmt: skip
    _add_common(resources_cmd, level=2)
    resources_cmd.add_argument("server", nargs="?", metavar="SERVER", help="only this server")
    resources_cmd.add_argument(
        "--json", action="store_true",
        help='print {"resources": [...], "resourceTemplates": [...]}, each entry with its server',
    )  # fmt: skip
    read_cmd = mcp_commands.add_parser(
        "read", help="read one resource and print its contents",
        description="Read the resource URI of SERVER. Text is printed as it is; binary "
        "contents are written as raw bytes when stdout is not a terminal (redirect to a "
        "file), described on a terminal. Exit 0 on success, 1 when the read failed, 2 for "
        "an unknown SERVER.",
    )  # fmt: skip
    _add_common(read_cmd, level=2)
    read_cmd.add_argument("server", metavar="SERVER", help="the server's name in mcp.json")
    read_cmd.add_argument("uri", metavar="URI", help="the resource's URI (see mcp resources)")
    read_cmd.add_argument(
        "--json", action="store_true", help="print the result object (contents as sent)"
    )
    prompts_cmd = mcp_commands.add_parser(
        "prompts", help="list the prompts of every server (or of one)",
        description="List the prompts of every connected server, or of SERVER, with the "
        "REPL command that runs each (/mcp__SERVER__PROMPT ARGS). Exit 0 on success, 1 when "
        "a server failed, 2 for an unknown SERVER.",
    )  # fmt: skip
    _add_common(prompts_cmd, level=2)
    prompts_cmd.add_argument("server", nargs="?", metavar="SERVER", help="only this server")
    prompts_cmd.add_argument("--json", action="store_true", help="print a JSON array")
    skills_cmd = mcp_commands.add_parser(
        "skills", help="list the skills of every server (or of one)",
        description="List the skills (SEP-2640) of every connected server, or of SERVER: "
        "name, files and description. No skill's file is read. Exit 0 on success, 1 when a "
        "server failed, 2 for an unknown SERVER.",
    )  # fmt: skip
    _add_common(skills_cmd, level=2)
    skills_cmd.add_argument("server", nargs="?", metavar="SERVER", help="only this server")
    skills_cmd.add_argument(
        "--json", action="store_true",
        help="print a JSON array of the entries as listed (uri, frontmatter, resources), "
        "each with its server",
    )  # fmt: skip
    return parser


class _MaxTurns(argparse.Action):
    """``--max-turns N``: a whole number ≥ 1, else a usage error that names the option
    (0 would silently mean the default, a negative number no turn at all)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        text = str(values).strip()
        if not text.isascii() or not text.isdigit() or int(text) < 1:
            parser.error(f"--max-turns must be a whole number ≥ 1, not {values!r}")
        setattr(namespace, self.dest, int(text))


def _add_dir(text: str) -> Path:
    """The ``type`` of ``--add-dir``: argparse turns the error into a usage error (exit 2)."""
    from cat_code.mcp.roots import RootError, check_dir  # pathlib only: cheap

    try:
        return check_dir(text)
    except RootError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
