"""The auth layer's own HTTP requests (discovery, registration, tokens): one helper.

Every request goes through the auth layer's own client, never the MCP one's ``auth``
slot; redirects are never followed (a 3xx is the caller's to refuse); failures become
`AuthorizationFailed` naming the URL; log lines carry the method, URL and status only
(bodies and headers may hold secrets).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import httpx2

from cat_code.mcp.auth.types import AuthorizationFailed
from cat_code.mcp.transports.http_pipeline import public_url, timeouts, translate_error

logger = logging.getLogger(__name__)

#: An authorization server that takes longer than this to answer one request is down.
AUTH_REQUEST_TIMEOUT_S = 30.0
#: Metadata and token answers are small; a larger body is refused.
MAX_BODY_BYTES = 1_000_000
_TIMEOUTS = timeouts(read=AUTH_REQUEST_TIMEOUT_S)


def new_client() -> httpx2.AsyncClient:
    """The client `McpAuth` builds when none is given: no redirects, explicit timeouts."""
    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(AUTH_REQUEST_TIMEOUT_S), follow_redirects=False
    )


async def send(
    http: httpx2.AsyncClient,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    data: Mapping[str, str] | None = None,
    json_body: Any = None,
    what: str,
) -> httpx2.Response:
    """Send one request (no redirects) and read its body, at most `MAX_BODY_BYTES` of it;
    `AuthorizationFailed` if the server cannot be reached or answers with more."""
    try:
        request = http.build_request(
            method, url, headers=headers, data=data, json=json_body, extensions=_TIMEOUTS
        )
        streamed = await http.send(request, follow_redirects=False, stream=True)
        try:
            # Read under the cap as it arrives: a hostile server's endless body is never
            # held in memory whole.
            body = bytearray()
            async for chunk in streamed.aiter_bytes():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    raise AuthorizationFailed(
                        f"{what}: {where(url)} answered with more than "
                        f"{MAX_BODY_BYTES // 1_000_000} MB"
                    )
        finally:
            await streamed.aclose()
    except httpx2.InvalidURL as exc:
        raise AuthorizationFailed(f"{what}: {url!r} is not a valid URL") from exc
    except httpx2.HTTPError as exc:
        raise AuthorizationFailed(f"{what}: {translate_error(exc, request.url)}") from exc
    logger.debug("%s %s -> %s", method, public_url(request.url), streamed.status_code)
    return httpx2.Response(
        streamed.status_code, headers=streamed.headers, content=bytes(body), request=request
    )


def json_object(response: httpx2.Response) -> dict[str, Any] | None:
    """The body as a JSON object, or None when it is not one."""
    try:
        data = json.loads(response.content)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def where(url: str) -> str:
    """A URL as errors may show it (no query, no user:password)."""
    try:
        return public_url(httpx2.URL(url))
    except httpx2.InvalidURL:
        return "an invalid URL"
