"""What a reload of the config changes: which servers start, stop, restart or go on.

`plan_reload` compares the running servers' entries with a newly read config by value
(every field of the entry, ``${VAR}`` already expanded, but not the file it came from:
an entry moved from one file to another unchanged keeps running). A name only in the
new config is added, one only in the old is removed (a valid entry that became broken
is removed too: the broken entry shows as FAILED), one in both with a different entry
is changed; everything else is unchanged. The plan is pure data; `McpPool.reload`
carries it out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from cat_code.host.config.load import McpConfig, ServerConfig


@dataclass(slots=True)
class ReloadPlan:
    """Server names by what a reload does to them, each in config order."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def nothing(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def summary(self) -> str:
        """One line: what changed, e.g. ``1 added (b), 1 removed (a), 2 unchanged``."""
        parts = [
            f"{len(names)} {what} ({', '.join(names)})"
            for what, names in (
                ("added", self.added),
                ("removed", self.removed),
                ("restarted", self.changed),
            )
            if names
        ]
        parts.append(f"{len(self.unchanged)} unchanged")
        return ", ".join(parts)


def same_entry(old: ServerConfig, new: ServerConfig) -> bool:
    """Whether two entries describe the same server (the file they came from aside)."""
    return dataclasses.replace(old, source=new.source) == new


def plan_reload(running: Sequence[ServerConfig], config: McpConfig) -> ReloadPlan:
    """What taking ``config`` means for servers running with the entries ``running``."""
    old = {entry.name: entry for entry in running}
    plan = ReloadPlan()
    for entry in config.servers:
        before = old.get(entry.name)
        if before is None:
            plan.added.append(entry.name)
        elif same_entry(before, entry):
            plan.unchanged.append(entry.name)
        else:
            plan.changed.append(entry.name)
    new_names = {entry.name for entry in config.servers}
    plan.removed = [entry.name for entry in running if entry.name not in new_names]
    return plan
