"""The Anthropic Messages API, spoken over ``httpx2`` (no SDK: see `http_api`).

Credentials and address come from the environment as the SDK read them:
``ANTHROPIC_API_KEY`` (sent as ``x-api-key``) or ``ANTHROPIC_AUTH_TOKEN`` (a bearer
token), ``ANTHROPIC_BASE_URL`` (default ``https://api.anthropic.com``); every request
names ``anthropic-version``. There are no retries here: `RetryPolicy` retries for every
provider alike. Conversion happens only here: our messages become content blocks
(consecutive same-role messages merged, empty ones dropped, tool results first in a user
turn, as the API requires), tool schemas pass through `object_schema`, and every failure
becomes a one-line `ModelError`.

Answers stream: `MessageStream` reads the Messages events (``message_start``,
``content_block_start/delta/stop``, ``message_delta``, ``message_stop``), hands text deltas
to ``on_text`` as they arrive and assembles the content blocks, tool inputs from their
``input_json_delta`` pieces. An ``error`` event mid-stream carries a 200 status, so its
kind comes from its error type; a connection that breaks mid-stream, or a stream that
stops before its stop reason, is a network error.

Extended thinking (`agent.thinking`, off by default) is asked for only when the model
catalogue says the model can think: ``thinking.budget_tokens`` within the model's output
limit. Its ``thinking`` and ``redacted_thinking`` blocks are kept on the message as
`ThinkingBlock` objects, signatures included, and sent back first and unchanged in the
assistant turn, as the API requires across tool-use turns; they are never answer text.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cat_code.agent import models
from cat_code.agent.providers.base import (
    HOW_TO_CONFIGURE,
    AssistantMessage,
    ErrorKind,
    HttpClientSlot,
    Message,
    ModelError,
    ModelResponse,
    NoModelConfigured,
    StopReason,
    TextSink,
    ThinkingBlock,
    ToolCall,
    ToolSpec,
    Usage,
    UserMessage,
    describe_status,
    result_text,
    retry_after_seconds,
    status_kind,
    wire_text,
)
from cat_code.agent.providers.schema import object_schema
from cat_code.agent.thinking import ThinkingConfig, request_limits, thinking_config
from cat_code.tools.base import ToolResult

if TYPE_CHECKING:
    import httpx2

logger = logging.getLogger(__name__)

#: Output budget per model call.
MAX_TOKENS = 8192
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: The Messages API version every request names (the one the SDK sends).
API_VERSION = "2023-06-01"
_API = "Anthropic API"

#: The status each API error type stands for, for errors sent mid-stream (with a 200).
_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}


def credentials_in_sight(environ: Mapping[str, str] | None = None) -> bool:
    """Whether there is a key or a token to authenticate with."""
    env = os.environ if environ is None else environ
    return bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"))


def request_headers(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The headers of every request: credentials and the API version."""
    env = os.environ if environ is None else environ
    headers = {"anthropic-version": API_VERSION, "user-agent": "cat-code"}
    if key := env.get("ANTHROPIC_API_KEY"):
        headers["x-api-key"] = key
    if token := env.get("ANTHROPIC_AUTH_TOKEN"):
        headers["authorization"] = f"Bearer {token}"
    return headers


