"""The scripted model API keeps HTTP/1.1 connections the way its clients expect.

The SDKs pool connections: a connection the server closes right after an answer that
did not say ``Connection: close`` gets reused by the next request and fails with
"Server disconnected without sending a response" (a race the provider tests lost about
one run in three). These talk raw HTTP over one socket so the order of events is fixed.
"""

from __future__ import annotations

import json
import socket
from typing import BinaryIO

from scripted.model_api import Cut, ScriptedModelApi, anthropic_text, streamed


def _post(sock: socket.socket, body: dict[str, object]) -> None:
    data = json.dumps(body).encode()
    head = (
        "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"content-type: application/json\r\ncontent-length: {len(data)}\r\n\r\n"
    )
    sock.sendall(head.encode() + data)


def _read_response(stream: BinaryIO) -> tuple[dict[str, str], bytes]:
    """One response's headers and (de-chunked) body, read exactly to its end."""
    status = stream.readline()
    assert status.startswith(b"HTTP/1.1 200"), status
    headers: dict[str, str] = {}
    while (line := stream.readline()) not in (b"\r\n", b""):
        key, _, value = line.decode().partition(":")
        headers[key.strip().lower()] = value.strip()
    if "content-length" in headers:
        return headers, stream.read(int(headers["content-length"]))
    body = b""
    while True:
        size = int(stream.readline().strip(), 16)
        chunk = stream.read(size + 2)[:size]
        if size == 0:
            return headers, body
        body += chunk


def _connect(api: ScriptedModelApi) -> socket.socket:
    host, port = api.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def test_a_connection_serves_the_next_request_after_a_streamed_answer() -> None:
    with ScriptedModelApi([streamed("Hel", "lo"), anthropic_text("again")]) as api:
        with _connect(api) as sock, sock.makefile("rb") as stream:
            _post(sock, {"stream": True})
            headers, first = _read_response(stream)
            assert headers.get("connection", "").lower() != "close"
            assert b"message_stop" in first
            _post(sock, {})
            _, second = _read_response(stream)
            assert json.loads(second)["content"][0]["text"] == "again"


def test_a_cut_stream_ends_the_connection_without_the_last_chunk() -> None:
    with ScriptedModelApi([streamed("Hel", Cut())]) as api:
        with _connect(api) as sock, sock.makefile("rb") as stream:
            _post(sock, {"stream": True})
            rest = stream.read()  # until the server closes the connection
            assert b"Hel" in rest
            assert not rest.endswith(b"0\r\n\r\n")
