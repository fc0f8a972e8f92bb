"""The provider seam: a conversation in our own types in, one assistant message out.

The agent loop speaks only these dataclasses; each provider converts them to its API's
wire shape and back inside ``complete`` and nowhere else. Every API failure leaves a
provider as a `ModelError` whose text is one line a user can act on and whose
``retryable`` flag drives the one retry policy (`RetryPolicy`), shared by all providers:
providers never retry by themselves, so backoff is visible and testable.

Answers stream: ``complete`` hands each piece of text to ``on_text`` as it arrives and
still returns the whole `ModelResponse` at the end (tool calls are only complete then).
A call that has streamed text is never retried: the text is already on the user's screen,
and a second answer would show it twice. The caller keeps what arrived instead.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from cat_code.tools.base import ToolResult
from cat_code.tools.threads import in_daemon_thread

if TYPE_CHECKING:
    import httpx2

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: The reason a model stopped. Providers map their own vocabulary onto these.
StopReason = Literal["end_turn", "tool_use", "max_tokens", "refusal", "other"]


@dataclass(slots=True)
class ToolCall:
    """One tool the model asked for. ``error`` is set when its arguments were unusable."""

    id: str
    name: str
    arguments: dict[str, Any]
    error: str | None = None


@dataclass(slots=True)
class UserMessage:
    """What goes to the model from our side: the user's text and/or tool results."""

    text: str = ""
    tool_results: list[ToolResult] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """A piece of the model's extended thinking, kept exactly as the API sent it.

    The Messages API requires the thinking of an assistant turn that called tools to come
    back unchanged, signature included, when the tool results are sent; a
    ``redacted_thinking`` block carries only its opaque ``data``. Never shown as the
    answer, never part of a result's text.
    """

    kind: Literal["thinking", "redacted_thinking"]
    text: str = ""
    signature: str = ""
    data: str = ""

    def content_block(self) -> dict[str, Any]:
        """The block as the Messages API (and ``-p``'s stream-json) shapes it."""
        if self.kind == "redacted_thinking":
            return {"type": "redacted_thinking", "data": self.data}
        return {"type": "thinking", "thinking": self.text, "signature": self.signature}


#: What cut an answer short: the user (Ctrl-C, a cancel) or an API error mid-stream.
CutBy = Literal["user", "error"]


@dataclass(slots=True)
class AssistantMessage:
    """What the model said: text, and the tool calls it wants run.

    ``interrupted``: the answer was cut short and holds only the text that had arrived;
    the value says by what (`CutBy`), and `wire_text` tells the model so, truthfully, on
    the next call. None for a whole answer.
    """

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    interrupted: CutBy | None = None
    #: Extended thinking that came before the text, in the order the API sent it.
    thinking: list[ThinkingBlock] = field(default_factory=list)


Message = UserMessage | AssistantMessage


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it; providers adapt the schema to their API."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(slots=True)
class Usage:
    """Tokens one request used, as the API reported them. ``input_tokens`` counts only the
    uncached part of the prompt (the Messages API's meaning); the cache fields are the
    parts read from and written to the prompt cache (0 for an API that says nothing)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """The whole prompt of the request: uncached, read from and written to the cache."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    def add(self, other: Usage) -> None:
        """Add ``other``'s counts to these."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens


@dataclass(slots=True)
class ModelResponse:
    message: AssistantMessage
    stop_reason: StopReason = "end_turn"
    usage: Usage = field(default_factory=Usage)


ErrorKind = Literal[
    "auth", "permission", "not_found", "bad_request", "rate_limit", "overloaded",
    "server", "network", "timeout", "config", "other", "prompt_too_long",
]  # fmt: skip
#: How the APIs word a request whose prompt does not fit the context window (a 400):
#: Anthropic's "prompt is too long", OpenAI's "context_length_exceeded" / "maximum context
#: length", llama.cpp's "exceeds the available context size".
_TOO_LONG = re.compile(
    r"prompt is too long|context_length_exceeded|maximum context length|context size|"
    r"too many tokens|context window",
    re.IGNORECASE,
)
_RETRYABLE: frozenset[str] = frozenset({"rate_limit", "overloaded", "server", "network", "timeout"})


class ModelError(Exception):
    """A model API call failed. ``str()`` is one line for the user; ``kind`` sorts it."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        if kind == "bad_request" and _TOO_LONG.search(message):
            # Sorted here, whichever provider raised it: compaction then retries once.
            kind = "prompt_too_long"
        self.kind = kind
        self.message = " ".join(message.split())  # one line, whatever the API sent
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in _RETRYABLE

    def __str__(self) -> str:
        return self.message


