"""Built-in tools that let the model see and read the servers' resources (read-only).

``list_mcp_resources`` lists the resources and resource templates of every connected
server (or of one) as JSON, each with its server; ``read_mcp_resource`` reads one
resource by server and URI and gives its text (a blob as its type and size; an image
also as an image, for models that take them), a window of it at a time when it is long
(`resource_excerpt`). They are
registered only when MCP servers are configured, and work through the pool, so a server
that reconnects or changes its list needs nothing re-registered. Like every tool they
never raise: a failure is an error result naming the server and the URI.

Permission rules see through them: a call naming a ``server`` gives ``mcp__<server>__*``
as a permission subject, so a rule denying every tool of that server refuses it too;
``list_mcp_resources`` without a server leaves out the servers ``hidden`` says are denied.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cat_code.host.mcp_tools.resource_excerpt import excerpt
from cat_code.host.mcp_tools.tool_adapter import media_of, sanitize
from cat_code.mcp.errors import McpClientError, McpError, describe_error
from cat_code.mcp.resources import contents_text
from cat_code.mcp.wire import ReadResourceResult
from cat_code.tools.base import Media, ProgressCallback, Tool, ToolResult

if TYPE_CHECKING:
    from cat_code.host.servers.pool import McpPool

logger = logging.getLogger(__name__)

LIST_NAME = "list_mcp_resources"
READ_NAME = "read_mcp_resource"
#: The spec's "resource not found" code before 2026 (2026 servers use -32602).
RESOURCE_NOT_FOUND = -32002


def _server_subjects(arguments: dict[str, Any]) -> list[str]:
    """The whole server a call is about, as the rule covering all its tools names it."""
    server = arguments.get("server")
    return [f"mcp__{sanitize(server)}__*"] if isinstance(server, str) and server else []


def _never(server: str) -> bool:
    return False


class ListMcpResourcesTool(Tool):
    """``list_mcp_resources``: what the connected MCP servers publish to be read."""

    name = LIST_NAME
    description = (
        "List the resources (files, documents, schemas...) that the connected MCP servers "
        "offer, with their server, uri, name, mimeType and description, plus resource "
        "templates (uriTemplate with {variables} to fill in). Read one with read_mcp_resource."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "Only this MCP server's resources"},
        },
    }
    read_only = True

    def __init__(self, pool: McpPool, hidden: Callable[[str], bool] = _never) -> None:
        self.pool = pool
        #: Servers left out of a listing of all (those a permission rule denies).
        self.hidden = hidden

    def permission_subjects(self, arguments: dict[str, Any]) -> list[str]:
        return _server_subjects(arguments)

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        server = arguments.get("server")
        if server is not None and not isinstance(server, str):
            return ToolResult.error("Error: 'server' must be a string")
        try:
            resources = await self.pool.resources(server or None)
            templates = await self.pool.resource_templates(server or None)
        except McpClientError as exc:
            return ToolResult.error(f"Error: {describe_error(exc)}")

        def shown(name: str) -> bool:  # one server asked for: the permission check ran
            return bool(server) or not self.hidden(name)

        listed: list[dict[str, Any]] = [
            {"server": name, **_public(entry)} for name, entry in resources.items if shown(name)
        ]
        listed += [
            {"server": name, **_public(entry)} for name, entry in templates.items if shown(name)
        ]
        failures = {
            name: why
            for name, why in {**templates.failures, **resources.failures}.items()
            if shown(name)
        }
        body = json.dumps(listed, ensure_ascii=False, indent=1) if listed else "no resources"
        for name, why in failures.items():
            body += f"\n(MCP server '{name}' could not list its resources: {why})"
        return ToolResult(content=body, is_error=not listed and bool(failures))


class ReadMcpResourceTool(Tool):
    """``read_mcp_resource``: one resource's contents, by server and URI."""

    name = READ_NAME
    description = (
        "Read a resource of an MCP server by its server name and uri (from "
        "list_mcp_resources, or a resource template filled in). Returns its text; binary "
        "contents are described by type and size. A long text comes in parts: the note at "
        "the end of a part gives the offset to read on from."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "The MCP server's name"},
            "uri": {"type": "string", "description": "The resource's uri"},
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "Start at this character of the text (default 0)",
            },
        },
        "required": ["server", "uri"],
    }
    read_only = True

    def __init__(self, pool: McpPool) -> None:
        self.pool = pool

    def permission_subjects(self, arguments: dict[str, Any]) -> list[str]:
        return _server_subjects(arguments)

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        server, uri = arguments.get("server"), arguments.get("uri")
        if not isinstance(server, str) or not server:
            return ToolResult.error("Error: 'server' must be a non-empty string")
        if not isinstance(uri, str) or not uri:
            return ToolResult.error("Error: 'uri' must be a non-empty string")
        offset = arguments.get("offset", 0)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            return ToolResult.error("Error: 'offset' must be a whole number, 0 or more")
        try:
            result = await self.pool.use(server, lambda c: c.read_resource(uri), heal=True)
        except McpClientError as exc:
            return ToolResult.error(f"Error: {read_failure(server, uri, exc)}")
        text = contents_text(result)
        if offset and offset >= len(text):
            return ToolResult.error(
                f"Error: offset {offset} is past the end of {uri}: it has {len(text)} characters"
            )
        return ToolResult(
            content=excerpt(text, server, uri, offset), raw=result, media=_images(result)
        )


def read_failure(server: str, uri: str, exc: BaseException) -> str:
    """Why reading ``uri`` from ``server`` failed, as one line naming both."""
    if isinstance(exc, McpError) and exc.code == RESOURCE_NOT_FOUND:
        return f"MCP server '{server}' has no resource {uri} ({exc.message})"
    return f"cannot read {uri} from MCP server '{server}': {describe_error(exc)}"


def _images(result: ReadResourceResult) -> list[Media]:
    """Image blobs, for models that take images (the text still describes each)."""
    images = []
    for contents in result["contents"]:
        mime, blob = contents.get("mimeType"), contents.get("blob")
        if isinstance(mime, str) and mime.startswith("image/") and isinstance(blob, str):
            image = media_of({"type": "image", "data": blob, "mimeType": mime})
            if image is not None:
                images.append(image)
    return images


def _public(entry: Any) -> dict[str, Any]:
    """A listed entry without the fields only machines read (``_meta``, icons)."""
    return {k: v for k, v in entry.items() if k not in ("_meta", "icons")}


def resource_tools(pool: McpPool, hidden: Callable[[str], bool] = _never) -> list[Tool]:
    """The resource tools, reading through ``pool`` (none when no server is configured);
    ``hidden`` names the servers a listing of all leaves out (see the module docstring)."""
    if not pool.servers:
        return []
    return [ListMcpResourcesTool(pool, hidden), ReadMcpResourceTool(pool)]


__all__ = [
    "LIST_NAME",
    "READ_NAME",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "read_failure",
    "resource_tools",
]
