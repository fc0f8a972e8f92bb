"""The command line as one typed, frozen object: `Options`, built from argparse's namespace
here and nowhere else (`from_namespace`), then passed down to the verb that runs.

Nothing below `cat_code.cli` imports argparse (an import-linter contract): the REPL reads
the attributes it needs through its own protocol, the host takes plain values. Every
``dest`` a parser declares is a field here; an unknown one is a bug, refused at once.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from cat_code.host.worktrees import Worktree

from cat_code.base.surrogates import argv_text

#: A verb's run function: the options in, the exit code out.
Run = Callable[["Options"], int]


@dataclass(frozen=True, slots=True)
class Options:
    """Everything the command line said, after the levels are merged (`merge_levels`)."""

    #: The verb's run function (``set_defaults(run=...)`` in `cat_code.cli.verbs`); None
    #: for the REPL and ``-p``.
    run: Run | None = None
    command: str | None = None
    mcp_command: str | None = None
    project_command: str | None = None
    worktree_command: str | None = None
    # -- common to every level
    mcp_config: tuple[str, ...] = ()
    add_dir: tuple[Path, ...] = ()
    trust_project: bool = False
    verbose: int = 0
    # -- the agent: REPL and -p
    prompt: str | None = None
    model: str | None = None
    yes: bool = False
    allow_tool: tuple[str, ...] = ()
    permission_mode: str | None = None
    max_turns: int | None = None
    output_format: Literal["text", "json", "stream-json"] = "text"
    append_system_prompt: str | None = None
    continue_session: bool = False
    resume: str | None = None
    #: ``-w/--worktree [NAME]``: None without it, "" for a generated name.
    worktree: str | None = None
    #: The worktree ``-w`` made, once made (`cat_code.cli.worktree_session`); never parsed.
    active_worktree: Worktree | None = None
    # -- the verbs' own arguments
    json: bool = False
    server: str | None = None
    tool: str | None = None
    arguments: str = "{}"
    uri: str | None = None
    no_browser: bool = False
    names: tuple[str, ...] = ()
    all: bool = False
    name: str | None = None
    scope: str | None = None
    env: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    transport: str | None = None
    force: bool = False
    rest: tuple[str, ...] = ()
    source: str | None = None
    dry_run: bool = False
    kinds: tuple[str, ...] = ()
    task_list: str | None = None

    @property
    def config_paths(self) -> list[Path] | None:
        """The ``--mcp-config`` files, or None for the default ones."""
        return [Path(p) for p in self.mcp_config] if self.mcp_config else None


#: The options that are text (not file names), recovered as UTF-8 under a legacy locale.
_TEXT_OPTIONS = ("prompt", "append_system_prompt")
_FIELDS = frozenset(f.name for f in dataclasses.fields(Options))


def from_namespace(args: argparse.Namespace) -> Options:
    """The options argparse parsed (levels merged); lists become tuples, None stays."""
    values = vars(args)
    unknown = sorted(set(values) - _FIELDS)
    if unknown:
        raise TypeError(f"the parser declares {unknown}, which Options does not have")
    given: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in values.items() if v is not None
    }
    for key in _TEXT_OPTIONS:  # text for the model, not file names: the UTF-8 typed
        if isinstance(given.get(key), str):
            given[key] = argv_text(given[key])
    return Options(**given)


__all__ = ["Options", "Run", "from_namespace"]
