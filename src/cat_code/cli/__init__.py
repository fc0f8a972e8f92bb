"""The ``cat-code`` command line.

``cat-code`` starts the REPL, ``cat-code -p PROMPT`` runs the agent once, and
``cat-code mcp list|tools|call|login|logout`` inspect, use and sign in to the configured
MCP servers without a model; ``cat-code sessions`` lists the saved conversations. Parsing
happens here; each mode is imported only when chosen, so ``--help`` and the ``mcp``
commands never import the model SDKs or the terminal UI.
"""

from __future__ import annotations

from collections.abc import Sequence

from cat_code.cli.log import configure_logging
from cat_code.cli.parser import build_parser, merge_levels


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    merge_levels(args)
    configure_logging(args.verbose)
    try:
        if args.command == "mcp":
            if args.mcp_command is None:
                parser.parse_args(["mcp", "--help"])
            from cat_code.cli.mcp_servers import run_mcp_command

            return run_mcp_command(args)
        if args.command == "sessions":
            from cat_code.cli.sessions import run_sessions_command

            return run_sessions_command(args)
        if args.prompt is not None:
            from cat_code.cli.oneshot import run_oneshot

            return run_oneshot(args)
        from cat_code.repl.app import run_repl

        return run_repl(args)
    except KeyboardInterrupt:
        # SIGINT outside a command's handlers (`cat_code.host.shutdown`): the same 128 + N.
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
