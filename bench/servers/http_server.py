"""The benchmark's Streamable HTTP MCP server: standard library asyncio, on 127.0.0.1.

``--mode json`` answers every request POST with ``application/json``; ``--mode sse``
answers with a one-event ``text/event-stream`` in chunked encoding, ``\\r\\n`` line ends,
the way sse-starlette does. ``initialize`` hands out an ``Mcp-Session-Id``; a GET opens
an idle event stream held until the client hangs up; DELETE ends the session;
notifications get 202. ``--modern`` speaks MCP 2026-07-28 as well: ``server/discover`` is
answered, and a client that uses it needs no session. Keep-alive HTTP/1.1 with a minimal
parser: just what the three clients under test send. Prints ``PORT <n>`` on stdout when
listening; exits when its
stdin closes, so it never outlives the benchmark.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import threading
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stdio_server import (
    MODERN_LIST,
    MODERN_RESULT,
    SERVER_INFO,
    SUPPORTED,
    TOOLS,
    _blob_result,
    discover_result,
    modern,
)

_HEADER_LIMIT = 64 * 1024


#: Set by ``--modern``: answer server/discover (MCP 2026-07-28).
MODERN = False


def _result_bytes(message: dict[str, object]) -> bytes | None:
    """The JSON text of the answer's ``result`` (or the whole error message), None if none."""
    method = message.get("method")
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    # A 2026-07-28 request (its _meta names the version): results carry that era's fields.
    extra = MODERN_RESULT if MODERN and isinstance(params.get("_meta"), dict) else b""
    if method == "tools/call":
        args = params.get("arguments") or {}
        if params.get("name") == "echo":
            result: object = {"content": [{"type": "text", "text": args.get("text", "")}]}
        elif params.get("name") == "blob":
            blob = _blob_result(int(args.get("size", 0)))
            return modern(blob, extra) if extra else blob
        else:
            return None
    elif method == "initialize":
        asked = params.get("protocolVersion")
        result = {
            "protocolVersion": asked if asked in SUPPORTED else SUPPORTED[0],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
        extra = MODERN_LIST if extra else b""
    elif method == "server/discover" and MODERN:
        result = discover_result()
        extra = b""
    elif method == "ping":
        result = {}
    else:
        return None
    body = json.dumps(result, separators=(",", ":")).encode()
    return modern(body, extra) if extra else body


def _answer(message: dict[str, object]) -> bytes:
    request_id = json.dumps(message.get("id")).encode()
    result = _result_bytes(message)
    if result is None:
        error = {"code": -32601, "message": f"Method not found: {message.get('method')}"}
        return b'{"jsonrpc":"2.0","id":%s,"error":%s}' % (request_id, json.dumps(error).encode())
    return b'{"jsonrpc":"2.0","id":%s,"result":%s}' % (request_id, result)


class Server:
    def __init__(self, mode: str) -> None:
        self.sse = mode == "sse"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, _path, _version = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                if method == "POST":
                    writer.write(self.post(body))
                elif method == "GET":
                    await self.idle_stream(reader, writer)
                    return
                elif method == "DELETE":
                    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                else:
                    writer.write(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def post(self, body: bytes) -> bytes:
        message = json.loads(body)
        if not isinstance(message, dict) or "id" not in message or "method" not in message:
            return b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n"
        answer = _answer(message)
        extra = b""
        if message.get("method") == "initialize":
            extra = b"mcp-session-id: %s\r\n" % uuid.uuid4().hex.encode()
        if not self.sse:
            return (
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n%scontent-length: %d\r\n\r\n"
                % (extra, len(answer))
            ) + answer
        event = b"event: message\r\ndata: " + answer + b"\r\n\r\n"
        return (
            (
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-store\r\n"
                b"%stransfer-encoding: chunked\r\n\r\n%x\r\n" % (extra, len(event))
            )
            + event
            + b"\r\n0\r\n\r\n"
        )

    async def idle_stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"cache-control: no-store\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        await writer.drain()
        with contextlib.suppress(ConnectionError):
            while await reader.read(65536):
                pass


def _exit_when_stdin_closes() -> None:
    while sys.stdin.buffer.read(65536):
        pass
    os._exit(0)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("json", "sse"), default="json")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--modern", action="store_true", help="answer server/discover too")
    options = parser.parse_args()
    global MODERN
    MODERN = options.modern
    server = Server(options.mode)
    listener = await asyncio.start_server(
        server.handle, "127.0.0.1", options.port, limit=_HEADER_LIMIT, backlog=1024
    )
    port = listener.sockets[0].getsockname()[1]
    sys.stdout.write(f"PORT {port}\n")
    sys.stdout.flush()
    threading.Thread(target=_exit_when_stdin_closes, daemon=True).start()
    async with listener:
        await listener.serve_forever()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