#: Receives the model's text piece by piece, as it is generated.
TextSink = Callable[[str], None]

#: Appended, for the model, to an answer the user cut short.
INTERRUPTED_NOTE = "[interrupted by the user]"
#: Appended, for the model, to an answer an API error cut short (the user did nothing).
API_ERROR_NOTE = "[interrupted by an API error]"
_CUT_NOTES: dict[CutBy, str] = {"user": INTERRUPTED_NOTE, "error": API_ERROR_NOTE}


def wire_text(message: AssistantMessage) -> str:
    """An assistant message's text as sent back to a model: an interrupted one says by what."""
    if message.interrupted is None:
        return message.text
    note = _CUT_NOTES[message.interrupted]
    return f"{message.text.rstrip()}\n\n{note}" if message.text.strip() else ""


class Provider(Protocol):
    """A model behind an API."""

    #: ``provider:model``, as shown to the user.
    name: str

    async def prepare(self) -> None:
        """Load what the first call needs (its HTTP client); safe to call early, more than once."""

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        """One model call, its text streamed to ``on_text``. Raises `ModelError` for every
        API failure, also one in the middle of the stream."""

    async def close(self) -> None:
        """Release the HTTP client."""


#: Called before each retry with (error, delay in seconds, attempt number starting at 1).
RetryCallback = Callable[[ModelError, float, int], None]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(slots=True)
class RetryPolicy:
    """Exponential backoff with jitter for transient errors; the server's Retry-After wins."""

    retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    #: A server asking for longer than this is not waited for: the error is shown instead.
    max_retry_after_s: float = 60.0
    sleep: Sleep = asyncio.sleep

    def delay(self, error: ModelError, attempt: int) -> float | None:
        """Seconds to wait before retry number ``attempt`` (from 1), or None to give up."""
        if not error.retryable or attempt > self.retries:
            return None
        if error.retry_after is not None:
            if error.retry_after > self.max_retry_after_s:
                return None
            return max(0.0, error.retry_after)
        backoff: float = min(self.base_delay_s * 2.0 ** (attempt - 1), self.max_delay_s)
        # Jitter keeps many clients that failed together from retrying together.
        return backoff * random.uniform(0.75, 1.0)

    async def call(
        self,
        provider: Provider,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        on_retry: RetryCallback | None = None,
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        streamed = False

        def forward(text: str) -> None:
            nonlocal streamed
            if not text:
                return
            streamed = True
            if on_text is not None:
                on_text(text)

        attempt = 0
        while True:
            try:
                return await provider.complete(system, messages, tools, on_text=forward)
            except ModelError as error:
                attempt += 1
                # Text already shown would be shown again by a second answer: the caller
                # keeps the part that arrived and the user decides what next.
                wait = None if streamed else self.delay(error, attempt)
                if wait is None:
                    if attempt > 1:
                        error.message += f" (gave up after {attempt - 1} retries)"
                    raise
                if on_retry is not None:
                    on_retry(error, wait, attempt)
                await self.sleep(wait)


def status_kind(status: int) -> ErrorKind:
    """The error kind an HTTP status means, the same for every API."""
    if status == 401:
        return "auth"
    if status == 403:
        return "permission"
    if status == 404:
        return "not_found"
    if status in (408, 504):
        return "timeout"
    if status == 429:
        return "rate_limit"
    if status == 529 or status == 503:
        return "overloaded"
    if status >= 500 or status == 409:
        return "server"
    if 400 <= status < 500:
        return "bad_request"
    return "other"


def result_text(result: ToolResult, *, mark_errors: bool = True) -> str:
    """A tool result's text as sent to a model: never empty (APIs reject that).

    ``mark_errors`` prefixes ``Error:`` to a failed result that does not say so already,
    for APIs with no error flag on tool results (OpenAI chat completions).
    """
    text = result.content if result.content.strip() else "(no output)"
    if mark_errors and result.is_error and not text.lstrip().lower().startswith("error"):
        text = "Error: " + text
    return text


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The wait a rate-limit answer asks for (``retry-after-ms`` or ``retry-after`` seconds)."""
    if headers is None:
        return None
    for key, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(key)
        if value is None:
            continue
        try:
            return float(value) / scale
        except (TypeError, ValueError):
            continue  # an HTTP date: rare from model APIs; backoff applies instead
    return None


def describe_status(kind: ErrorKind) -> str:
    """A few words for an error kind, used at the start of the user's error line."""
    return {
        "auth": "authentication failed",
        "permission": "permission denied",
        "not_found": "not found",
        "bad_request": "request rejected",
        "rate_limit": "rate limited",
        "overloaded": "overloaded",
        "server": "server error",
        "network": "network error",
        "timeout": "timed out",
        "config": "not configured",
        "other": "error",
        "prompt_too_long": "prompt too long",
    }[kind]


def call_in_background(work: Callable[[], T]) -> asyncio.Future[T]:
    """Run ``work`` on a daemon thread (`cat_code.tools.threads`): quitting right after
    starting must not wait for work nobody is going to use."""
    return in_daemon_thread(work, name="provider prepare")


class HttpClientSlot:
    """A provider's HTTP client, built on a thread the first time it is wanted.

    Importing ``httpx2`` and building a client (its TLS context) costs about 0.1 s of
    CPU: `prepare` starts that early so it overlaps the MCP servers' start. An injected
    client is the caller's to close; a built one is closed by `close`.
    """

    def __init__(self, client: httpx2.AsyncClient | None = None) -> None:
        self._client = client
        self._owned = client is None
        self._building: asyncio.Future[httpx2.AsyncClient] | None = None

    def start(self) -> asyncio.Future[httpx2.AsyncClient] | None:
        """Begin building the client (once); None when there is one already."""
        if self._client is not None:
            return None
        if self._building is None:
            self._building = call_in_background(_new_client)
            self._building.add_done_callback(self._adopt)
        return self._building

    async def get(self) -> httpx2.AsyncClient:
        """The client; `ModelError` ``config`` if it cannot be built (say, a bad CA file)."""
        building = self.start()
        if building is not None:
            try:
                client = await asyncio.shield(building)
            except Exception as exc:
                raise ModelError("config", f"cannot set up the HTTP client: {exc}") from exc
            if self._client is None:  # the done callback has not run yet
                self._client = client
        assert self._client is not None
        return self._client

    def _adopt(self, building: asyncio.Future[httpx2.AsyncClient]) -> None:
        if not building.cancelled() and building.exception() is None and self._client is None:
            self._client = building.result()

    async def close(self) -> None:
        client, self._client = self._client, None
        self._building = None
        if client is not None and self._owned:
            await client.aclose()


#: The model APIs' client timeouts (seconds): long answers may take minutes; a host that
#: does not answer the TCP connect within 5 s is down (and the retry policy tries again).
API_READ_TIMEOUT_S = 600.0
API_CONNECT_TIMEOUT_S = 5.0


def _new_client() -> httpx2.AsyncClient:
    import httpx2  # on the provider's thread: off the critical path

    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(API_READ_TIMEOUT_S, connect=API_CONNECT_TIMEOUT_S)
    )


HOW_TO_CONFIGURE = (
    "set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL with --model openai:<name>"
)


class ModelSpecError(ValueError):
    """``--model`` / ``$CAT_CODE_MODEL`` does not name a model we can use."""


class NoModelConfigured(Exception):
    """The chosen provider has no credentials; the text says what to set."""
