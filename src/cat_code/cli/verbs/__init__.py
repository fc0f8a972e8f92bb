"""The ``cat-code`` verbs: one module per verb group adds its parsers and sets each one's
run function (``set_defaults(run=...)``), so `cat_code.cli` dispatches once, on
`Options.run`. A run function imports its implementation only when chosen: ``--help``
and the ``mcp`` verbs stay light. To add a verb, see docs/architecture.md ("Adding a CLI
verb").
"""

from __future__ import annotations

from cat_code.cli.verbs import agents, jobs, mcp, project, sessions, tasks
from cat_code.cli.verbs.base import Subcommands

#: The verb groups, in ``cat-code --help`` order.
GROUPS = (sessions, tasks, jobs, agents, project, mcp)


def add_verbs(commands: Subcommands) -> None:
    """Every verb group's parsers, added to the top level's subcommands."""
    for group in GROUPS:
        group.register(commands)


__all__ = ["GROUPS", "Subcommands", "add_verbs"]
