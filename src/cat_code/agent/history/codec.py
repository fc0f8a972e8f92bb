"""Messages as JSON objects and back, for the session files: nothing lost that a model sees.

A decoded conversation is sent exactly as the encoded one was: texts, tool calls (ids,
names, arguments, argument errors), tool results (ids, text, error flag, images and
audio), interrupted answers with what cut them, and the tools a ``search_tools`` result
made available (`FoundTools`, so tool-search selections come back). A tool's other
``raw`` result (an MCP ``CallToolResult``) is not kept: no model ever sees it. Empty
fields are left out, so a line stays short; decoding takes any missing one as empty.
"""

from __future__ import annotations

import logging
from typing import Any, cast

from cat_code.agent.providers.base import (
    AssistantMessage,
    CutBy,
    Message,
    ThinkingBlock,
    ToolCall,
    UserMessage,
)
from cat_code.agent.tool_search import FoundTools
from cat_code.tools.base import Media, ToolResult

logger = logging.getLogger(__name__)


class BadRecord(ValueError):
    """A saved message that is not one this version can read."""


def encode(message: Message) -> dict[str, Any]:
    """``message`` as a JSON-ready object."""
    if isinstance(message, UserMessage):
        record: dict[str, Any] = {"role": "user"}
        if message.text:
            record["text"] = message.text
        if message.tool_results:
            record["tool_results"] = [_encode_result(r) for r in message.tool_results]
        return record
    record = {"role": "assistant"}
    if message.text:
        record["text"] = message.text
    if message.tool_calls:
        record["tool_calls"] = [_encode_call(c) for c in message.tool_calls]
    if message.interrupted is not None:
        record["interrupted"] = message.interrupted
    if message.thinking:
        record["thinking"] = [_encode_thinking(b) for b in message.thinking]
    return record


def decode(record: Any) -> Message:
    """The message a JSON object of `encode` stands for; `BadRecord` when it is not one."""
    if not isinstance(record, dict):
        raise BadRecord(f"a message must be an object, not {type(record).__name__}")
    role = record.get("role")
    try:
        if role == "user":
            results = [_decode_result(r) for r in record.get("tool_results") or []]
            return UserMessage(text=_str(record.get("text", "")), tool_results=results)
        if role == "assistant":
            calls = [_decode_call(c) for c in record.get("tool_calls") or []]
            interrupted = record.get("interrupted")
            if interrupted not in (None, "user", "error"):
                raise BadRecord(f"unknown interruption {interrupted!r}")
            return AssistantMessage(
                text=_str(record.get("text", "")),
                tool_calls=calls,
                interrupted=cast("CutBy | None", interrupted),
                thinking=[_decode_thinking(b) for b in record.get("thinking") or []],
            )
    except (KeyError, TypeError, AttributeError) as exc:
        raise BadRecord(f"a {role} message is missing a field: {exc}") from exc
    raise BadRecord(f"unknown message role {role!r}")


def _encode_thinking(block: ThinkingBlock) -> dict[str, Any]:
    if block.kind == "redacted_thinking":
        return {"kind": block.kind, "data": block.data}
    return {"kind": block.kind, "text": block.text, "signature": block.signature}


def _decode_thinking(record: Any) -> ThinkingBlock:
    if not isinstance(record, dict):
        raise BadRecord("a thinking block must be an object")
    kind = record.get("kind")
    if kind == "redacted_thinking":
        return ThinkingBlock("redacted_thinking", data=_str(record.get("data", "")))
    if kind == "thinking":
        return ThinkingBlock(
            "thinking", _str(record.get("text", "")), _str(record.get("signature", ""))
        )
    raise BadRecord(f"unknown thinking block {kind!r}")


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise BadRecord(f"expected a string, not {type(value).__name__}")
    return value


def _encode_call(call: ToolCall) -> dict[str, Any]:
    record: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if call.error is not None:
        record["error"] = call.error
    return record


def _decode_call(record: dict[str, Any]) -> ToolCall:
    arguments = record.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise BadRecord("a tool call's arguments must be an object")
    error = record.get("error")
    return ToolCall(
        id=_str(record["id"]),
        name=_str(record["name"]),
        arguments=arguments,
        error=None if error is None else _str(error),
    )


def _encode_result(result: ToolResult) -> dict[str, Any]:
    record: dict[str, Any] = {"tool_call_id": result.tool_call_id, "content": result.content}
    if result.is_error:
        record["is_error"] = True
    if result.media:
        record["media"] = [
            {"kind": m.kind, "mime_type": m.mime_type, "data": m.data} for m in result.media
        ]
    if isinstance(result.raw, FoundTools):
        record["found_tools"] = list(result.raw.names)
    return record


def _decode_result(record: dict[str, Any]) -> ToolResult:
    media = [
        Media(kind=m["kind"], mime_type=_str(m["mime_type"]), data=_str(m["data"]))
        for m in record.get("media") or []
    ]
    found = record.get("found_tools")
    return ToolResult(
        content=_str(record.get("content", "")),
        is_error=bool(record.get("is_error", False)),
        tool_call_id=_str(record["tool_call_id"]),
        raw=FoundTools(tuple(str(n) for n in found)) if isinstance(found, list) else None,
        media=media,
    )


__all__ = ["BadRecord", "decode", "encode"]
