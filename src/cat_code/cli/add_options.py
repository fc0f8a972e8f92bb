"""``mcp add``'s options, declared once: on its parser (`cat_code.cli.verbs.mcp_config`),
and read back as a table for the options given after NAME (`cat_code.cli.mcp_add`), which
argparse hands over unparsed. Imports only argparse: ``--help`` stays light.
"""

from __future__ import annotations

import argparse

from cat_code.cli.verbs.base import add_common

SCOPE_HELP = "user: $CAT_CODE_HOME/mcp.json (the default); project: ./.mcp.json"


def declare_add_options(parser: argparse.ArgumentParser) -> None:
    """Every option ``mcp add`` takes (the common ones included), on ``parser``."""
    add_common(parser, level=2)
    parser.add_argument("-s", "--scope", choices=("user", "project"), help=SCOPE_HELP)
    parser.add_argument(
        "-e",
        "--env",
        action="append",
        metavar="KEY=VALUE",
        help="an environment variable for a stdio server (repeatable)",
    )
    parser.add_argument(
        "-H",
        "--header",
        action="append",
        metavar="'NAME: VALUE'",
        help="an HTTP header for a URL server (repeatable)",
    )
    parser.add_argument(
        "-t",
        "--transport",
        choices=("http", "sse", "stdio"),
        help="http (a URL's default: Streamable HTTP) or sse for a URL; stdio (the "
        "default) for a command after --",
    )
    parser.add_argument(
        "-f", "--force", action="store_true", help="replace an existing entry of the same name"
    )


def add_option_table() -> dict[str, tuple[str, bool]]:
    """Each option string of ``mcp add`` → (its ``dest``, level suffix dropped; whether it
    takes a value), as argparse declared them."""
    parser = argparse.ArgumentParser(add_help=False)
    declare_add_options(parser)
    table: dict[str, tuple[str, bool]] = {}
    for action in parser._actions:  # what argparse itself reads (no public accessor)
        dest = action.dest.removesuffix("_2")
        for option in action.option_strings:
            table[option] = (dest, action.nargs != 0)
    return table
