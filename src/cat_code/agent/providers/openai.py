"""Any OpenAI-compatible chat-completions endpoint through the official ``openai`` SDK.

OpenAI itself, or a local Ollama, llama.cpp or vLLM server via ``OPENAI_BASE_URL``
(a local server needs no key: a placeholder is sent when ``OPENAI_API_KEY`` is unset).
The SDK is an optional extra; `create_provider` turns its absence into one line. As for
Anthropic, the SDK is imported on a worker thread by `prepare`, SDK retries are off,
conversion happens only here, and every SDK exception becomes a one-line `ModelError`.
Tool-call arguments that are not a JSON object become a `ToolCall` with ``error`` set,
which the loop reports to the model as an error result.

Answers stream (``stream=True``, assembled by `ChatStream`). The usage is asked for with
``stream_options``; a server that rejects that option (400 naming it) is asked again
without it, and not asked again while this provider lives. A stream that stops before
its finish reason is a network error, as is one that breaks.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import itertools
import json
import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cat_code.agent.providers import NoModelConfigured
from cat_code.agent.providers.base import (
    AssistantMessage,
    ErrorKind,
    Message,
    ModelError,
    ModelResponse,
    StopReason,
    TextSink,
    ToolCall,
    ToolSpec,
    Usage,
    UserMessage,
    describe_status,
    import_in_background,
    result_text,
    retry_after_seconds,
    status_kind,
    wire_text,
)
from cat_code.agent.providers.chat_stream import ChatStream
from cat_code.agent.providers.schema import object_schema

if TYPE_CHECKING:
    import openai

logger = logging.getLogger(__name__)

#: Sent as the key to a local server (``OPENAI_BASE_URL`` set, no ``OPENAI_API_KEY``).
LOCAL_PLACEHOLDER_KEY = "not-needed"

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_call_ids = itertools.count(1)


class OpenAIProvider:
    """Chat-completions models through ``AsyncOpenAI().chat.completions.create``, streamed."""

    def __init__(self, model: str, *, client: openai.AsyncOpenAI | None = None) -> None:
        self.model = model
        self.name = f"openai:{model}"
        if client is None:
            if importlib.util.find_spec("openai") is None:
                raise ImportError("No module named 'openai'", name="openai")
            if not os.environ.get("OPENAI_API_KEY") and not os.environ.get("OPENAI_BASE_URL"):
                raise NoModelConfigured(
                    f"No model configured: {self.name} needs OPENAI_API_KEY, or OPENAI_BASE_URL "
                    "for a local server (Ollama, llama.cpp, vLLM)."
                )
        self._client = client
        self._import: asyncio.Future[Any] | None = None
        #: Whether to send ``stream_options`` (off once the server has refused it).
        self._ask_usage = True

    async def prepare(self) -> None:
        """Import the SDK off the event loop; later calls wait for the same import."""
        if self._import is None:
            self._import = import_in_background("openai")
        await asyncio.shield(self._import)

    async def _ready_client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            await self.prepare()
            import openai

            key = os.environ.get("OPENAI_API_KEY") or LOCAL_PLACEHOLDER_KEY
            try:
                self._client = openai.AsyncOpenAI(api_key=key, max_retries=0)
            except openai.OpenAIError as exc:
                raise ModelError("config", f"OpenAI client: {exc}") from exc
        return self._client

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        params: dict[str, Any] = {"model": self.model, "messages": to_wire(system, messages)}
        if tools:
            params["tools"] = [tool_param(t) for t in tools]
        params["stream"] = True
        client = await self._ready_client()
        import openai

        while True:
            if self._ask_usage:
                params["stream_options"] = {"include_usage": True}
            else:
                params.pop("stream_options", None)
            answer = ChatStream()
            try:
                stream = await client.chat.completions.create(**params)
                async with stream:
                    async for chunk in stream:
                        shown = answer.add(chunk)
                        if shown and on_text is not None:
                            on_text(shown)
            except openai.APIStatusError as exc:
                if self._ask_usage and _refuses_stream_options(exc) and not answer.started:
                    logger.info("%s does not take stream_options; asking without", client.base_url)
                    self._ask_usage = False
                    continue
                raise self._status_error(exc) from exc
            except openai.APIConnectionError as exc:
                where = str(client.base_url)
                if isinstance(exc, openai.APITimeoutError):
                    raise ModelError("timeout", f"OpenAI API timed out ({where})") from exc
                cause = exc.__cause__
                reason = str(cause) if cause is not None and str(cause) else exc.message
                raise ModelError("network", f"OpenAI API unreachable at {where}: {reason}") from exc
            except openai.APIError as exc:  # an error event in the middle of the stream
                raise _stream_error(exc) from exc
            except openai.OpenAIError as exc:
                raise ModelError("other", f"OpenAI API: {exc}") from exc
            return from_stream(answer)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()

    def _status_error(self, exc: openai.APIStatusError) -> ModelError:
        status = exc.status_code
        kind = status_kind(status)
        body = exc.body
        detail = body.get("message") if isinstance(body, dict) else None
        if not isinstance(detail, str) or not detail:
            detail = exc.message
        hint = ""
        if kind == "auth":
            hint = " — check OPENAI_API_KEY"
        elif kind == "not_found":
            hint = f" — is the model name {self.model!r} right?"
        return ModelError(
            kind,
            f"OpenAI API {describe_status(kind)} ({status}): {detail}{hint}",
            status=status,
            retry_after=retry_after_seconds(exc.response.headers),
        )


def tool_param(tool: ToolSpec) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name, "parameters": object_schema(tool.input_schema)}
    if tool.description:
        function["description"] = tool.description
    return {"type": "function", "function": function}


def to_wire(system: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our messages as chat-completions messages."""
    wire: list[dict[str, Any]] = []
    if system:
        wire.append({"role": "system", "content": system})
    for message in messages:
        if isinstance(message, UserMessage):
            # Chat-completions tool messages take text only: a result's images and audio
            # reach the model as the placeholder lines in its text, never as `media`.
            wire.extend(
                {"role": "tool", "tool_call_id": r.tool_call_id, "content": result_text(r)}
                for r in message.tool_results
            )
            if message.text:
                wire.append({"role": "user", "content": message.text})
            continue
        if not wire_text(message) and not message.tool_calls:
            continue
        turn: dict[str, Any] = {"role": "assistant", "content": wire_text(message) or None}
        if message.tool_calls:
            turn["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": json.dumps(call.arguments, ensure_ascii=False),
                    },
                }
                for call in message.tool_calls
            ]
        wire.append(turn)
    return wire


