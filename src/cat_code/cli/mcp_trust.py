"""``cat-code mcp approve NAME... | --all`` and ``cat-code mcp reject NAME...``.

The project's servers (``./.mcp.json``) start only once approved for this folder
(`cat_code.host.config.trust`). These verbs record a decision for the entries as written
now and connect nothing: the next command that connects servers starts an approved one.
Exit 0 when recorded; 2 for an unknown NAME or no NAME at all (nothing is recorded then);
1 when ``./.mcp.json`` cannot be read.
"""

from __future__ import annotations

from cat_code.cli.options import Options
from cat_code.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_error, print_line
from cat_code.host.config.trust import TrustDecision, UnknownProjectServer, decide
from cat_code.host.status import decision_line
from cat_code.mcp.errors import ConfigError


def run_trust_command(args: Options) -> int:
    """``mcp approve`` or ``mcp reject`` (``args.mcp_command``); its exit code."""
    approve = args.mcp_command == "approve"
    every = approve and args.all
    names: list[str] = list(args.names)
    if approve and every and names:
        print_error("mcp approve takes server names or --all (not both)")
        return EXIT_USAGE
    if approve and not every and not names:
        print_error("mcp approve: name the project servers to approve, or --all")
        return EXIT_USAGE
    decision = TrustDecision.APPROVED if approve else TrustDecision.REJECTED
    try:
        decided = decide(names, decision, every=every)
    except UnknownProjectServer as exc:
        print_error(str(exc))
        return EXIT_USAGE
    except ConfigError as exc:
        print_error(str(exc))
        return EXIT_FAILED
    if not decided:
        print_line("No project servers in ./.mcp.json; nothing to approve.")
        return EXIT_OK
    for item in decided:
        print_line(decision_line(item.name, item.target, decision))
        if item.shadowed_by is not None:
            print_error(
                f"note: your own server '{item.name}' ({item.shadowed_by}) is used instead; "
                "rename the project's entry to use it"
            )
    return EXIT_OK
