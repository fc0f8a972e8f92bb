"""A model API's streamed answer over plain ``httpx2``: one POST, its server-sent events.

Both providers speak their API directly (no SDK: importing one took most of a second,
the whole start-up of ``-p``). This module owns what they share: the timeouts the SDKs
used, the POST itself, and the translation of transport failures into `ModelError`
(unreachable or timed out before an answer; a connection that broke mid-answer). An
answer with an error status is handed back as `ApiStatus` (status, headers, body), which
each provider words in its API's terms. `sse_events` yields the events of a 2xx answer
and raises `ModelError` if the stream breaks.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, cast

import httpx2

from cat_code.agent.providers.base import ModelError

logger = logging.getLogger(__name__)

#: The most of an error body quoted to the user.
ERROR_EXCERPT_CHARS = 500


class ApiStatus(Exception):
    """The API answered with an error status; ``body`` is its JSON (None if not JSON)."""

    def __init__(self, status: int, headers: httpx2.Headers, text: str, body: Any) -> None:
        super().__init__(f"HTTP {status}: {text[:ERROR_EXCERPT_CHARS]}")
        self.status = status
        self.headers = headers
        self.text = text
        self.body = body

    def error_field(self) -> dict[str, Any]:
        """The ``error`` object both APIs put in an error body (empty if there is none)."""
        if isinstance(self.body, dict):
            error = self.body.get("error", self.body)
            if isinstance(error, dict):
                return error
        return {}

    def detail(self) -> str:
        """The API's own words for the error, else an excerpt of the body."""
        message = self.error_field().get("message")
        if isinstance(message, str) and message:
            return message
        return self.text[:ERROR_EXCERPT_CHARS] or f"HTTP {self.status}"


@contextlib.asynccontextmanager
async def post_stream(
    client: httpx2.AsyncClient, url: str, headers: dict[str, str], body: dict[str, Any], api: str
) -> AsyncIterator[httpx2.Response]:
    """POST ``body``; the open response if its status is 2xx, else `ApiStatus`.

    ``api`` names the API in error lines (``Anthropic API``). Failures before the answer
    starts are `ModelError` network or timeout, naming where we tried to reach.
    """
    where = _origin(url)
    answering = False
    try:
        async with client.stream("POST", url, headers=headers, json=body) as response:
            if response.status_code >= 400:
                raw = await response.aread()
                text = raw.decode("utf-8", errors="replace")
                try:
                    parsed: Any = json.loads(text)
                except ValueError:
                    parsed = None
                raise ApiStatus(response.status_code, response.headers, text, parsed)
            answering = True
            yield response
    except httpx2.TimeoutException as exc:
        raise ModelError("timeout", f"{api} timed out ({where})") from exc
    except (httpx2.ConnectError, httpx2.UnsupportedProtocol, httpx2.ProxyError) as exc:
        reason = str(exc) or type(exc).__name__
        raise ModelError("network", f"{api} unreachable at {where}: {reason}") from exc
    except httpx2.TransportError as exc:
        reason = str(exc) or type(exc).__name__
        if not answering:  # e.g. a kept-alive connection the server had closed
            raise ModelError("network", f"{api} connection to {where} failed: {reason}") from exc
        raise ModelError("network", f"{api} connection broke mid-answer: {reason}") from exc


async def sse_events(response: httpx2.Response, api: str) -> AsyncGenerator[httpx2.ServerSentEvent]:
    """The answer's events; a stream that is not SSE or does not parse is `ModelError`."""
    source = httpx2.EventSource(response)
    # EventSource.__aiter__ is an async generator typed as an iterator.
    events = cast(AsyncGenerator[httpx2.ServerSentEvent], aiter(source))
    try:
        async for event in events:
            yield event
    except httpx2.SSEError as exc:
        raise ModelError("other", f"{api} sent an unreadable stream: {exc}") from exc
    finally:
        await events.aclose()


def event_json(event: httpx2.ServerSentEvent, api: str) -> dict[str, Any]:
    """An event's data as a JSON object; anything else is `ModelError`."""
    try:
        data = json.loads(event.data)
    except ValueError as exc:
        raise ModelError("other", f"{api} sent an event that is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelError("other", f"{api} sent an event that is not a JSON object")
    return data


def _origin(url: str) -> str:
    """The URL without its path: where a connection goes, never a key in a query."""
    parsed = httpx2.URL(url)
    return str(parsed.copy_with(path="/", query=None, fragment=None)).rstrip("/")


__all__ = ["ApiStatus", "event_json", "post_stream", "sse_events"]
