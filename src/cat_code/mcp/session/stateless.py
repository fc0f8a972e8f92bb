"""The stateless 2026-07-28 era: no handshake, no session; every request says who we are.

`StatelessSession` decorates each request (`prepare`): ``_meta`` with the protocol
version, the client's capabilities and its info, and over HTTP the headers the body must
match — ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and an ``Mcp-Param-*`` per
``x-mcp-header`` argument of the tool, in the spec's ``=?base64?…?=`` form when a value is
not plain visible ASCII. Tools whose ``x-mcp-header`` annotations are invalid are left out
of the list with a warning naming them (`accept_tools`). It reads what results tell
(`result_type`, the server's info in ``_meta``). Nothing expires and nothing is released:
there is no session id, no GET stream and no DELETE in this era. The retry rules around it
(-32022, -32020, multi-round input) are the client's, since they re-send requests.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import re
from typing import TYPE_CHECKING, Any, Literal

from cat_code.mcp.errors import AuthenticationRequired, HttpStatusError, McpError, ProtocolError
from cat_code.mcp.session.handshake import CLIENT_INFO
from cat_code.mcp.tasks import TASKS_EXTENSION
from cat_code.mcp.transports.base import (
    HEALTHY_STREAM_S,
    NO_CONTEXT,
    JsonObject,
    RequestContext,
)
from cat_code.mcp.versions import MODERN_VERSION, MODERN_VERSIONS

if TYPE_CHECKING:
    from cat_code.mcp.session.base import Link

logger = logging.getLogger(__name__)

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
VERSION_HEADER = "mcp-protocol-version"

#: The spec-defined modern errors: header/body mismatch, missing capability, version.
HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022
MODERN_ERRORS = frozenset({HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION})

#: Methods whose ``Mcp-Name`` header carries ``params.name`` (or ``params.uri``).
_NAME_PARAM = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The tasks extension (SEP-2663) names the task.
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
#: An HTTP header name token (RFC 9110 tchar).
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_SENTINEL = re.compile(r"^=\?base64\?.*\?=$", re.DOTALL)
#: How long a dropped ``subscriptions/listen`` waits before reopening: first, most.
LISTEN_BACKOFF_S = (0.5, 30.0)
METHOD_NOT_FOUND = -32601
#: Server capability → the ``subscriptions/listen`` flag for its list changes.
_LIST_CHANGED = {
    "tools": "toolsListChanged",
    "resources": "resourcesListChanged",
    "prompts": "promptsListChanged",
}

#: "task": a task-augmented answer (the tasks extension, which the client declares).
ResultType = Literal["complete", "input_required", "task"]


def _for_this_era(capabilities: JsonObject) -> JsonObject:
    """The client's capabilities as this era declares them: ``roots`` without
    ``listChanged``, since 2026-07-28 removed ``notifications/roots/list_changed`` (a
    server asks for the roots inside the request that needs them), and the tasks extension
    (`cat_code.mcp.tasks`; a handshake-era server offers its own experimental tasks)."""
    extensions = capabilities.get("extensions")
    extensions = {**(extensions if isinstance(extensions, dict) else {}), TASKS_EXTENSION: {}}
    capabilities = {**capabilities, "extensions": extensions}
    roots = capabilities.get("roots")
    if not isinstance(roots, dict) or "listChanged" not in roots:
        return capabilities
    kept = {key: value for key, value in roots.items() if key != "listChanged"}
    return {**capabilities, "roots": kept}


def header_value(value: str) -> str:
    """A header value as the spec sends it: plain when it is visible ASCII with no edge
    whitespace and does not look like the sentinel, else ``=?base64?<UTF-8>?=``."""
    plain = (
        all(0x20 <= ord(c) <= 0x7E for c in value)
        and value == value.strip()
        and not _SENTINEL.match(value)
    )
    if plain:
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def param_headers(schema: Any) -> list[tuple[str, str]] | str:
    """A tool's ``(header name, argument)`` pairs from its ``x-mcp-header`` annotations,
    or why they are invalid. Only top-level properties are reachable here; an annotation
    deeper in the schema cannot be mirrored, and so makes the tool invalid."""
    if not isinstance(schema, dict):
        return []
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    properties = schema.get("properties")
    for prop, spec in (properties if isinstance(properties, dict) else {}).items():
        if not isinstance(spec, dict) or "x-mcp-header" not in spec:
            continue
        name = spec["x-mcp-header"]
        if not isinstance(name, str) or not name:
            return f"property {prop!r}: x-mcp-header is empty"
        if not _TOKEN.match(name):
            return f"property {prop!r}: x-mcp-header {name!r} is not a header token"
        if spec.get("type") not in ("string", "integer", "boolean"):
            return f"property {prop!r}: x-mcp-header on a {spec.get('type')!r} value"
        if name.lower() in seen:
            return f"property {prop!r}: x-mcp-header {name!r} is used twice"
        seen.add(name.lower())
        found.append((name, prop))
    if _nested_annotation(properties):
        return "an x-mcp-header annotation outside the top-level properties"
    return found


def _nested_annotation(properties: Any) -> bool:
    if not isinstance(properties, dict):
        return False
    return any(
        isinstance(spec, dict) and _mentions(v, "x-mcp-header")
        for spec in properties.values()
        if isinstance(spec, dict)
        for k, v in spec.items()
        if k != "x-mcp-header"
    )


def _mentions(value: Any, key: str) -> bool:
    if isinstance(value, dict):
        return key in value or any(_mentions(v, key) for v in value.values())
    if isinstance(value, list):
        return any(_mentions(v, key) for v in value)
    return False


def _param_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value if isinstance(value, str) else None


def result_type(result: Any) -> ResultType:
    """What a result is: missing means complete; anything unknown breaks the protocol."""
    kind = result.get("resultType", "complete") if isinstance(result, dict) else "complete"
    if kind == "complete":
        return "complete"
    if kind == "input_required":
        return "input_required"
    if kind == "task":
        return "task"
    raise ProtocolError(f"unknown resultType {kind!r:.60}")


class StatelessSession:
    """The 2026-07-28 era's state for one server (see the module docstring)."""

    era: Literal["modern"] = "modern"

    def __init__(self, *, http: bool, version: str = MODERN_VERSION) -> None:
        self.version: str | None = version
        self.server_info: JsonObject = {}
        self.server_capabilities: JsonObject = {}
        self.instructions: str | None = None
        self.http = http
        self.context: RequestContext = NO_CONTEXT
        #: tool name → its (header, argument) pairs, from the last listing.
        self.tool_headers: dict[str, list[tuple[str, str]]] = {}
        self._meta: JsonObject = {}
        self._capabilities: JsonObject = {}
        self._listener: asyncio.Task[None] | None = None
        #: Whether ``server/discover`` has answered (the probe's, or `open`'s own).
        self.discovered = False
        self.use_version(version)

    # -- what every request carries ------------------------------------------------------

    def use_version(self, version: str) -> None:
        self.version = version
        self._meta = {
            META_VERSION: version,
            META_CAPABILITIES: self._capabilities,
            META_CLIENT_INFO: CLIENT_INFO,
        }
        if self.http:
            self.context = RequestContext(headers={VERSION_HEADER: version})

    def set_capabilities(self, capabilities: JsonObject) -> None:
        capabilities = _for_this_era(capabilities)
        self._capabilities = capabilities
        self._meta[META_CAPABILITIES] = capabilities

    def prepare(
        self, method: str, params: JsonObject | None
    ) -> tuple[JsonObject | None, RequestContext]:
        """The request's params with our ``_meta``, and (HTTP) the headers that mirror it."""
        out = dict(params) if params else {}
        given = out.get("_meta")
        out["_meta"] = {**self._meta, **given} if isinstance(given, dict) else self._meta
        if not self.http:
            return out, NO_CONTEXT
        assert self.version is not None
        headers = {VERSION_HEADER: self.version, "mcp-method": method}
        field = _NAME_PARAM.get(method)
        if field is not None and isinstance(out.get(field), str):
            headers["mcp-name"] = header_value(out[field])
        if method == "tools/call":
            arguments = out.get("arguments")
            arguments = arguments if isinstance(arguments, dict) else {}
            for header, prop in self.tool_headers.get(str(out.get("name")), ()):
                text = _param_text(arguments.get(prop))
                if text is not None:
                    headers[f"mcp-param-{header.lower()}"] = header_value(text)
        return out, RequestContext(headers=headers)

    def accept_tools(self, tools: list[JsonObject]) -> list[JsonObject]:
        """The tools this client can call; over HTTP, those with valid ``x-mcp-header``."""
        if not self.http:
            return tools
        usable: list[JsonObject] = []
        # Rebuilt from every listing: a tool that lost an x-mcp-header must lose its header.
        self.tool_headers = {}
        for tool in tools:
            pairs = param_headers(tool.get("inputSchema"))
            if isinstance(pairs, str):
                logger.warning(
                    "leaving out tool %r: its inputSchema is invalid for HTTP headers (%s)",
                    tool.get("name"),
                    pairs,
                )
                continue
            if pairs:
                self.tool_headers[tool["name"]] = pairs
            usable.append(tool)
        return usable

    def accept_discover(self, result: Any) -> None:
        """Take the server's identity, capabilities and instructions from ``server/discover``."""
        if not isinstance(result, dict):
            raise ProtocolError("server/discover result is not an object")
        info = result.get("serverInfo")
        if isinstance(info, dict):
            self.server_info = info
        caps = result.get("capabilities")
        self.server_capabilities = caps if isinstance(caps, dict) else {}
        instructions = result.get("instructions")
        self.instructions = instructions if isinstance(instructions, str) else None
        self.discovered = True
        self.observe(result)

    def observe(self, result: Any) -> None:
        """A result's ``_meta`` may name the server (unverified: shown, never trusted)."""
        meta = result.get("_meta") if isinstance(result, dict) else None
        info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        if isinstance(info, dict) and info != self.server_info:
            self.server_info = info

    def mutual_version(self, data: Any) -> str | None:
        """The best version both sides speak, from a -32022's ``data.supported``."""
        supported = data.get("supported") if isinstance(data, dict) else None
        if not isinstance(supported, list):
            return None
        return next((v for v in MODERN_VERSIONS if v in supported), None)

    # -- the ProtocolSession protocol ----------------------------------------------------

    async def open(self, link: Link, capabilities: JsonObject) -> None:
        """Nothing to open; change notifications come on ``subscriptions/listen``. A
        session the probe did not discover (a pinned version, a verdict from an error)
        asks ``server/discover`` once for the server's instructions and capabilities."""
        self.set_capabilities(capabilities)
        if not self.discovered:
            await self._discover(link)
        if self._subscriptions():
            self._listener = asyncio.create_task(
                self._listen(link), name=f"mcp-subscriptions:{link.name}"
            )

    def _subscriptions(self) -> dict[str, bool]:
        """The list changes to listen for: those whose feature declares ``listChanged``."""
        wanted = {}
        for feature, flag in _LIST_CHANGED.items():
            declared = self.server_capabilities.get(feature)
            if isinstance(declared, dict) and declared.get("listChanged"):
                wanted[flag] = True
        return wanted

    async def _discover(self, link: Link) -> None:
        params, context = self.prepare("server/discover", None)
        try:
            self.accept_discover(await link.exchange("server/discover", params or {}, context))
        except AuthenticationRequired:
            raise
        except (ProtocolError, HttpStatusError) as exc:
            # Every modern server MUST answer it; one that does not still serves its tools.
            logger.debug("%s: server/discover failed (%s); no instructions", link.name, exc)

    def expired(self, exc: HttpStatusError, sent: RequestContext) -> bool:
        return False  # no session, nothing to expire

    async def renew(self, link: Link, capabilities: JsonObject) -> None:
        """Never called: nothing expires."""

    async def close(self, link: Link) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            await asyncio.wait([listener])

    # -- subscriptions/listen -----------------------------------------------------------

    async def _listen(self, link: Link) -> None:
        """Hold ``subscriptions/listen`` open; its notifications reach the client's handler
        like any server message. Reopened after a drop, backing off up to the cap."""
        delay, cap = LISTEN_BACKOFF_S
        loop = asyncio.get_running_loop()
        while True:
            params, context = self.prepare(
                "subscriptions/listen", {"notifications": self._subscriptions()}
            )
            context = RequestContext(headers=context.headers, long_lived=True)
            opened = loop.time()
            try:
                await link.exchange("subscriptions/listen", params or {}, context)
                logger.debug("%s: the server ended subscriptions/listen", link.name)
                if loop.time() - opened >= HEALTHY_STREAM_S:
                    delay = LISTEN_BACKOFF_S[0]  # it lasted: a fresh start, not a failure
            except asyncio.CancelledError:
                raise
            except McpError as exc:
                if exc.code in (METHOD_NOT_FOUND, MISSING_CAPABILITY):
                    # The server has no such stream (or not for us): asking again won't help.
                    logger.debug("%s: no subscriptions/listen (%s)", link.name, exc)
                    return
                logger.debug("%s: subscriptions/listen failed: %s", link.name, exc)
            except Exception as exc:  # a boundary: notifications are optional, the server is not
                logger.debug("%s: subscriptions/listen failed: %s", link.name, exc)
            if link.transport.closed_reason is not None:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.sleep(delay)
            delay = min(delay * 2, cap)


__all__ = [
    "MODERN_ERRORS",
    "StatelessSession",
    "header_value",
    "param_headers",
    "result_type",
]
