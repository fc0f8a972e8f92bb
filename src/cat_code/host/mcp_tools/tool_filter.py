"""Which of a server's tools are registered: its entry's ``includeTools`` / ``excludeTools``.

Patterns are names or shell globs (``fnmatch.fnmatchcase``: case-sensitive, ``*``, ``?``,
``[...]``) over the server's own tool names, never the registered ``mcp__…`` names. A tool
is kept when ``includeTools`` is absent or one of its patterns matches, and no
``excludeTools`` pattern does: exclude wins. `filter_tools` is pure; `select_tools` adds
one warning per (server, pattern) that matches none of the tools, once per process, so a
typo is named without a line on every tool-list change.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Protocol

from cat_code.mcp.wire import ToolDefinition

logger = logging.getLogger(__name__)


class ToolFilters(Protocol):
    """The two fields of a server entry this module reads."""

    @property
    def include_tools(self) -> tuple[str, ...] | None: ...

    @property
    def exclude_tools(self) -> tuple[str, ...]: ...


def filter_tools(
    tools: Sequence[ToolDefinition],
    include: Sequence[str] | None,
    exclude: Sequence[str],
) -> tuple[list[ToolDefinition], list[str]]:
    """The tools to register, in their order, and the patterns that matched no tool."""
    names = [tool["name"] for tool in tools]
    patterns = [*(include or ()), *exclude]
    unmatched = [p for p in dict.fromkeys(patterns) if not any(fnmatchcase(n, p) for n in names)]
    kept = [
        tool
        for tool in tools
        if (include is None or any(fnmatchcase(tool["name"], p) for p in include))
        and not any(fnmatchcase(tool["name"], p) for p in exclude)
    ]
    return kept, unmatched


#: (server, pattern) pairs already warned about in this process.
_warned: set[tuple[str, str]] = set()


def select_tools(
    server: str, tools: Sequence[ToolDefinition], entry: ToolFilters
) -> list[ToolDefinition]:
    """`filter_tools` with the entry's patterns, warning once about a pattern matching nothing."""
    if entry.include_tools is None and not entry.exclude_tools:
        return list(tools)
    kept, unmatched = filter_tools(tools, entry.include_tools, entry.exclude_tools)
    for pattern in unmatched:
        if (server, pattern) in _warned:
            continue
        _warned.add((server, pattern))
        field = "includeTools" if pattern in (entry.include_tools or ()) else "excludeTools"
        logger.warning(
            "MCP server '%s': %s pattern '%s' matches none of its %d tool(s)",
            server,
            field,
            pattern,
            len(tools),
        )
    if len(kept) < len(tools):
        logger.debug("%s: registering %d of %d tool(s)", server, len(kept), len(tools))
    return kept
