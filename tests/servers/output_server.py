#!/usr/bin/env python3
"""An MCP stdio server for the output-size tests, standard library only.

Tools: ``text {chars, width}`` (exactly ``chars`` characters: numbered lines of ``width``
characters, or one line when ``width`` is 0, ending in ``END``); ``generous {chars}``
(the same, from a tool whose ``_meta`` raises its limit to 300,000 characters);
``image {bytes}`` (a PNG of that many bytes, between two text blocks); ``audio`` (a tiny
WAV); ``sleep {seconds}`` (answers after that long, in its own thread, so the server
keeps serving meanwhile). Exits when stdin closes.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
from typing import Any

_lock = threading.Lock()
PNG_HEADER = b"\x89PNG\r\n\x1a\n"
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x80>\x00\x00"


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"test tool {name}",
        "inputSchema": {"type": "object"},
        **extra,
    }


TOOLS = [
    tool("text"),
    tool("generous", _meta={"anthropic/maxResultSizeChars": 300_000}),
    tool("image"),
    tool("audio"),
    tool("sleep"),
]


def send(message: dict[str, Any]) -> None:
    with _lock:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def long_text(chars: int, width: int) -> str:
    """Exactly ``chars`` characters ending in ``END``; lines ``width`` long (0: one line)."""
    if width <= 0:
        return "x" * (chars - 3) + "END"
    lines = []
    total = 0
    number = 1
    while total < chars:
        line = f"line {number} ".ljust(width - 1, "y") + "\n"
        lines.append(line)
        total += len(line)
        number += 1
    return "".join(lines)[: chars - 3] + "END"


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    if name in ("text", "generous"):
        body = long_text(int(args["chars"]), int(args.get("width", 0)))
        return {"content": [{"type": "text", "text": body}]}
    if name == "image":
        size = int(args.get("bytes", 64))
        data = base64.b64encode(PNG_HEADER + b"\0" * (size - len(PNG_HEADER))).decode()
        return {
            "content": [
                {"type": "text", "text": "before"},
                {"type": "image", "data": data, "mimeType": "image/png"},
                {"type": "text", "text": "after"},
            ]
        }
    if name == "audio":
        data = base64.b64encode(WAV).decode()
        return {"content": [{"type": "audio", "data": data, "mimeType": "audio/wav"}]}
    raise LookupError(name)


def handle(message: dict[str, Any]) -> None:
    method, request_id = message.get("method"), message.get("id")
    params = message.get("params") or {}
    if request_id is None:
        return
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "output", "version": "0"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and params.get("name") == "sleep":
        seconds = float((params.get("arguments") or {}).get("seconds", 1))
        answer = {"jsonrpc": "2.0", "id": request_id, "result": {"content": [
            {"type": "text", "text": f"slept {seconds:g} s"}]}}  # fmt: skip
        timer = threading.Timer(seconds, send, (answer,))
        timer.daemon = True
        timer.start()
        return
    elif method == "tools/call":
        try:
            result = call(str(params.get("name")), params.get("arguments") or {})
        except LookupError:
            error = {"code": -32602, "message": f"Unknown tool: {params.get('name')}"}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})
            return
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        send({"jsonrpc": "2.0", "id": request_id, "error": error})
        return
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
