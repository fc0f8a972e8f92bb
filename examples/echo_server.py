#!/usr/bin/env python3
"""A small MCP server over stdio, standard library only: cat-code's bundled example.

Tools: ``echo`` (echo back the input text), ``add`` (add two numbers), ``reverse``
(reverse a text), ``word_count``, ``sleep`` (wait, reporting progress, to try timeouts
and cancellation) and ``fail`` (always a tool error). Speaks newline-delimited JSON-RPC
on stdin/stdout, logs to stderr, exits when stdin closes. ``sleep`` runs on a thread so it
never blocks other calls.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
_write_lock = threading.Lock()
_cancelled: set[Any] = set()

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "description": "Echo back the input text",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to echo"}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "add",
        "description": "Add two numbers",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "reverse",
        "description": "Reverse a text",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "word_count",
        "description": "Count the words and lines of a text",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "sleep",
        "description": "Wait for some seconds, reporting progress each second",
        "inputSchema": {
            "type": "object",
            "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": 3600}},
            "required": ["seconds"],
        },
    },
    {
        "name": "fail",
        "description": "Always fail with a tool error (to see how errors look)",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
        },
    },
]


def send(message: dict[str, Any]) -> None:
    data = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    with _write_lock:
        sys.stdout.write(data + "\n")
        sys.stdout.flush()


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def call_tool(request_id: Any, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        return text_result(str(args.get("text", "")))
    if name == "add":
        a, b = args.get("a"), args.get("b")
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in (a, b)):
            return text_result("add needs two numbers 'a' and 'b'", is_error=True)
        total = a + b
        return {
            "content": [{"type": "text", "text": str(total)}],
            "structuredContent": {"sum": total},
        }
    if name == "reverse":
        return text_result(str(args.get("text", ""))[::-1])
    if name == "word_count":
        text = str(args.get("text", ""))
        return text_result(f"{len(text.split())} words, {len(text.splitlines())} lines")
    if name == "sleep":
        seconds = float(args.get("seconds", 0))
        token = (params.get("_meta") or {}).get("progressToken")
        deadline = time.monotonic() + seconds
        step = 0
        while (left := deadline - time.monotonic()) > 0:
            if request_id in _cancelled:
                return text_result("cancelled", is_error=True)
            time.sleep(min(1.0, left))
            step += 1
            if token is not None:
                send({
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": min(step, seconds),
                               "total": seconds, "message": f"slept {min(step, seconds):g} s"},
                })  # fmt: skip
        return text_result(f"slept {seconds:g} s")
    if name == "fail":
        return text_result(str(args.get("message") or "this tool always fails"), is_error=True)
    raise LookupError(name)


def handle(message: dict[str, Any]) -> None:
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    if request_id is None:
        if method == "notifications/cancelled":
            _cancelled.add(params.get("requestId"))
        return
    try:
        if method == "initialize":
            asked = params.get("protocolVersion")
            result: dict[str, Any] = {
                "protocolVersion": asked if asked in SUPPORTED else SUPPORTED[0],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "cat-code-example-echo", "version": "1.0.0"},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            try:
                result = call_tool(request_id, params)
            except LookupError:
                error = {"code": -32602, "message": f"Unknown tool: {params.get('name')}"}
                send({"jsonrpc": "2.0", "id": request_id, "error": error})
                return
        else:
            send({"jsonrpc": "2.0", "id": request_id,
                  "error": {"code": -32601, "message": f"Method not found: {method}"}})  # fmt: skip
            return
    except Exception as exc:  # report, keep serving
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": str(exc)}})
        return
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def main() -> None:
    print("echo server ready", file=sys.stderr, flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            print(f"ignoring a line that is not JSON: {line[:80]!r}", file=sys.stderr)
            continue
        if not isinstance(message, dict):
            print(f"ignoring a message that is not an object: {line[:80]!r}", file=sys.stderr)
            continue
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if message.get("method") == "tools/call" and params.get("name") == "sleep":
            threading.Thread(target=handle, args=(message,), daemon=True).start()
        else:
            handle(message)


if __name__ == "__main__":
    main()
