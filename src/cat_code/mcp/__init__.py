"""cat-code's MCP client library: transports, sessions, the client, auth, wire types, errors.

Layers, strictly downward: ``transports/`` (stdio, Streamable HTTP, legacy SSE over one
HTTP pipeline; era-neutral) → ``session/`` (the handshake and stateless eras) →
``client.McpClient`` (requests, listings, calls, server-originated messages). ``auth/``
plugs into the HTTP pipeline; ``errors`` draws the one error tree; ``wire`` types the
messages. It imports nothing of cat-code outside itself and no terminal or CLI library:
the host (`cat_code.host`) passes in paths, settings and handlers.

The names below are the public surface. They load on first use (PEP 562), so
``import cat_code.mcp`` stays cheap and a stdio-only user never imports the HTTP client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cat_code.mcp.client import McpClient
    from cat_code.mcp.errors import (
        AuthenticationRequired,
        ConnectError,
        HttpStatusError,
        McpClientError,
        McpError,
        ProcessExited,
        ProtocolError,
        RequestTimeout,
        TransportClosed,
        TransportError,
    )
    from cat_code.mcp.roots import Roots
    from cat_code.mcp.transports.base import Transport
    from cat_code.mcp.transports.http import StreamableHttpTransport
    from cat_code.mcp.transports.sse import LegacySseTransport
    from cat_code.mcp.transports.stdio import StdioTransport
    from cat_code.mcp.wire import (
        CallToolResult,
        GetPromptResult,
        Prompt,
        ReadResourceResult,
        Resource,
        ToolDefinition,
    )

#: Public name → the module that defines it.
_WHERE = {
    "McpClient": "cat_code.mcp.client",
    "Transport": "cat_code.mcp.transports.base",
    "StdioTransport": "cat_code.mcp.transports.stdio",
    "StreamableHttpTransport": "cat_code.mcp.transports.http",
    "LegacySseTransport": "cat_code.mcp.transports.sse",
    "Roots": "cat_code.mcp.roots",
    **dict.fromkeys(
        (
            "McpClientError",
            "TransportError",
            "ConnectError",
            "TransportClosed",
            "ProcessExited",
            "HttpStatusError",
            "AuthenticationRequired",
            "RequestTimeout",
            "ProtocolError",
            "McpError",
        ),
        "cat_code.mcp.errors",
    ),
    **dict.fromkeys(
        (
            "ToolDefinition",
            "CallToolResult",
            "Resource",
            "ReadResourceResult",
            "Prompt",
            "GetPromptResult",
        ),
        "cat_code.mcp.wire",
    ),
}

__all__ = [
    "AuthenticationRequired",
    "CallToolResult",
    "ConnectError",
    "GetPromptResult",
    "HttpStatusError",
    "LegacySseTransport",
    "McpClient",
    "McpClientError",
    "McpError",
    "ProcessExited",
    "Prompt",
    "ProtocolError",
    "ReadResourceResult",
    "RequestTimeout",
    "Resource",
    "Roots",
    "StdioTransport",
    "StreamableHttpTransport",
    "ToolDefinition",
    "Transport",
    "TransportClosed",
    "TransportError",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next lookup is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
