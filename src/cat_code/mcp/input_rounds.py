"""What a 2026-07-28 request's answer may ask of the client before it is complete.

`stateless_request` sends one request and follows up on its answer: another protocol
version (-32022, once), headers that no longer match a changed tool (-32020: the tools are
listed again, once), a client capability we lack (-32021: a clear error), and
``input_required`` answers, each answered (`answer_inputs`: forms through the elicitation
handler, the roots as they are now, anything else declined) and retried with a new id, at
most `MAX_INPUT_ROUNDS` times. `url_required` turns a -32042 ("URL elicitation required")
into an error saying what the user chose for each URL; the library never opens a URL.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from cat_code.mcp.elicitation import url_elicitations
from cat_code.mcp.errors import McpError, ProtocolError
from cat_code.mcp.requests import ProgressHandler
from cat_code.mcp.roots import Roots
from cat_code.mcp.session.stateless import (
    HEADER_MISMATCH,
    MISSING_CAPABILITY,
    UNSUPPORTED_VERSION,
    result_type,
)
from cat_code.mcp.transports.base import JsonObject

if TYPE_CHECKING:
    from cat_code.mcp.client import McpClient

logger = logging.getLogger(__name__)

#: How many times one request may come back asking for input (2026-07-28 multi-round
#: requests) before it fails: a server asking for ever must not hold a call for ever.
MAX_INPUT_ROUNDS = 8


async def stateless_request(
    client: McpClient,
    method: str,
    params: JsonObject | None,
    timeout: float | None,
    progress: ProgressHandler | None,
) -> Any:
    """A 2026-07-28 request with the retries its answers may ask for."""
    session = client.modern
    assert session is not None
    retried: set[int] = set()
    rounds = 0
    while True:
        try:
            result = await client.requests.timed(method, params, timeout, progress)
        except McpError as exc:
            if exc.code in retried:
                raise
            retried.add(exc.code)
            if exc.code == UNSUPPORTED_VERSION:
                mutual = session.mutual_version(exc.data)
                if mutual is None:
                    raise McpError(
                        exc.code,
                        f"server '{client.name}' supports none of the protocol versions "
                        f"cat-code speaks ({exc.message})",
                        exc.data,
                    ) from exc
                logger.info("%s: the server asked for protocol %s", client.name, mutual)
                session.use_version(mutual)
                continue
            if exc.code == HEADER_MISMATCH:
                logger.info("%s: %s; listing the tools again", client.name, exc.message)
                if method == "tools/call":
                    await client.list_tools(refresh=True)
                continue
            if exc.code == MISSING_CAPABILITY:
                raise McpError(
                    exc.code,
                    f"server '{client.name}' needs a client capability cat-code does not "
                    f"offer: {_missing_capability(exc.data)} ({exc.message})",
                    exc.data,
                ) from exc
            raise
        if result_type(result) in ("complete", "task"):
            return result
        rounds += 1
        if rounds > MAX_INPUT_ROUNDS:
            raise ProtocolError(
                f"{method}: server '{client.name}' still asked for input after "
                f"{MAX_INPUT_ROUNDS} rounds"
            )
        params = await _with_inputs(client, params, result)


async def _with_inputs(
    client: McpClient, params: JsonObject | None, result: JsonObject
) -> JsonObject:
    """The retry's params: the inputs the server asked for, its ``requestState`` as is."""
    retry = {k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")}
    requests = result.get("inputRequests")
    if isinstance(requests, dict) and requests:
        retry["inputResponses"] = await answer_inputs(client, requests)
    if "requestState" in result:
        retry["requestState"] = result["requestState"]
    return retry


async def answer_inputs(client: McpClient, requests: JsonObject) -> JsonObject:
    """The answers to a map of input requests, keyed like it."""
    return {key: await _input_for(client, request) for key, request in requests.items()}


async def _input_for(client: McpClient, request: Any) -> JsonObject:
    """One input a server asked for: a form through the elicitation handler, the roots
    (as they are now); anything else, or no handler, is declined."""
    method = request.get("method") if isinstance(request, dict) else None
    params = request.get("params") if isinstance(request, dict) else None
    params = params if isinstance(params, dict) else {}
    if method == "elicitation/create" and client.elicitation_handler is not None:
        try:
            return await client.elicitation_handler(params)
        except Exception as exc:  # a boundary: the handler is the user's
            logger.warning("%s: elicitation handler failed: %s", client.name, exc)
            return {"action": "cancel"}
    if method == "roots/list":
        return roots_result(client)
    logger.debug("%s: declining the server's %s input request", client.name, method)
    return {"action": "decline"}


def roots_result(client: McpClient) -> JsonObject:
    # Without a Roots of its own (a bare client), the working directory, as always.
    return (client.roots or Roots()).result()


async def url_required(client: McpClient, method: str, error: McpError) -> McpError:
    """A -32042: the server needs the user on a web page first. Each URL goes to the
    elicitation handler (which asks before opening anything); the error that is raised
    says what the user chose, so whoever called may try again later."""
    urls = url_elicitations(error.data)
    if client.elicitation_handler is None or not urls:
        return error
    chosen = []
    for params in urls:
        try:
            action = (await client.elicitation_handler(params)).get("action")
        except Exception as exc:  # a boundary: the handler is the user's
            logger.warning("%s: elicitation handler failed: %s", client.name, exc)
            action = "cancel"
        chosen.append(f"{params['url']} ({'opened' if action == 'accept' else action})")
    return McpError(
        error.code,
        f"{method}: server '{client.name}' needs the user to finish a step in the browser "
        f"first: {'; '.join(chosen)}. Try again once it is done. ({error.message})",
        error.data,
    )


def _missing_capability(data: Any) -> str:
    """What a -32021's ``data`` says is missing, as well as it says it."""
    if isinstance(data, dict):
        for key in ("missing", "required", "capabilities", "capability"):
            if key in data:
                return json.dumps(data[key])[:200]
    return json.dumps(data)[:200] if data is not None else "(not named)"


__all__ = ["MAX_INPUT_ROUNDS", "answer_inputs", "roots_result", "stateless_request", "url_required"]
