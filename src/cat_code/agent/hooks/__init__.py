"""Hooks: user scripts that run on the agent's events, with Claude Code's contract.

`config` reads them from the settings files (a project's only once approved),
`matching` decides which run, `runner` runs one as a child process in its own process
group, `decisions` reads what each said and merges them, and `events` (`Hooks`) fires an
event for the loop and the front ends. See docs/hooks.md.
"""

from cat_code.agent.hooks.config import (
    DEFAULT_TIMEOUT_S,
    HookCommand,
    HookConfig,
    HookEvent,
    HookScope,
    load_hooks,
    parse_hooks,
)
from cat_code.agent.hooks.decisions import PermissionDecision, Verdict, merge, read_run
from cat_code.agent.hooks.events import Hooks
from cat_code.agent.hooks.matching import matches
from cat_code.agent.hooks.runner import HookRun, run_hook

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "HookCommand",
    "HookConfig",
    "HookEvent",
    "HookRun",
    "HookScope",
    "Hooks",
    "PermissionDecision",
    "Verdict",
    "load_hooks",
    "matches",
    "merge",
    "parse_hooks",
    "read_run",
    "run_hook",
]
