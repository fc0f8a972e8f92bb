"""``cat-code mcp SUBCOMMAND``: the verb group of the MCP servers, no model needed. Its
subcommands come from one module each, in the order ``mcp --help`` lists them."""

from __future__ import annotations

import argparse

from cat_code.cli.options import Options, Run
from cat_code.cli.verbs import mcp_config, mcp_resources, mcp_servers, mcp_trust
from cat_code.cli.verbs.base import Subcommands, add_common

#: The modules that add ``mcp`` subcommands, in ``mcp --help`` order.
GROUPS = (mcp_servers, mcp_trust, mcp_config, mcp_resources)


def register(commands: Subcommands) -> None:
    mcp = commands.add_parser(
        "mcp", help="inspect and call the configured MCP servers (no model needed)",
        description="Inspect and call the configured MCP servers. No model or API key needed.",
    )  # fmt: skip
    add_common(mcp, level=1)
    mcp.set_defaults(run=_help_of(mcp))
    subcommands = mcp.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND")
    for group in GROUPS:
        group.register(subcommands)


def _help_of(parser: argparse.ArgumentParser) -> Run:
    def run(options: Options) -> int:
        parser.parse_args(["--help"])  # `cat-code mcp` alone: its help, exit 0
        return 0

    return run
