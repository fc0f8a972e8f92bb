"""HTTP test peers: a scriptable in-process MCP server, and real servers in subprocesses.

`McpPeer` is a small handshake-era MCP server on a raw asyncio HTTP/1.1 server bound to
127.0.0.1: keep-alive, chunked SSE answers, sessions. Its defaults behave like a real
server; a test overrides one hook (``on_request``, ``on_get``, ...) to do what real
servers will not do on demand: expire a session, break a stream, answer 500. Every
request it receives is recorded in ``seen``. `start_process` runs a real server (the
`mcp` SDK's, ``server-everything``) on a free port and waits for it by polling the port.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
SERVERS = TESTS / "servers"
SDK_SERVER = SERVERS / "sdk_http_server.py"
LOOPBACK = SERVERS / "loopback.mjs"
EVERYTHING = REPO / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist"
EVERYTHING_JS = EVERYTHING / "index.js"

ECHO_TOOL = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}


# -- the raw HTTP layer --------------------------------------------------------------


@dataclass
class Seen:
    """One HTTP request the peer received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def rpc_method(self) -> str | None:
        data = self.json if self.method == "POST" else None
        return data.get("method") if isinstance(data, dict) else None


class Reply:
    """Writes one HTTP response: a whole body, or an SSE stream in chunked encoding."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self.done = False
        self.aborted = False

    async def send(
        self,
        status: int,
        body: bytes = b"",
        *,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
        if content_type is not None:
            head.append(f"content-type: {content_type}")
        head += [f"{k}: {v}" for k, v in (headers or {}).items()]
        head.append(f"content-length: {len(body)}")
        self._writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await self._writer.drain()
        self.done = True

    async def json(
        self, data: Any, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> None:
        body = json.dumps(data).encode()
        await self.send(status, body, content_type="application/json", headers=headers)

    async def open_sse(self, headers: Mapping[str, str] | None = None, status: int = 200) -> None:
        head = [
            f"HTTP/1.1 {status} OK",
            "content-type: text/event-stream",
            "cache-control: no-cache",
            "transfer-encoding: chunked",
            *(f"{k}: {v}" for k, v in (headers or {}).items()),
        ]
        self._writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await self._writer.drain()

    async def chunk(self, data: bytes) -> None:
        if data:
            self._writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            await self._writer.drain()

    async def event(
        self,
        data: Any = None,
        *,
        id: str | None = None,
        event: str | None = None,
        retry: int | None = None,
        eol: str = "\n",
    ) -> None:
        """One SSE event; ``data`` that is not a string is sent as JSON."""
        lines = []
        if event is not None:
            lines.append(f"event: {event}")
        if id is not None:
            lines.append(f"id: {id}")
        if retry is not None:
            lines.append(f"retry: {retry}")
        text = data if isinstance(data, str) or data is None else json.dumps(data)
        lines.extend(f"data: {line}" for line in (text or "").split("\n"))
        await self.chunk((eol.join(lines) + eol + eol).encode())

    async def comment(self, text: str, eol: str = "\n") -> None:
        await self.chunk(f": {text}{eol}".encode())

    async def end(self) -> None:
        self._writer.write(b"0\r\n\r\n")
        await self._writer.drain()
        self.done = True

    async def abort(self) -> None:
        """Drop the connection mid-answer, as a crashing server or a proxy would."""
        self.aborted = True
        self.done = True
        self._writer.transport.abort()


_REASONS = {
    200: "OK",
    202: "Accepted",
    204: "No Content",
    307: "Temporary Redirect",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    500: "Internal Server Error",
}


class HttpPeer:
    """A raw HTTP/1.1 server on 127.0.0.1 that hands each request to ``handle``."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.url = ""
        self.port = 0
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def handle(self, seen: Seen, reply: Reply) -> None:
        await reply.send(404)

    async def __aenter__(self) -> HttpPeer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await self._server.wait_closed()

    def requests(self, method: str | None = None, rpc: str | None = None) -> list[Seen]:
        """The requests seen, optionally only of one HTTP method or one JSON-RPC method."""
        return [
            s
            for s in self.seen
            if (method is None or s.method == method) and (rpc is None or s.rpc_method == rpc)
        ]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        name, _, value = line.partition(":")
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                seen = Seen(method, path, headers, body)
                self.seen.append(seen)
                reply = Reply(writer)
                await self.handle(seen, reply)
                if reply.aborted or not reply.done:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        except asyncio.CancelledError:
            return  # the peer is shutting down; end this connection quietly
        finally:
            self._connections.discard(task)
            writer.transport.abort()


# -- a scriptable MCP server -----------------------------------------------------------


