#!/usr/bin/env python3
"""A tiny stdio MCP server whose one tool asks the user for input (``elicitation/create``).

Tool ``ask_name`` (read-only, so it runs without a permission question) sends an
elicitation request for a name with a default, waits for the client's answer, and
returns ``hello <name>``, ``declined`` or ``cancelled``. Standard library only.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from typing import Any

_lock = threading.Lock()
_ids = itertools.count(1000)
_waiting: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}

TOOL = {
    "name": "ask_name",
    "description": "Ask the user for their name",
    "inputSchema": {"type": "object", "properties": {}},
    "annotations": {"readOnlyHint": True},
}


def send(message: dict[str, Any]) -> None:
    with _lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def ask_name(request_id: Any) -> None:
    elicit_id = next(_ids)
    done = threading.Event()
    box: list[dict[str, Any]] = []
    _waiting[elicit_id] = (done, box)
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "title": "Name", "default": "Bob"}},
        "required": ["name"],
    }
    send({"jsonrpc": "2.0", "id": elicit_id, "method": "elicitation/create",
          "params": {"message": "What is your name?", "requestedSchema": schema}})  # fmt: skip
    done.wait()
    result = box[0].get("result") or {}
    action = result.get("action")
    text = f"hello {result['content']['name']}" if action == "accept" else str(action)
    send({"jsonrpc": "2.0", "id": request_id,
          "result": {"content": [{"type": "text", "text": text}]}})  # fmt: skip


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method is None and request_id in _waiting:
            done, box = _waiting.pop(request_id)
            box.append(message)
            done.set()
        elif method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "ask", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [TOOL]}})
        elif method == "tools/call":
            threading.Thread(target=ask_name, args=(request_id,), daemon=True).start()
        elif request_id is not None:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}})


if __name__ == "__main__":
    main()
