"""The official Python SDK's server (`mcp` 2.x) over stdio, with ``instructions``.

Usage: ``python instructions_server.py FILE``: the instructions are FILE's text as it is
when the server starts, so a test can change them and reconnect. The SDK serves both
eras: the 2026-07-28 one sends them in ``server/discover``, the handshake in
``initialize``. One tool, ``ping``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

srv = MCPServer("instructions-test", instructions=Path(sys.argv[1]).read_text())


@srv.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


if __name__ == "__main__":
    srv.run("stdio")
