"""MCP server configuration: load, edit, import, mask."""
