"""Any OpenAI-compatible chat-completions endpoint, spoken over ``httpx2`` (no SDK).

OpenAI itself, or a local Ollama, llama.cpp or vLLM server via ``OPENAI_BASE_URL``
(default ``https://api.openai.com/v1``; a local server needs no key: a placeholder is
sent as the bearer token when ``OPENAI_API_KEY`` is unset). ``OPENAI_ORG_ID`` and
``OPENAI_PROJECT_ID`` are sent as the SDK sent them. As for Anthropic (`http_api`),
there are no retries here, conversion happens only here, and every failure becomes a
one-line `ModelError`. Tool-call arguments that are not a JSON object become a
`ToolCall` with ``error`` set, which the loop reports to the model as an error result.

Answers stream (``stream=True``, assembled by `ChatStream`, ending at ``data: [DONE]``).
The usage is asked for with ``stream_options``; a server that rejects that option (400
naming it) is asked again without it, and not asked again while this provider lives. An
``error`` object in the stream is a mid-answer error. A stream that stops before its
finish reason is a network error, as is one that breaks. ``reasoning_effort`` is sent when
the user set one (`agent.thinking`); reasoning a server does not return is never shown.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from cat_code.agent.providers.base import (
    AssistantMessage,
    ErrorKind,
    HttpClientSlot,
    Message,
    ModelError,
    ModelResponse,
    NoModelConfigured,
    StopReason,
    TextSink,
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
from cat_code.agent.providers.chat_stream import ChatStream
from cat_code.agent.providers.schema import object_schema
from cat_code.agent.thinking import ThinkingConfig, thinking_config

if TYPE_CHECKING:
    import httpx2

    from cat_code.agent.providers.http_api import ApiStatus

logger = logging.getLogger(__name__)

#: Sent as the key to a local server (``OPENAI_BASE_URL`` set, no ``OPENAI_API_KEY``).
LOCAL_PLACEHOLDER_KEY = "not-needed"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
_API = "OpenAI API"

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
_call_ids = itertools.count(1)


def request_headers(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The headers of every request: the bearer key, organization and project if set."""
    env = os.environ if environ is None else environ
    key = env.get("OPENAI_API_KEY") or LOCAL_PLACEHOLDER_KEY
    headers = {"authorization": f"Bearer {key}", "user-agent": "cat-code"}
    if organization := env.get("OPENAI_ORG_ID"):
        headers["openai-organization"] = organization
    if project := env.get("OPENAI_PROJECT_ID"):
        headers["openai-project"] = project
    return headers


def completions_url(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    base = (env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    return f"{base}/chat/completions"


class OpenAIProvider:
    """Chat-completions models through ``POST …/chat/completions``, streamed."""

    def __init__(
        self,
        model: str,
        *,
        client: httpx2.AsyncClient | None = None,
        thinking: ThinkingConfig | None = None,
    ) -> None:
        self.model = model
        self.name = f"openai:{model}"
        #: ``reasoning_effort`` sent with every request when the user set one.
        self.reasoning_effort = (
            thinking_config() if thinking is None else thinking
        ).reasoning_effort
        if not os.environ.get("OPENAI_API_KEY") and not os.environ.get("OPENAI_BASE_URL"):
            raise NoModelConfigured(
                f"No model configured: {self.name} needs OPENAI_API_KEY, or OPENAI_BASE_URL "
                "for a local server (Ollama, llama.cpp, vLLM)."
            )
        self._http = HttpClientSlot(client)
        #: Whether to send ``stream_options`` (off once the server has refused it).
        self._ask_usage = True

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
        from cat_code.agent.providers.http_api import (
            ApiStatus,
            event_json,
            post_stream,
            sse_events,
        )

        params: dict[str, Any] = {"model": self.model, "messages": to_wire(system, messages)}
        if tools:
            params["tools"] = [tool_param(t) for t in tools]
        if self.reasoning_effort:
            params["reasoning_effort"] = self.reasoning_effort
        params["stream"] = True
        client = await self._http.get()
        url = completions_url()
        while True:
            if self._ask_usage:
                params["stream_options"] = {"include_usage": True}
            else:
                params.pop("stream_options", None)
            answer = ChatStream()
            try:
                async with post_stream(client, url, request_headers(), params, _API) as response:
                    finished = False
                    async for event in sse_events(response, _API):
                        # Read on after [DONE] (as the SDK did): the connection stays reusable.
                        finished = finished or event.data.strip() == "[DONE]"
                        if finished or not event.data:
                            continue
                        chunk = event_json(event, _API)
                        if chunk.get("error"):
                            raise _stream_error(chunk["error"])
                        shown = answer.add(chunk)
                        if shown and on_text is not None:
                            on_text(shown)
            except ApiStatus as exc:
                if self._ask_usage and _refuses_stream_options(exc) and not answer.started:
                    logger.info("%s does not take stream_options; asking without", url)
                    self._ask_usage = False
                    continue
                raise self._status_error(exc) from exc
            return from_stream(answer)

    async def close(self) -> None:
        await self._http.close()

    def _status_error(self, exc: ApiStatus) -> ModelError:
        status = exc.status
        kind = status_kind(status)
        hint = ""
        if kind == "auth":
            hint = " — check OPENAI_API_KEY"
        elif kind == "not_found":
            hint = f" — is the model name {self.model!r} right?"
        return ModelError(
            kind,
            f"{_API} {describe_status(kind)} ({status}): {exc.detail()}{hint}",
            status=status,
            retry_after=retry_after_seconds(exc.headers),
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


def _refuses_stream_options(exc: ApiStatus) -> bool:
    return exc.status in (400, 422) and "stream_options" in exc.text


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


def _stream_error(error: Any) -> ModelError:
    body = error if isinstance(error, dict) else {}
    names = [str(body.get(key) or "") for key in ("type", "code")]
    kind: ErrorKind = next(
        (_STREAM_ERROR_KINDS[name] for name in names if name in _STREAM_ERROR_KINDS), "other"
    )
    message = body.get("message")
    if not isinstance(message, str) or not message:
        message = "An error occurred during streaming"
    return ModelError(kind, f"{_API} {describe_status(kind)} mid-answer: {message}")


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
