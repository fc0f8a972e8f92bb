"""The benchmark's Anthropic Messages API: one tool call, then an answer, for any client.

``python bench/servers/model_api.py`` listens on 127.0.0.1, prints ``PORT <n>`` and
serves until its stdin closes. It keeps no script: every ``POST …/messages`` is answered
from the request alone, so cat-code and Claude Code, which send different numbers of
requests (Claude Code also asks for titles and quota checks), get the same conversation:
a request that offers the tool ``mcp__echo__echo`` (the example echo server's, named as
both clients name MCP tools) and carries no ``tool_result`` yet is answered with a call
of it (``{"text": "hello"}``); any other request with the text ``"The echo tool said:
<result>."`` (or ``ok`` when there is no result). Requests
are accepted in the shapes both clients send, including ``system`` given as blocks or
as turns inside ``messages``. ``"stream": true`` gets the Messages API's server-sent
events, anything else one JSON message. HTTP/1.1 keep-alive, chunked streams.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from typing import Any

_ids = itertools.count(1)
#: The tool the answer calls.
TOOL = "mcp__echo__echo"
_HEADER_LIMIT = 64 * 1024


def _tool_result_text(messages: list[Any]) -> str | None:
    if not messages or not isinstance(messages[-1], dict):
        return None
    content = messages[-1].get("content")
    if not isinstance(content, list):
        return None
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            inner = block.get("content")
            if isinstance(inner, list):
                return "".join(b.get("text", "") for b in inner if isinstance(b, dict))
            return str(inner or "")
    return None


def answer_for(request: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The content blocks and stop reason for one request."""
    messages = request.get("messages") or []
    result = _tool_result_text(messages)
    if result is not None:
        return [{"type": "text", "text": f"The echo tool said: {result.strip()}."}], "end_turn"
    for tool in request.get("tools") or []:
        name = tool.get("name", "") if isinstance(tool, dict) else ""
        if name == TOOL:
            call = {"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name}
            call["input"] = {"text": "hello"}
            return [call], "tool_use"
    return [{"type": "text", "text": "ok"}], "end_turn"


def _message(content: list[dict[str, Any]], stop: str | None, model: str) -> dict[str, Any]:
    return {
        "id": f"msg_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def sse_events(request: dict[str, Any]) -> list[bytes]:
    content, stop = answer_for(request)
    model = str(request.get("model", "claude"))
    events = [
        _event("message_start", {"type": "message_start", "message": _message([], None, model)})
    ]
    for index, block in enumerate(content):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(
            _event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opened},
            )
        )
        events.append(
            _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        )
        events.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    events.append(_event("message_stop", {"type": "message_stop"}))
    return events


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = [*lines[0].split(" ", 2), "", ""][:3]
    headers = {}
    for line in lines[1:]:
        key, sep, value = line.partition(":")
        if sep:
            headers[key.strip().lower()] = value.strip()
    body = b""
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int((await reader.readline()).split(b";")[0], 16)
            if size == 0:
                await reader.readline()
                break
            body += await reader.readexactly(size)
            await reader.readline()
    return method, path, body


def _head(status: str, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    return "\r\n".join(lines).encode()


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while (request := await _read_request(reader)) is not None:
            method, path, raw = request
            bare = path.split("?", 1)[0]
            if method != "POST" or not bare.endswith("/messages"):
                body = b'{"type":"error","error":{"type":"not_found_error","message":"no"}}'
                writer.write(
                    _head("404 Not Found", {"content-type": "application/json",
                                            "content-length": str(len(body))}) + body
                )  # fmt: skip
                await writer.drain()
                continue
            payload = json.loads(raw or b"{}")
            if payload.get("stream") is True:
                writer.write(
                    _head(
                        "200 OK",
                        {"content-type": "text/event-stream", "transfer-encoding": "chunked"},
                    )
                )
                for event in sse_events(payload):
                    writer.write(b"%x\r\n%s\r\n" % (len(event), event))
                writer.write(b"0\r\n\r\n")
            else:
                content, stop = answer_for(payload)
                data = json.dumps(_message(content, stop, str(payload.get("model", "")))).encode()
                writer.write(
                    _head("200 OK", {"content-type": "application/json",
                                     "content-length": str(len(data))}) + data
                )  # fmt: skip
            await writer.drain()
    except (ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(_serve, "127.0.0.1", 0, limit=_HEADER_LIMIT * 1024)
    port = server.sockets[0].getsockname()[1]
    sys.stdout.write(f"PORT {port}\n")
    sys.stdout.flush()
    loop = asyncio.get_running_loop()
    # Serve until the benchmark closes our stdin: never outlive it.
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
