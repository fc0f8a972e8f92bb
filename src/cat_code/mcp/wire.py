"""Wire shapes (placeholder until the typed module lands)."""

from __future__ import annotations

from typing import Any, TypedDict


class ToolDefinition(TypedDict, total=False):
    name: str
    description: str
    inputSchema: dict[str, Any]