def messages_url(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    base = (env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/v1/messages"


class AnthropicProvider:
    """Claude models through ``POST /v1/messages`` with ``"stream": true``."""

    def __init__(
        self,
        model: str,
        *,
        client: httpx2.AsyncClient | None = None,
        thinking: ThinkingConfig | None = None,
    ) -> None:
        self.model = model
        self.name = f"anthropic:{model}"
        if not credentials_in_sight():
            raise NoModelConfigured(f"No model configured: {HOW_TO_CONFIGURE}.")
        self._http = HttpClientSlot(client)
        info = models.lookup(self.name)
        self._max_output = info.max_output
        config = thinking_config() if thinking is None else thinking
        #: The thinking budget of every request; 0 when off or the model cannot think.
        self.thinking_budget = config.budget_tokens if info.capabilities.thinking else 0
        if config.enabled and not info.capabilities.thinking:
            logger.warning("%s cannot use extended thinking; thinking stays off", self.name)

    async def prepare(self) -> None:
        """Build the HTTP client on a thread (it overlaps the servers' start)."""
        await self._http.get()

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        from cat_code.agent.providers.http_api import ApiStatus, post_stream, sse_events

        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": min(MAX_TOKENS, self._max_output),
            "messages": to_wire(messages),
            # Automatic prompt caching: an agent resends the same growing prefix every turn.
            "cache_control": {"type": "ephemeral"},
            "stream": True,
        }
        if system:
            params["system"] = system
        if tools:
            params["tools"] = [tool_param(t) for t in tools]
        if self.thinking_budget:
            max_tokens, budget = request_limits(self.thinking_budget, MAX_TOKENS, self._max_output)
            params["max_tokens"] = max_tokens
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        client = await self._http.get()
        stream = MessageStream()
        try:
            async with post_stream(
                client, messages_url(), request_headers(), params, _API
            ) as response:
                async for event in sse_events(response, _API):
                    shown = stream.add(event.event, event.data)
                    if shown and on_text is not None:
                        on_text(shown)
        except ApiStatus as exc:
            raise self._status_error(
                exc.status, exc.error_field(), exc.detail(), exc.headers
            ) from exc
        if stream.error is not None:
            error = stream.error
            status = _ERROR_TYPE_STATUS.get(str(error.get("type") or ""), 500)
            message = str(error.get("message") or "error event")
            raise self._status_error(status, error, message, None)
        if stream.stop_reason is None:
            raise ModelError("network", f"{_API}: the answer stream ended before the answer did")
        return stream.response()

    async def close(self) -> None:
        await self._http.close()

    def _status_error(
        self,
        status: int,
        error: Mapping[str, Any],
        detail: str,
        headers: Mapping[str, str] | None,
    ) -> ModelError:
        kind: ErrorKind = status_kind(status)
        if error.get("type") == "overloaded_error":
            kind = "overloaded"
        hint = ""
        if kind == "auth":
            hint = " — check ANTHROPIC_API_KEY"
        elif kind == "not_found":
            hint = f" — is the model name {self.model!r} right?"
        return ModelError(
            kind,
            f"{_API} {describe_status(kind)} ({status}): {detail}{hint}",
            status=status,
            retry_after=retry_after_seconds(headers),
        )


@dataclass(slots=True)
class _Block:
    type: str
    text: str = ""
    id: str = ""
    name: str = ""
    input: Any = None
    #: ``input_json_delta`` pieces, joined and parsed when the block stops.
    partial_json: str = ""
    #: A thinking block's signature; a redacted one's opaque data.
    signature: str = ""
    data: str = ""


@dataclass(slots=True)
class MessageStream:
    """One streamed Messages answer, put back together event by event."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    stop_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    #: The ``error`` object of an error event; the stream ends with it.
    error: dict[str, Any] | None = None

    def add(self, name: str, data: str) -> str:
        """Take one event in; return the text it adds for the user (maybe empty)."""
        if name == "ping" or not data:
            return ""
        try:
            event = json.loads(data)
        except ValueError as exc:
            raise ModelError("other", f"{_API} sent an event that is not JSON: {exc}") from exc
        if not isinstance(event, dict):
            return ""
        kind = event.get("type", name)
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_start":
            raw = event.get("content_block") or {}
            block = _Block(str(raw.get("type", "")))
            block.text = str(raw.get("text") or "")
            block.id = str(raw.get("id") or "")
            block.name = str(raw.get("name") or "")
            block.input = raw.get("input")
            block.data = str(raw.get("data") or "")
            self.blocks[int(event.get("index", len(self.blocks)))] = block
            if block.type == "thinking":
                # Thinking is never answer text: kept on the block, not shown as it streams.
                block.text = str(raw.get("thinking") or "")
                block.signature = str(raw.get("signature") or "")
                return ""
            return block.text
        if kind == "message_start":
            self._usage((event.get("message") or {}).get("usage"))
        elif kind == "message_delta":
            self.stop_reason = (event.get("delta") or {}).get("stop_reason") or self.stop_reason
            self._usage(event.get("usage"))
        elif kind == "error":
            error = event.get("error")
            self.error = error if isinstance(error, dict) else {"message": str(error)}
        return ""

    def _delta(self, event: dict[str, Any]) -> str:
        block = self.blocks.get(int(event.get("index", -1)))
        delta = event.get("delta") or {}
        if block is None:
            return ""
        if delta.get("type") == "text_delta":
            text = str(delta.get("text") or "")
            block.text += text
            return text
        if delta.get("type") == "input_json_delta":
            block.partial_json += str(delta.get("partial_json") or "")
        elif delta.get("type") == "thinking_delta":
            piece = str(delta.get("thinking") or "")
            block.text += piece
        elif delta.get("type") == "signature_delta":
            block.signature += str(delta.get("signature") or "")
        return ""

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        # message_start counts the input; message_delta's counts are running totals.
        if usage.get("input_tokens"):
            self.input_tokens = int(usage["input_tokens"])
        if usage.get("output_tokens") is not None:
            self.output_tokens = int(usage["output_tokens"])
        if usage.get("cache_read_input_tokens"):
            self.cache_read_input_tokens = int(usage["cache_read_input_tokens"])
        if usage.get("cache_creation_input_tokens"):
            self.cache_creation_input_tokens = int(usage["cache_creation_input_tokens"])

    def response(self) -> ModelResponse:
        texts: list[str] = []
        calls: list[ToolCall] = []
        thinking: list[ThinkingBlock] = []
        for _, block in sorted(self.blocks.items()):
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(ToolCall(block.id, block.name, _tool_input(block)))
            elif block.type == "thinking":
                thinking.append(ThinkingBlock("thinking", block.text, block.signature))
            elif block.type == "redacted_thinking":
                thinking.append(ThinkingBlock("redacted_thinking", data=block.data))
            else:
                logger.debug("ignoring content block of type %r", block.type)
        message = AssistantMessage(text="".join(texts), tool_calls=calls, thinking=thinking)
        return ModelResponse(
            message=message,
            stop_reason=_STOP_REASONS.get(self.stop_reason or "", "other"),
            usage=Usage(
                input_tokens=self.input_tokens,
                output_tokens=self.output_tokens,
                cache_read_input_tokens=self.cache_read_input_tokens,
                cache_creation_input_tokens=self.cache_creation_input_tokens,
            ),
        )


def _tool_input(block: _Block) -> dict[str, Any]:
    if block.partial_json.strip():
        try:
            value = json.loads(block.partial_json)
        except ValueError as exc:
            raise ModelError(
                "other", f"{_API} sent tool input that is not JSON: {block.partial_json:.200}"
            ) from exc
    else:
        value = block.input
    return dict(value) if isinstance(value, dict) else {}


def tool_param(tool: ToolSpec) -> dict[str, Any]:
    param: dict[str, Any] = {"name": tool.name, "input_schema": object_schema(tool.input_schema)}
    if tool.description:
        param["description"] = tool.description
    return param


def to_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our messages as Messages API turns."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        blocks: list[dict[str, Any]] = []
        if isinstance(message, UserMessage):
            role = "user"
            blocks.extend(
                {
                    "type": "tool_result",
                    "tool_use_id": result.tool_call_id,
                    "content": tool_result_content(result),
                    "is_error": result.is_error,
                }
                for result in message.tool_results
            )
            if message.text:
                blocks.append({"type": "text", "text": message.text})
        else:
            role = "assistant"
            # Thinking first and unchanged (signatures included), as the API requires.
            blocks.extend(block.content_block() for block in message.thinking)
            if text := wire_text(message):
                blocks.append({"type": "text", "text": text})
            blocks.extend(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
                for call in message.tool_calls
            )
        if not blocks:
            continue  # the API rejects empty turns
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


#: The image types the Messages API takes in content blocks (it takes no audio).
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def tool_result_content(result: ToolResult) -> str | list[dict[str, Any]]:
    """A tool result's content: its text, then its images as image blocks.

    Audio and other media stay as the placeholder lines in the text: the API takes none.
    """
    text = result_text(result, mark_errors=False)
    images = [m for m in result.media if m.kind == "image" and m.mime_type in IMAGE_TYPES]
    if not images:
        return text
    return [
        {"type": "text", "text": text},
        *(
            {
                "type": "image",
                "source": {"type": "base64", "media_type": m.mime_type, "data": m.data},
            }
            for m in images
        ),
    ]
