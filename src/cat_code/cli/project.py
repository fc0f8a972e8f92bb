"""``cat-code project [show] | approve [KIND...] | reject [KIND...]``: the project's
trust-bearing content other than its servers.

A repository's ``.cat-code/settings.json`` may only narrow what cat-code does until the
user approves it: its deny rules always apply, its allow rules (`ContentKind.RULES`) only
once approved as written (`cat_code.host.config.project_trust`). ``show`` lists what the project
brings and whether it is approved; ``approve`` / ``reject`` record a decision for every
kind (or the KINDs named) as written now. The project's servers keep their own verbs
(``cat-code mcp approve``). Exit 0; 1 while a kind waits for approval (``show``), like
``mcp list``; 2 for an unknown KIND.
"""

from __future__ import annotations

from cat_code.cli.options import Options
from cat_code.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_error, print_line
from cat_code.host.config.project_trust import ProjectContent, decide_content, project_content
from cat_code.host.config.trust import ContentKind, TrustDecision
from cat_code.host.state.settings import project_settings_path


def _state(content: ProjectContent) -> str:
    if content.decision is TrustDecision.APPROVED:
        return "APPROVED"
    return "REJECTED" if content.decision is TrustDecision.REJECTED else "NEEDS_APPROVAL"


def run_project_command(args: Options) -> int:
    """``cat-code project ...`` (``args.project_command``); its exit code."""
    verb = args.project_command or "show"
    if verb == "show":
        found = project_content()
        if not found:
            where = project_settings_path()
            print_line(f"No allow rules to approve in {where} (servers: cat-code mcp list).")
            return EXIT_OK
        for content in found:
            print_line(f"{_state(content)}  {content.describe()}")
        waiting = [c for c in found if c.decision is None]
        if waiting:
            print_line(
                "They do not apply until you approve them: cat-code project approve "
                "(or cat-code project reject); the project's deny rules always apply."
            )
        return EXIT_FAILED if waiting else EXIT_OK
    known = [str(kind) for kind in ContentKind]
    unknown = [k for k in args.kinds if k not in known]
    if unknown:
        print_error(f"project {verb}: unknown KIND {unknown[0]!r} (known: {', '.join(known)})")
        return EXIT_USAGE
    kinds = tuple(ContentKind(k) for k in args.kinds) or tuple(ContentKind)
    decision = TrustDecision.APPROVED if verb == "approve" else TrustDecision.REJECTED
    decided = decide_content(decision, kinds)
    if not decided:
        print_line(f"No allow rules in {project_settings_path()}; nothing to {verb}.")
        return EXIT_OK
    for content in decided:
        if decision is TrustDecision.APPROVED:
            print_line(f"Approved for this folder: {content.describe()}")
        else:
            print_line(f"Rejected (they will not apply in this folder): {content.describe()}")
    return EXIT_OK
