"""The host's tool surface: the `Tool` interface, results, and the one registry.

Built-in tools and MCP tools are registered side by side in a `ToolRegistry`; the
agent loop only ever sees `Tool` objects and never knows which kind it holds.
"""

from cat_code.tools.base import FileChange, Media, Tool, ToolResult
from cat_code.tools.registry import DuplicateToolError, ToolRegistry

__all__ = ["DuplicateToolError", "FileChange", "Media", "Tool", "ToolRegistry", "ToolResult"]
