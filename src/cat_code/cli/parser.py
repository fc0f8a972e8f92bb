"""The ``cat-code`` argument parser: every verb, option and help text in one place.

The top level's options are declared here; each verb group declares its own parser in
`cat_code.cli.verbs`. Building it imports only argparse and pathlib, so ``--help`` and the
``mcp`` verbs stay light. Options common to every level (``-v``, ``--mcp-config``, ...) may
be given before or after a verb (`cat_code.cli.verbs.base.merge_levels`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from cat_code import __version__
from cat_code.cli.verbs import add_verbs
from cat_code.cli.verbs.base import add_common

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
  cat-code jobs                           list the background jobs (running, ended)
  cat-code tasks [--list NAME]            print a task list (the model's steps of work)
  cat-code agents                         list the subagent definitions (and their source)

models: ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL) for anthropic:<model>;
OPENAI_API_KEY or OPENAI_BASE_URL (Ollama, llama.cpp, vLLM) for openai:<model>.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cat-code",
        description="A terminal coding agent whose tools plug in through MCP.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cat-code {__version__}")
    add_common(parser)
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
    add_verbs(parser.add_subparsers(dest="command", metavar="COMMAND"))
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
