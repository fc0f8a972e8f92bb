"""The Anthropic Messages API through the official ``anthropic`` SDK.

The SDK reads ``ANTHROPIC_API_KEY`` (or ``ANTHROPIC_AUTH_TOKEN``, or its profile files)
and ``ANTHROPIC_BASE_URL`` itself. Importing it takes about a second, so `prepare`
imports it on a worker thread (the REPL's prompt is up meanwhile) and the client is
built on first use; whether credentials exist is judged from the environment alone.
Its retries are off: `RetryPolicy` retries for every provider alike. Conversion happens
only here: our messages become content blocks (consecutive same-role messages merged,
empty ones dropped, tool results first in a user turn, as the API requires), tool
schemas pass through `object_schema`, and every SDK exception becomes a one-line
`ModelError`.

Answers stream (``messages.stream``): text deltas go to ``on_text`` as they arrive and
the SDK assembles the final message (tool inputs included), read by `from_wire` as a
non-streamed one would be. An ``error`` event mid-stream carries a 200 status, so its
kind comes from its error type; a connection that breaks mid-stream (which the SDK lets
through as an ``httpx2`` error) or a stream that stops before its stop reason is a
network error.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from cat_code.agent.providers import HOW_TO_CONFIGURE, NoModelConfigured
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
from cat_code.agent.providers.schema import object_schema
from cat_code.tools.base import ToolResult

if TYPE_CHECKING:
    import anthropic

logger = logging.getLogger(__name__)

#: Output budget per model call.
MAX_TOKENS = 8192

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


#: Variables any of which lets the SDK find a credential without a key in the environment.
_CREDENTIAL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE", "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_IDENTITY_TOKEN", "ANTHROPIC_IDENTITY_TOKEN_FILE",
)  # fmt: skip


def credentials_in_sight(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the SDK has something to authenticate with: a variable or a profile folder."""
    env = os.environ if environ is None else environ
    if any(env.get(name) for name in _CREDENTIAL_VARS):
        return True
    home = env.get("HOME")
    return home is not None and (Path(home) / ".config" / "anthropic").is_dir()


class AnthropicProvider:
    """Claude models through ``AsyncAnthropic().messages.create``."""

    def __init__(self, model: str, *, client: anthropic.AsyncAnthropic | None = None) -> None:
        self.model = model
        self.name = f"anthropic:{model}"
        if client is None and not credentials_in_sight():
            raise NoModelConfigured(f"No model configured: {HOW_TO_CONFIGURE}.")
        self._client = client
        self._import: asyncio.Future[Any] | None = None

    async def prepare(self) -> None:
        """Import the SDK off the event loop; later calls wait for the same import."""
        if self._import is None:
            self._import = import_in_background("anthropic")
        await asyncio.shield(self._import)

    async def _ready_client(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            await self.prepare()
            import anthropic

            try:
                client = anthropic.AsyncAnthropic(max_retries=0)
            except anthropic.AnthropicError as exc:  # e.g. a profile file that is broken
                raise ModelError("config", f"Anthropic credentials: {exc}") from exc
            if not (client.api_key or client.auth_token or client.credentials is not None):
                await client.close()
                raise ModelError("config", f"No model configured: {HOW_TO_CONFIGURE}.")
            self._client = client
        return self._client

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": MAX_TOKENS,
            "messages": to_wire(messages),
            # Automatic prompt caching: an agent resends the same growing prefix every turn.
            "cache_control": {"type": "ephemeral"},
        }
        if system:
            params["system"] = system
        if tools:
            params["tools"] = [tool_param(t) for t in tools]
        client = await self._ready_client()
        import anthropic
        import httpx2

        try:
            async with client.messages.stream(**params) as stream:
                async for event in stream:
                    if event.type == "text" and event.text and on_text is not None:
                        on_text(event.text)
                response = await stream.get_final_message()
        except anthropic.APIStatusError as exc:
            raise self._status_error(exc) from exc
        except anthropic.APIConnectionError as exc:
            raise self._connection_error(exc) from exc
        except anthropic.AnthropicError as exc:
            raise ModelError("other", f"Anthropic API: {exc}") from exc
        except httpx2.TimeoutException as exc:
            raise ModelError("timeout", f"Anthropic API timed out ({client.base_url})") from exc
        except httpx2.TransportError as exc:
            raise ModelError(
                "network", f"Anthropic API connection broke mid-answer: {exc or type(exc).__name__}"
            ) from exc
        except (ValueError, RuntimeError) as exc:  # the SDK cannot assemble what was sent
            raise ModelError("other", f"Anthropic API sent an unreadable stream: {exc}") from exc
        if response.stop_reason is None:
            raise ModelError(
                "network", "Anthropic API: the answer stream ended before the answer did"
            )
        return from_wire(response)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()

    def _status_error(self, exc: anthropic.APIStatusError) -> ModelError:
        status = exc.status_code
        if status < 400:  # an error event in a stream that had started with 200
            status = _ERROR_TYPE_STATUS.get(exc.type or "", 500)
        kind: ErrorKind = status_kind(status)
        if exc.type == "overloaded_error":
            kind = "overloaded"
        detail = exc.api_message or exc.message
        hint = ""
        if kind == "auth":
            hint = " — check ANTHROPIC_API_KEY"
        elif kind == "not_found":
            hint = f" — is the model name {self.model!r} right?"
        return ModelError(
            kind,
            f"Anthropic API {describe_status(kind)} ({status}): {detail}{hint}",
            status=status,
            retry_after=retry_after_seconds(exc.response.headers),
        )

    def _connection_error(self, exc: anthropic.APIConnectionError) -> ModelError:
        import anthropic

        timeout = isinstance(exc, anthropic.APITimeoutError)
        cause = exc.__cause__
        reason = str(cause) if cause is not None and str(cause) else exc.message
        where = str(self._client.base_url) if self._client is not None else "?"
        if timeout:
            return ModelError("timeout", f"Anthropic API timed out ({where})")
        return ModelError("network", f"Anthropic API unreachable at {where}: {reason}")


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


def from_wire(response: Any) -> ModelResponse:
    """A Messages API response as our `ModelResponse`."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in response.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {}
            calls.append(ToolCall(id=block.id, name=block.name, arguments=dict(arguments)))
        else:
            logger.debug("ignoring content block of type %r", kind)
    usage = getattr(response, "usage", None)
    return ModelResponse(
        message=AssistantMessage(text="".join(texts), tool_calls=calls),
        stop_reason=_STOP_REASONS.get(cast(str, response.stop_reason), "other"),
        usage=Usage(
            input_tokens=getattr(usage, "input_tokens", 0) or 0,
            output_tokens=getattr(usage, "output_tokens", 0) or 0,
            cache_read_input_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
            cache_creation_input_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
        ),
    )