class McpPeer(HttpPeer):
    """A handshake-era MCP server over Streamable HTTP; override hooks to misbehave."""

    def __init__(
        self,
        *,
        sse: bool = True,
        sessions: bool = True,
        tools: list[dict[str, Any]] | None = None,
        protocol_version: str = "2025-11-25",
    ) -> None:
        super().__init__()
        self.sse = sse
        self.sessions = sessions
        self.tools = [ECHO_TOOL] if tools is None else tools
        self.protocol_version = protocol_version
        #: Client responses to server requests, and client notifications, as received.
        self.client_responses: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []
        self.response_arrived = asyncio.Event()
        self.live_sessions: set[str] = set()
        self._session_ids = itertools.count(1)

    # hooks ------------------------------------------------------------------------------

    async def on_get(self, seen: Seen, reply: Reply) -> None:
        await reply.send(405)

    async def on_delete(self, seen: Seen, reply: Reply) -> None:
        self.live_sessions.discard(seen.headers.get("mcp-session-id", ""))
        await reply.send(200)

    async def on_request(self, message: dict[str, Any], seen: Seen, reply: Reply) -> None:
        """Answer one request (everything after initialize)."""
        await self.answer(reply, message, self.result_for(message))

    def result_for(self, message: dict[str, Any]) -> Any:
        method, params = message.get("method"), message.get("params") or {}
        if method == "tools/list":
            return {"tools": self.tools}
        if method == "tools/call":
            text = (params.get("arguments") or {}).get("text", "")
            return {"content": [{"type": "text", "text": f"echo: {text}"}]}
        return {}

    # helpers ----------------------------------------------------------------------------

    def session_headers(self, seen: Seen) -> dict[str, str]:
        session = seen.headers.get("mcp-session-id")
        return {"mcp-session-id": session} if session else {}

    async def answer(self, reply: Reply, message: dict[str, Any], result: Any) -> None:
        """The response, as JSON or as a one-event SSE stream (``self.sse``)."""
        response = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        if self.sse:
            await reply.open_sse()
            await reply.event(response, event="message")
            await reply.end()
        else:
            await reply.json(response)

    async def handle(self, seen: Seen, reply: Reply) -> None:
        if seen.method == "GET":
            await self.on_get(seen, reply)
            return
        if seen.method == "DELETE":
            await self.on_delete(seen, reply)
            return
        message = seen.json
        if "method" not in message:
            self.client_responses.append(message)
            self.response_arrived.set()
            await reply.send(202)
            return
        if message["method"] == "initialize":
            headers = {}
            if self.sessions:
                session = f"session-{next(self._session_ids)}"
                self.live_sessions.add(session)
                headers["mcp-session-id"] = session
            result = {
                "protocolVersion": self.protocol_version,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "mcp-peer", "version": "1"},
            }
            response = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            await reply.json(response, 200, headers)
            return
        if self.sessions and seen.headers.get("mcp-session-id") not in self.live_sessions:
            await reply.send(404, b"unknown session", content_type="text/plain")
            return
        if "id" not in message:
            self.notifications.append(message)
            await reply.send(202)
            return
        await self.on_request(message, seen, reply)


# -- real servers in subprocesses ------------------------------------------------------


def free_port() -> int:
    """A port nobody listens on right now (bind to 0, read it, release it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """Poll until something accepts on 127.0.0.1:port; fail if the process dies first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with code {process.returncode} before listening")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listened on port {port} within {timeout} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate, wait, kill: the server is gone when this returns."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextlib.contextmanager
def running(
    command: Sequence[str], port: int, env: Mapping[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Run a server process for the duration of the block, on loopback ``port``."""
    process = subprocess.Popen(
        list(command),
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=REPO,
    )
    try:
        wait_for_port(port, process)
        yield process
    finally:
        stop(process)


def start_processes(specs: dict[str, tuple[list[str], dict[str, str]]]) -> dict[str, Any]:
    """Start several servers at once (they import slowly); ``{key: (argv, env)}``."""
    started: dict[str, Any] = {}
    try:
        for key, (argv, env) in specs.items():
            started[key] = subprocess.Popen(
                argv,
                env={**os.environ, **env},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=REPO,
            )
    except BaseException:
        for process in started.values():
            stop(process)
        raise
    return started


def sdk_command(port: int, mode: str) -> list[str]:
    return [sys.executable, str(SDK_SERVER), str(port), mode]


def everything_command(mode: str) -> list[str]:
    return ["node", "--import", str(LOOPBACK), str(EVERYTHING_JS), mode]


def node_available() -> bool:
    import shutil

    return shutil.which("node") is not None and EVERYTHING_JS.exists()
