"""A bare agent: the floor for ``oneshot.first_token`` and ``repl.ready``.

``python bench/bare_agent.py oneshot CONFIG PROMPT`` does what ``cat-code -p`` does, with
nothing but asyncio and ``httpx2``: starts every stdio server of CONFIG (``mcp.json``
shape) in its own session, initializes each and lists its tools, streams a Messages API
request (``ANTHROPIC_BASE_URL``) with those tools, runs the tool calls the answer asks
for, streams again, and writes the answer's text to stdout as it arrives. ``repl CONFIG``
does what the REPL does before it takes input: starts the servers (without waiting for
them), builds its HTTP client, writes the prompt ``›`` and reads stdin until EOF. Then it
closes the servers (stdin EOF, SIGTERM to the group) and exits. No timeouts, no
validation, no error handling: whatever cat-code spends above this is its price.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2


class Server:
    """One stdio server; answers are matched to requests by id, server requests refused."""

    def __init__(self, name: str, process: asyncio.subprocess.Process) -> None:
        self.name = name
        self.process = process
        self.waiters: dict[int, asyncio.Future[Any]] = {}
        self.next_id = 0
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, name: str, entry: dict[str, Any]) -> Server:
        process = await asyncio.create_subprocess_exec(
            entry["command"],
            *entry.get("args", []),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=64 * 1024 * 1024,
            start_new_session=True,
        )
        return cls(name, process)

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            message = json.loads(line)
            waiter = self.waiters.pop(message.get("id"), None) if "method" not in message else None
            if waiter is not None:
                waiter.set_result(message.get("result"))
            elif "method" in message and "id" in message:
                error = {"code": -32601, "message": "not supported"}
                self._write({"jsonrpc": "2.0", "id": message["id"], "error": error})

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.next_id += 1
        waiter = asyncio.get_running_loop().create_future()
        self.waiters[self.next_id] = waiter
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)
        return await waiter

    async def connect(self) -> list[dict[str, Any]]:
        info = {"name": "bare", "version": "0"}
        await self.request(
            "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}
        )
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return list((await self.request("tools/list"))["tools"])

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        await self.process.wait()
        self.reader.cancel()


async def _stream(
    http: httpx2.AsyncClient, url: str, headers: dict[str, str], body: dict[str, Any]
) -> tuple[list[dict[str, Any]], str]:
    """One streamed Messages answer: its content blocks (text written out as it comes)."""
    blocks: dict[int, dict[str, Any]] = {}
    stop = ""
    async with http.stream("POST", url, headers=headers, json=body) as response:
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line[5:])
            kind = event.get("type")
            if kind == "content_block_start":
                blocks[event["index"]] = {**event["content_block"], "json": ""}
            elif kind == "content_block_delta":
                block, delta = blocks[event["index"]], event["delta"]
                if delta["type"] == "text_delta":
                    block["text"] += delta["text"]
                    sys.stdout.write(delta["text"])
                    sys.stdout.flush()
                elif delta["type"] == "input_json_delta":
                    block["json"] += delta["partial_json"]
            elif kind == "message_delta":
                stop = event["delta"].get("stop_reason") or stop
    content = []
    for _, block in sorted(blocks.items()):
        raw = block.pop("json")
        if block["type"] == "tool_use":
            block["input"] = json.loads(raw) if raw else {}
        content.append(block)
    return content, stop


async def oneshot(entries: dict[str, Any], prompt: str) -> None:
    servers = [await Server.start(name, entry) for name, entry in entries.items()]
    # Imported while the servers start, as a careful script would.
    import httpx2

    http = httpx2.AsyncClient(timeout=600)
    try:
        listed = await asyncio.gather(*(server.connect() for server in servers))
        by_name: dict[str, tuple[Server, str]] = {}
        tools = []
        for server, server_tools in zip(servers, listed, strict=True):
            for tool in server_tools:
                name = f"mcp__{server.name}__{tool['name']}"
                by_name[name] = (server, tool["name"])
                tools.append(
                    {
                        "name": name,
                        "description": tool.get("description", ""),
                        "input_schema": tool["inputSchema"],
                    }
                )
        url = os.environ["ANTHROPIC_BASE_URL"].rstrip("/") + "/v1/messages"
        headers = {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"}
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        while True:
            body = {
                "model": "claude-sonnet-5-5",
                "max_tokens": 8192,
                "stream": True,
                "messages": messages,
                "tools": tools,
            }
            content, stop = await _stream(http, url, headers, body)
            if stop != "tool_use":
                break
            messages.append({"role": "assistant", "content": content})
            results = []
            for block in content:
                if block["type"] != "tool_use":
                    continue
                server, tool = by_name[block["name"]]
                result = await server.request(
                    "tools/call", {"name": tool, "arguments": block["input"]}
                )
                text = "".join(c.get("text", "") for c in result["content"])
                results.append({"type": "tool_result", "tool_use_id": block["id"], "content": text})
            messages.append({"role": "user", "content": results})
        sys.stdout.write("\n")
        sys.stdout.flush()
    finally:
        await http.aclose()
        await asyncio.gather(*(server.close() for server in servers))


async def repl(entries: dict[str, Any]) -> None:
    servers = [await Server.start(name, entry) for name, entry in entries.items()]
    connecting = [asyncio.create_task(server.connect()) for server in servers]
    import httpx2

    http = httpx2.AsyncClient(timeout=600)
    sys.stdout.write("› ")
    sys.stdout.flush()
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for task in connecting:
        task.cancel()
    await http.aclose()
    await asyncio.gather(*(server.close() for server in servers))


def main() -> int:
    mode, config = sys.argv[1], sys.argv[2]
    with open(config, encoding="utf-8") as f:
        entries = json.load(f)["mcpServers"]
    if mode == "oneshot":
        asyncio.run(oneshot(entries, sys.argv[3]))
    else:
        asyncio.run(repl(entries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
