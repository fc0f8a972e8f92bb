"""``cat-code hooks [--json]``: every configured hook, its file, and whether it runs.

Reads the settings files as a session would (`load_hooks`), runs nothing. Exit 0; 1 while
a project's hook waits for approval (like ``cat-code project show``).
"""

from __future__ import annotations

import json
from pathlib import Path

from cat_code.agent.hooks import load_hooks
from cat_code.agent.hooks.listing import hook_lines, hooks_json
from cat_code.cli.output import EXIT_FAILED, EXIT_OK, print_line


def run_hooks_command(*, as_json: bool, trust_project: bool, cwd: Path | None = None) -> int:
    """List the hooks (see the module docstring); the exit code."""
    config = load_hooks(cwd, trust_project=trust_project)
    if as_json:
        print_line(json.dumps(hooks_json(config), indent=2, ensure_ascii=False))
    else:
        for line in hook_lines(config):
            print_line(line)
    waiting = config.withheld and not config.rejected
    return EXIT_FAILED if waiting else EXIT_OK
