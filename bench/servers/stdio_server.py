"""The benchmark's stdio MCP server: standard library only, answering as fast as it can.

Every client under test (cat-code, the official SDK, the floor) talks to this same
program, so differences in the measurements are the clients'. It reads stdin in large
chunks, answers every complete line it has, and writes all the answers of one read with
one ``os.write`` loop; the 10 MB result is serialised once and spliced around the id, so
the server's own cost stays small next to the clients'. Silent on stderr; exits on EOF.

Tools: ``echo {text}`` answers the text; ``blob {size}`` answers a text of ``size``
bytes (lines of code-like text, so JSON escapes appear as they would in a real file).
``--modern`` also speaks MCP 2026-07-28: it answers ``server/discover`` (without it, that
is -32601 like any unknown method, so clients pick the handshake era); requests' ``_meta``
is read by no one here, as a fast server would.
"""

from __future__ import annotations

import json
import os
import sys

SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
MODERN_VERSION = "2026-07-28"
SERVER_INFO = {"name": "cat-code-bench", "version": "1.0.0"}
#: Set by ``--modern``: answer server/discover (MCP 2026-07-28).
MODERN = False


def discover_result() -> dict[str, object]:
    """The answer to server/discover of a server speaking 2026-07-28."""
    return {
        "supportedVersions": [MODERN_VERSION],
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": SERVER_INFO,
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
    }


def modern_request(params: dict[str, object]) -> bool:
    """A 2026-07-28 request (its ``_meta`` names the version): its results carry the
    fields that era requires (``resultType``; ``ttlMs``/``cacheScope`` on lists)."""
    return MODERN and isinstance(params.get("_meta"), dict)


#: What a 2026-07-28 result adds, spliced in before its closing brace.
MODERN_RESULT = b',"resultType":"complete"'
MODERN_LIST = b',"resultType":"complete","ttlMs":0,"cacheScope":"private"'


def modern(result: bytes, extra: bytes = MODERN_RESULT) -> bytes:
    """A serialised result object with ``extra`` fields added."""
    return result[:-1] + extra + b"}"


TOOLS = [
    {
        "name": "echo",
        "description": "Echo back the input text",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    {
        "name": "blob",
        "description": "Answer a text of the given size in bytes",
        "inputSchema": {
            "type": "object",
            "properties": {"size": {"type": "integer", "minimum": 0}},
            "required": ["size"],
        },
    },
    *(
        {
            "name": f"tool_{i}",
            "description": f"Filler tool number {i}, so tools/list is not trivially small",
            "inputSchema": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["path"],
            },
        }
        for i in range(8)
    ),
]
_LINE = 'def f(x):\n\treturn "value: %s" % (x,)  # a line of code with "quotes" and \\ \n'
_blobs: dict[int, bytes] = {}


def blob_text(size: int) -> str:
    """``size`` bytes of text (ASCII, so bytes and characters agree)."""
    return (_LINE * (size // len(_LINE) + 1))[:size]


def _blob_result(size: int) -> bytes:
    cached = _blobs.get(size)
    if cached is None:
        result = {"content": [{"type": "text", "text": blob_text(size)}], "isError": False}
        cached = _blobs[size] = json.dumps(result, separators=(",", ":")).encode()
    return cached


def _answer(request_id: object, result: object, extra: bytes = b"") -> bytes:
    body = (
        result if isinstance(result, bytes) else json.dumps(result, separators=(",", ":")).encode()
    )
    if extra:
        body = modern(body, extra)
    return b'{"jsonrpc":"2.0","id":%s,"result":%s}\n' % (json.dumps(request_id).encode(), body)


def handle(message: dict[str, object]) -> bytes | None:
    """The answer line to one message, or None for a notification."""
    request_id = message.get("id")
    if request_id is None:
        return None
    method = message.get("method")
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    extra = MODERN_RESULT if modern_request(params) else b""
    if method == "tools/call":
        name = params.get("name")
        args = params.get("arguments") or {}
        if name == "echo":
            text = args.get("text", "")
            return _answer(request_id, {"content": [{"type": "text", "text": text}]}, extra)
        if name == "blob":
            return _answer(request_id, _blob_result(int(args.get("size", 0))), extra)
        error = {"code": -32602, "message": f"Unknown tool: {name}"}
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n"
    if method == "initialize":
        asked = params.get("protocolVersion")
        return _answer(
            request_id,
            {
                "protocolVersion": asked if asked in SUPPORTED else SUPPORTED[0],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": SERVER_INFO,
            },
        )
    if method == "tools/list":
        return _answer(request_id, {"tools": TOOLS}, MODERN_LIST if extra else b"")
    if method == "server/discover" and MODERN:
        return _answer(request_id, discover_result())
    if method == "ping":
        return _answer(request_id, {})
    error = {"code": -32601, "message": f"Method not found: {method}"}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n"


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(1, view)
        view = view[written:]


def main() -> None:
    global MODERN
    args = sys.argv[1:]
    if "--modern" in args:
        args.remove("--modern")
        MODERN = True
    # --startup-delay S: wait S seconds (idle) before serving, like a server that first
    # fetches something over the network; used to time parallel connects apart from CPU.
    if len(args) == 2 and args[0] == "--startup-delay":
        import time

        time.sleep(float(args[1]))
    pending = b""
    while True:
        chunk = os.read(0, 1 << 20)
        if not chunk:
            return
        pending += chunk
        *lines, pending = pending.split(b"\n")
        answers = []
        for line in lines:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                continue
            answer = handle(message) if isinstance(message, dict) else None
            if answer is not None:
                answers.append(answer)
        if answers:
            try:
                _write_all(b"".join(answers))
            except BrokenPipeError:
                return


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
