"""``cat-code agents [--json]``: the subagent definitions this folder's sessions offer.

The same listing as the REPL's ``/agents`` (`cat_code.agent.subagents.listing`): the
built-in general-purpose agent, the user's (``$CAT_CODE_HOME/agents/``) and the project's
(``.claude/agents/``, ``.cat-code/agents/``), each with its source; a file that could not
be used is named with why. No model needed; exit 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cat_code.agent.subagents import load_catalogue
from cat_code.agent.subagents.listing import catalogue_json, describe_catalogue
from cat_code.base.safe_text import safe_json
from cat_code.host.state.home import cat_code_home


def run_agents_command(*, json_output: bool) -> int:
    catalogue = load_catalogue(Path.cwd(), cat_code_home() / "agents")
    if json_output:
        sys.stdout.write(safe_json(catalogue_json(catalogue)) + "\n")
    else:
        sys.stdout.write(describe_catalogue(catalogue) + "\n")
    return 0
