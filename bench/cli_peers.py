"""What ``cat-code mcp list`` does, written with the SDK and with the floor: the CLI peers.

``python bench/cli_peers.py sdk|floor CONFIG`` reads the same ``mcp.json``, connects
every server, lists its tools, prints one line per server and closes everything, so its
wall time and peak memory compare with ``cat-code mcp list --mcp-config CONFIG``. Each
imports only what its client needs: the interpreter start-up and imports are part of
what is measured.
"""

from __future__ import annotations

import asyncio
import json
import sys


async def _sdk(entries: dict[str, dict[str, object]]) -> list[str]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def one(name: str, entry: dict[str, object]) -> str:
        params = StdioServerParameters(command=str(entry["command"]), args=list(entry["args"]))  # type: ignore[call-overload]
        async with Client(params, mode="legacy") as client:
            tools = await client.list_tools()
        return f"{name}  CONNECTED  {len(tools.tools)} tool(s)"

    return list(await asyncio.gather(*(one(n, e) for n, e in entries.items())))


async def _floor(entries: dict[str, dict[str, object]]) -> list[str]:
    from floor import FloorStdio

    async def one(name: str, entry: dict[str, object]) -> str:
        client, tools = await FloorStdio.connect(str(entry["command"]), list(entry["args"]))  # type: ignore[call-overload]
        await client.close()
        return f"{name}  CONNECTED  {len(tools['tools'])} tool(s)"

    return list(await asyncio.gather(*(one(n, e) for n, e in entries.items())))


def main() -> int:
    impl, config = sys.argv[1], sys.argv[2]
    with open(config, encoding="utf-8") as f:
        entries = json.load(f)["mcpServers"]
    lines = asyncio.run(_sdk(entries) if impl == "sdk" else _floor(entries))
    sys.stdout.write("MCP servers:\n" + "".join(f"  {line}\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
