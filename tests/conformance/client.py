"""Conformance-suite client: cat-code's own MCP client driven by the official harness.

``@modelcontextprotocol/conformance`` starts a mock server per scenario and runs this file
with the server URL as the last argument and the scenario in ``MCP_CONFORMANCE_SCENARIO``.
Each scenario runs the real code paths (`McpClient` over `StreamableHttpTransport`) and the
process exits 0 only if the scenario's actions succeeded. Logs go to stderr.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from cat_code.mcp.client import McpClient
from cat_code.mcp.http import StreamableHttpTransport

logger = logging.getLogger("conformance")

#: The harness kills a client after 60 s (our --timeout); give up cleanly before that.
OVERALL_TIMEOUT_S = 50.0


async def accept_with_defaults(params: dict[str, Any]) -> dict[str, Any]:
    """Accept a form elicitation, filling every field with its schema default."""
    schema = params.get("requestedSchema") or {}
    properties = schema.get("properties") or {}
    content = {
        name: spec["default"]
        for name, spec in properties.items()
        if isinstance(spec, dict) and "default" in spec
    }
    return {"action": "accept", "content": content}


async def initialize(client: McpClient) -> None:
    await client.list_tools()


async def tools_call(client: McpClient) -> None:
    await client.list_tools()
    result = await client.call_tool("add_numbers", {"a": 5, "b": 3})
    _expect_success(result)


async def elicitation_defaults(client: McpClient) -> None:
    await client.list_tools()
    result = await client.call_tool("test_client_elicitation_defaults", {})
    _expect_success(result)


async def sse_retry(client: McpClient) -> None:
    result = await client.call_tool("test_reconnection", {})
    _expect_success(result)


def _expect_success(result: dict[str, Any]) -> None:
    if result.get("isError"):
        raise RuntimeError(f"tool call failed: {result}")
    logger.info("tool result: %s", result.get("content"))


SCENARIOS: dict[str, Callable[[McpClient], Awaitable[None]]] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
}


async def run(scenario: str, url: str) -> None:
    action = SCENARIOS[scenario]
    client = McpClient(
        StreamableHttpTransport(url, name=scenario),
        name=scenario,
        elicitation_handler=accept_with_defaults if scenario.startswith("elicitation") else None,
    )
    try:
        async with asyncio.timeout(OVERALL_TIMEOUT_S):
            await client.connect()
            logger.info("connected: protocol %s", client.protocol_version)
            await action(client)
    finally:
        await client.close()


def main(argv: list[str]) -> int:
    logging.basicConfig(
        level=logging.DEBUG if os.environ.get("CAT_CODE_CONFORMANCE_DEBUG") else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(argv) < 2 or scenario not in SCENARIOS:
        sys.stderr.write(
            f"usage: MCP_CONFORMANCE_SCENARIO=<{'|'.join(SCENARIOS)}> client.py URL "
            f"(got scenario {scenario!r})\n"
        )
        return 2
    try:
        asyncio.run(run(scenario, argv[-1]))
    except Exception:
        logger.exception("scenario %s failed", scenario)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