def from_stream(answer: ChatStream) -> ModelResponse:
    """A streamed answer as our `ModelResponse`."""
    if answer.finish_reason is None:
        raise ModelError("network", "OpenAI API: the answer stream ended before the answer did")
    # Some local servers leave the id out; the result must still be matched to its call.
    calls = [
        _tool_call(call.id or f"call_{next(_call_ids)}", call.name, call.arguments)
        for call in answer.calls
    ]
    return ModelResponse(
        message=AssistantMessage(text=answer.text or answer.refusal, tool_calls=calls),
        stop_reason=_FINISH_REASONS.get(answer.finish_reason, "other"),
        usage=Usage(input_tokens=answer.prompt_tokens, output_tokens=answer.completion_tokens),
    )


def _refuses_stream_options(exc: openai.APIStatusError) -> bool:
    return exc.status_code in (400, 422) and "stream_options" in str(exc)


#: Error types a server may name in a mid-stream error event, and what they mean.
_STREAM_ERROR_KINDS: dict[str, ErrorKind] = {
    "server_error": "server",
    "api_error": "server",
    "overloaded_error": "overloaded",
    "rate_limit_exceeded": "rate_limit",
    "rate_limit_error": "rate_limit",
    "insufficient_quota": "rate_limit",
    "timeout": "timeout",
}


def _stream_error(exc: openai.APIError) -> ModelError:
    body = exc.body if isinstance(exc.body, dict) else {}
    names = [str(body.get(key) or "") for key in ("type", "code")]
    kind: ErrorKind = next(
        (_STREAM_ERROR_KINDS[name] for name in names if name in _STREAM_ERROR_KINDS), "other"
    )
    return ModelError(kind, f"OpenAI API {describe_status(kind)} mid-answer: {exc.message}")


def _tool_call(call_id: str, name: str, raw_arguments: str | None) -> ToolCall:
    if not raw_arguments or not raw_arguments.strip():
        return ToolCall(call_id, name, {})
    try:
        arguments = json.loads(raw_arguments)
    except json.JSONDecodeError as exc:
        error = f"the arguments are not valid JSON ({exc.msg}): {raw_arguments:.200}"
        return ToolCall(call_id, name, {}, error=error)
    if not isinstance(arguments, dict):
        error = f"the arguments must be a JSON object, got: {raw_arguments:.200}"
        return ToolCall(call_id, name, {}, error=error)
    return ToolCall(call_id, name, arguments)
