"""`ToolRegistry`: the single name → `Tool` table the agent loop calls through.

Invariant: a name maps to exactly one tool. Registering a taken name raises
`DuplicateToolError` naming both owners; MCP tools may be replaced or removed as a
server's tool list changes (``unregister``), built-in tools never are.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable

from cat_code.tools.base import Tool


class DuplicateToolError(ValueError):
    """A tool name is already taken by another tool."""


class ToolRegistry:
    """Name → tool, in registration order."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        existing = self._tools.get(tool.name)
        if existing is not None:
            raise DuplicateToolError(
                f"tool name {tool.name!r} is already registered by {existing.owner}; "
                f"cannot register it again for {tool.owner}"
            )
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> Tool | None:
        """Remove and return the tool called ``name`` (None when there is none)."""
        return self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def list(self) -> builtins.list[Tool]:
        return list(self._tools.values())

    def names(self) -> builtins.list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)
