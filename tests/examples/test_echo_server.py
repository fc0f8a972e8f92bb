"""The bundled ``examples/echo_server.py``, spoken to directly over its stdin and stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from conftest import ECHO_SERVER


def exchange(*lines: str) -> list[dict[str, Any]]:
    """Send ``lines`` to a fresh echo server, close its stdin, return every answer."""
    run = subprocess.run(
        [sys.executable, str(ECHO_SERVER)],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert run.returncode == 0, run.stderr  # it exits by itself when stdin closes
    return [json.loads(line) for line in run.stdout.splitlines()]


def request(request_id: int, method: str, params: Any = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


def test_it_answers_the_handshake_and_lists_its_tools() -> None:
    answers = exchange(
        request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "t", "version": "0"}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        request(2, "tools/list"),
    )  # fmt: skip
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
    names = [t["name"] for t in answers[1]["result"]["tools"]]
    assert names == ["echo", "add", "reverse", "word_count", "sleep", "fail"]


def test_malformed_messages_are_skipped_and_it_keeps_serving() -> None:
    answers = exchange(
        "not json at all",
        "[1, 2]",
        request(1, "tools/call", ["not", "an", "object"]),
        request(2, "made/up"),
        request(3, "tools/call", {"name": "echo", "arguments": {"text": "still here"}}),
    )
    by_id = {a["id"]: a for a in answers}
    assert by_id[1]["error"]["code"] == -32602
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[3]["result"]["content"] == [{"type": "text", "text": "still here"}]
