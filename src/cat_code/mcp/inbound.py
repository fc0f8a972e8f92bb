"""Messages the server starts: one table of notification handlers, one of request handlers.

`on_message` is the transport's inbound callback for one `McpClient`. Requests: ``ping`` →
``{}``; ``roots/list`` when the client was given `Roots` (the answer opens the roots
grace: a tool call within `ROOTS_GRACE_S` waits out its rest, since a server takes the
roots in its own time); ``elicitation/create`` only when a handler was given; anything else
-32601. Notifications: progress (the request's handler, and its deadline restarts), log
messages (our log, at the server's level), list changes (the cached list is dropped and the
owner told), task status (`tasks.TaskTable`), resource updates. Anything else is logged at
debug level and dropped: a server cannot make us fail by talking.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cat_code.mcp.transports.base import JsonObject

if TYPE_CHECKING:
    from cat_code.mcp.client import McpClient

logger = logging.getLogger(__name__)
#: A server's own log messages keep the logger they always had (people filter on its name).
server_log = logging.getLogger("cat_code.mcp.client")

METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
#: How long a tool call waits after we answered a server's ``roots/list``: servers such as
#: server-filesystem take the answer in the background, and a call that overtakes it is
#: refused ("Access denied"). A bound, not a signal: no server says when it is done.
ROOTS_GRACE_S = 0.15

_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


def on_message(client: McpClient, message: JsonObject) -> None:
    """One message the server sent on its own: a request or a notification."""
    client.requests.trace("←", message)
    method = message.get("method")
    if "id" in message:
        handle = REQUESTS.get(method) if isinstance(method, str) else None
        params = message.get("params")
        if handle is None or not handle(client, message["id"], params):
            reply(
                client,
                message["id"],
                error={"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"},
            )
        return
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    notified = NOTIFICATIONS.get(method) if isinstance(method, str) else None
    if notified is None:
        logger.debug("%s: ignoring notification %s", client.name, method)
    else:
        notified(client, params)


def reply(client: McpClient, request_id: Any, *, result: Any = None, error: Any = None) -> None:
    message: JsonObject = {"jsonrpc": "2.0", "id": request_id}
    if error is not None:
        message["error"] = error
    else:
        message["result"] = result
    client.spawn(client.send_quietly(message))


# -- requests: each returns False when it does not take this request ---------------------


def _ping(client: McpClient, request_id: Any, params: Any) -> bool:
    reply(client, request_id, result={})
    return True


def _roots_list(client: McpClient, request_id: Any, params: Any) -> bool:
    if client.roots is None:
        return False
    reply(client, request_id, result=client.roots.result())
    grace_end = asyncio.get_running_loop().time() + ROOTS_GRACE_S
    client.roots_settle_until = max(client.roots_settle_until, grace_end)
    return True


def _elicitation(client: McpClient, request_id: Any, params: Any) -> bool:
    if client.elicitation_handler is None:
        return False
    client.spawn(_elicit(client, request_id, params if isinstance(params, dict) else {}))
    return True


async def _elicit(client: McpClient, request_id: Any, params: JsonObject) -> None:
    assert client.elicitation_handler is not None
    try:
        result = await client.elicitation_handler(params)
    except Exception as exc:  # a boundary: the handler is the user's
        logger.warning("%s: elicitation handler failed: %s", client.name, exc)
        reply(client, request_id, error={"code": INTERNAL_ERROR, "message": str(exc)})
        return
    reply(client, request_id, result=result)


async def roots_settled(client: McpClient) -> None:
    """Wait out what is left of the grace after our last ``roots/list`` answer: one wait,
    however many answers follow, so a server asking again and again cannot hold a call."""
    left = client.roots_settle_until - asyncio.get_running_loop().time()
    if left > 0:
        logger.debug("%s: giving the server %.0f ms to take the roots", client.name, left * 1e3)
        await asyncio.sleep(left)
    if client.roots_settle_until <= asyncio.get_running_loop().time():
        client.roots_settle_until = 0.0


REQUESTS: dict[str, Callable[[McpClient, Any, Any], bool]] = {
    "ping": _ping,
    "roots/list": _roots_list,
    "elicitation/create": _elicitation,
}


# -- notifications ----------------------------------------------------------------------


def _progress(client: McpClient, params: JsonObject) -> None:
    client.requests.progressed(params)


def _log(client: McpClient, params: JsonObject) -> None:
    level = params.get("level", "info")
    server_log.log(
        _LOG_LEVELS.get(str(level), logging.INFO),
        "%s [%s]: %s",
        client.name,
        params.get("logger", level),
        params.get("data"),
    )


def _tools_changed(client: McpClient, params: JsonObject) -> None:
    logger.debug("%s: tool list changed", client.name)
    client.listings.changed("tools/list")
    if client.on_tools_changed is not None:
        client.on_tools_changed()


def _resources_changed(client: McpClient, params: JsonObject) -> None:
    logger.debug("%s: resource list changed", client.name)
    client.listings.changed("resources/list", "resources/templates/list")
    if client.on_resources_changed is not None:
        client.on_resources_changed()


def _prompts_changed(client: McpClient, params: JsonObject) -> None:
    logger.debug("%s: prompt list changed", client.name)
    client.listings.changed("prompts/list")
    if client.on_prompts_changed is not None:
        client.on_prompts_changed()


def _task_status(client: McpClient, params: JsonObject) -> None:
    client.tasks.notified(params)


def _elicitation_complete(client: McpClient, params: JsonObject) -> None:
    logger.info("%s: the step in the browser is done", client.name)


def _resource_updated(client: McpClient, params: JsonObject) -> None:
    uri = params.get("uri")
    if isinstance(uri, str) and client.on_resource_updated is not None:
        client.on_resource_updated(uri)


NOTIFICATIONS: dict[str, Callable[[McpClient, JsonObject], None]] = {
    "notifications/progress": _progress,
    "notifications/message": _log,
    "notifications/tools/list_changed": _tools_changed,
    "notifications/resources/list_changed": _resources_changed,
    "notifications/prompts/list_changed": _prompts_changed,
    "notifications/tasks": _task_status,
    "notifications/tasks/status": _task_status,
    "notifications/elicitation/complete": _elicitation_complete,
    "notifications/resources/updated": _resource_updated,
}


__all__ = ["NOTIFICATIONS", "REQUESTS", "ROOTS_GRACE_S", "on_message", "reply", "roots_settled"]
