#!/usr/bin/env python3
"""A stdio MCP server (2025-11-25 handshake) that sends the user to web pages.

Tool ``open_page`` asks with ``elicitation/create`` in URL mode, waits for the answer and
returns its action (``accept``, ``decline``, ``cancel``), or ``no url capability`` when the
client did not declare ``elicitation.url``. Tool ``needs_browser`` refuses with -32042
(URL elicitation required) carrying one URL elicitation. Both are read-only, so they run
without a permission question. Standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

#: The page ``open_page`` sends the user to (``URL_SERVER_PAGE`` names another).
PAGE = os.environ.get("URL_SERVER_PAGE") or "https://pay.example.com/checkout?order=7"
CONNECT = "https://auth.example.com/connect?account=9"
_lock = threading.Lock()
_waiting: dict[str, tuple[threading.Event, list[dict[str, Any]]]] = {}
_capabilities: dict[str, Any] = {}


def _tool(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    }


TOOLS = [_tool("open_page", "Send the user to pay"), _tool("needs_browser", "Needs a sign-in")]


def send(message: dict[str, Any]) -> None:
    with _lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def open_page(request_id: Any) -> None:
    if "url" not in (_capabilities.get("elicitation") or {}):
        text = "no url capability"
    else:
        done, box = threading.Event(), []
        _waiting["elicit-1"] = (done, box)
        params = {"mode": "url", "elicitationId": "e-1", "url": PAGE, "message": "Pay for it"}
        send({"jsonrpc": "2.0", "id": "elicit-1", "method": "elicitation/create", "params": params})
        done.wait()
        text = str((box[0].get("result") or {}).get("action"))
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
            _capabilities.update(message["params"].get("capabilities") or {})
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "url", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
        elif method == "tools/call" and message["params"]["name"] == "open_page":
            threading.Thread(target=open_page, args=(request_id,), daemon=True).start()
        elif method == "tools/call":
            elicitation = {"mode": "url", "elicitationId": "e-2", "url": CONNECT,
                           "message": "Connect your account"}  # fmt: skip
            error = {"code": -32042, "message": "This request needs a sign-in",
                     "data": {"elicitations": [elicitation]}}  # fmt: skip
            send({"jsonrpc": "2.0", "id": request_id, "error": error})
        elif request_id is not None:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": method}})


if __name__ == "__main__":
    main()
