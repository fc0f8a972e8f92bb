"""The official Python SDK's server (`mcp` 2.x) over HTTP, a test peer for cat-code's client.

Usage: ``python sdk_http_server.py PORT MODE`` with MODE one of ``sse`` (Streamable HTTP,
SSE answers), ``json`` (JSON answers), ``stateless`` (no sessions) or ``legacy`` (the
deprecated 2024-11-05 HTTP+SSE transport). Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

srv = MCPServer("sdk-test-server")


@srv.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@srv.tool()
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@srv.tool()
def big(size: int) -> str:
    """Return a string of `size` characters."""
    return "x" * size


@srv.tool()
async def count(n: int, ctx: Context) -> str:
    """Report n progress steps, then answer."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
    return f"counted to {n}"


class Person(BaseModel):
    name: str
    age: int


@srv.tool()
async def ask(ctx: Context) -> str:
    """Ask the client for a person (elicitation inside the call's stream)."""
    result = await ctx.elicit("Who are you?", Person)
    if result.action == "accept" and result.data is not None:
        return f"hello {result.data.name}, {result.data.age}"
    return f"no answer ({result.action})"


def main() -> None:
    port, mode = int(sys.argv[1]), sys.argv[2]
    if mode == "legacy":
        srv.run("sse", host="127.0.0.1", port=port)
        return
    srv.run(
        "streamable-http",
        host="127.0.0.1",
        port=port,
        json_response=mode == "json",
        stateless_http=mode == "stateless",
    )


if __name__ == "__main__":
    main()
