"""Remote MCP tools as local `Tool` objects: the boundary where wire dicts stop.

Naming: ``mcp__<server>__<tool>``, each part reduced to ``[A-Za-z0-9_-]`` so both the
Anthropic and OpenAI name rules hold, at most 64 characters (longer names keep a prefix
and gain a stable hash suffix). A name taken after sanitising gets the hashed form too,
deterministically, with a warning. The original tool name is what goes on the wire.
`McpTool.execute` never raises for a failure: transport errors, timeouts, dead servers
and protocol errors all come back as ``Error: MCP tool '<name>' failed: <reason>``. Its
result passes the output-size policy (`output_policy`); images and audio also travel as
`Media` (valid base64, an image's type read from its bytes) for providers that take them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from cat_code.host.mcp_tools import output_policy
from cat_code.mcp.errors import McpClientError, RequestTimeout
from cat_code.mcp.transports.base import size_text
from cat_code.mcp.wire import CallToolResult, ContentBlock, ToolDefinition
from cat_code.tools.base import Media, ProgressCallback, Tool, ToolOwner, ToolResult

logger = logging.getLogger(__name__)

MAX_NAME_LENGTH = 64
_HASH_LENGTH = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def sanitize(part: str) -> str:
    """``part`` with every character outside ``[A-Za-z0-9_-]`` replaced by ``_``."""
    return _UNSAFE.sub("_", part) or "_"


#: How much of a too-long name survives in front of its hash suffix.
_KEPT_PREFIX = MAX_NAME_LENGTH - _HASH_LENGTH - 1


def _hashed(name: str, server: str, tool: str) -> str:
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH_LENGTH]
    return f"{name[:_KEPT_PREFIX]}_{digest}"


def may_belong_to(server: str, registered: str) -> bool:
    """Whether ``registered`` can be a name `assign_names` gives one of ``server``'s tools."""
    prefix = f"mcp__{sanitize(server)}__"
    # A shortened or hashed name keeps at least the first _KEPT_PREFIX characters.
    return registered.startswith(prefix) or registered.startswith(prefix[:_KEPT_PREFIX])


def registered_name(server: str, tool: str) -> str:
    """The name a tool is registered under, before collisions are considered."""
    name = f"mcp__{sanitize(server)}__{sanitize(tool)}"
    return name if len(name) <= MAX_NAME_LENGTH else _hashed(name, server, tool)


def assign_names(server: str, tools: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """Map each original tool name to a unique registered name, deterministically.

    Tools are considered in sorted order, names that need no sanitising first (so a tool
    really called ``read_file`` keeps ``..._read_file`` over one called ``read.file``); the
    same tool list always yields the same names whatever order the server sent them in.
    """
    used = set(taken)
    names: dict[str, str] = {}
    for tool in sorted(set(tools), key=lambda t: (sanitize(t) != t, t)):
        name = registered_name(server, tool)
        if name in used:
            alternative = _hashed(name, server, tool)
            counter = 2
            while alternative in used:
                # The counter goes into the hash: appended to a name already cut to length,
                # it would be cut off again and the loop would never end.
                alternative = _hashed(name, server, f"{tool}\0{counter}")
                counter += 1
            logger.warning(
                "MCP server '%s': tool '%s' would be registered as '%s', which is taken; "
                "registering it as '%s'",
                server,
                tool,
                name,
                alternative,
            )
            name = alternative
        used.add(name)
        names[tool] = name
    return names


class ToolServer(Protocol):
    """What a tool calls through: its server, whichever connection it has right now."""

    name: str

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressCallback | None = None,
    ) -> CallToolResult: ...


class McpTool(Tool):
    """A tool of a remote MCP server, called through that server (not one connection of
    it), so a reconnect or restart needs no re-registration."""

    def __init__(
        self,
        server: ToolServer,
        wire: ToolDefinition,
        name: str,
        *,
        max_output_tokens: int | None = None,
        project: Path | None = None,
    ) -> None:
        self._server = server
        #: Whose output folder a cut result is saved in (None: the working directory's).
        self.project = project
        #: The entry's ``maxOutputTokens`` (None: the environment's or the default limit).
        self.max_output_tokens = max_output_tokens
        self.server = server.name
        self.wire = wire
        self.name = name
        self.tool_name: str = wire["name"]
        description = wire.get("description") or wire.get("title") or ""
        self.description = description if isinstance(description, str) else ""
        schema = wire.get("inputSchema")
        self.input_schema = schema if isinstance(schema, dict) else {"type": "object"}
        annotations = wire.get("annotations")
        self.read_only = isinstance(annotations, dict) and annotations.get("readOnlyHint") is True
        self.owner = ToolOwner(server.name)

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        """The result as the model gets it: `call`'s, within the output-size policy."""
        whole = await self.call(arguments, progress=progress)
        if whole.raw is None:  # a failure, described in a line
            return whole
        limit = output_policy.limit_chars(self.max_output_tokens, self.wire.get("_meta"))
        try:
            return await output_policy.enforce(
                whole, limit=limit, server=self.server, tool=self.tool_name, project=self.project
            )
        except Exception:  # the policy must not lose a result the server gave
            logger.exception("MCP tool %s: the output-size policy failed", self.name)
            return whole

    async def call(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        """The whole result, flattened (``cat-code mcp call`` prints it); failures as results."""
        try:
            result = await self._server.call_tool(self.tool_name, arguments, progress=progress)
        except RequestTimeout as exc:
            return self._failure(f"{exc}; set toolTimeoutMs in the server's entry to allow longer")
        except McpClientError as exc:
            return self._failure(str(exc) or type(exc).__name__)
        except Exception as exc:  # the agent loop must never see a tool raise
            logger.exception("MCP tool %s raised unexpectedly", self.name)
            return self._failure(f"{type(exc).__name__}: {exc}")
        return flatten_result(result)

    def _failure(self, reason: str) -> ToolResult:
        return ToolResult.error(f"Error: MCP tool '{self.name}' failed: {reason}")


def flatten_result(result: CallToolResult) -> ToolResult:
    """A wire ``CallToolResult`` as text for the model; ``isError`` carried through."""
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    parts = [text for block in blocks if (text := flatten_block(block)) is not None]
    has_text = any(isinstance(b, dict) and b.get("type") == "text" for b in blocks)
    structured = result.get("structuredContent")
    if structured is not None and not has_text:
        parts.append(json.dumps(structured, separators=(",", ":"), ensure_ascii=False))
    media = [item for block in blocks if (item := media_of(block)) is not None]
    return ToolResult(
        content="\n".join(parts), is_error=result.get("isError") is True, raw=result, media=media
    )


#: The leading bytes of the image formats models take, and their media types.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_type(data: bytes) -> str | None:
    """The media type the bytes of a PNG, JPEG, GIF or WebP image start with (None: other)."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def media_of(block: ContentBlock) -> Media | None:
    """An image or audio block as `Media`, its base64 checked (None: not one, or unusable).

    A model API rejects a whole request over one bad image, and the image would stay in
    the conversation: so data that is not base64, or an image whose bytes are not the
    type it claims to be among those models take, never becomes `Media`.
    """
    if not isinstance(block, dict) or block.get("type") not in ("image", "audio"):
        return None
    data, mime = block.get("data"), block.get("mimeType")
    if not isinstance(data, str) or not isinstance(mime, str) or not data:
        return None
    try:
        decoded = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        data = "".join(data.split())  # base64 wrapped in lines, as MIME writes it
        try:
            decoded = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            logger.debug("skipping %s block whose data is not base64", block.get("type"))
            return None
    mime = mime.split(";")[0].strip().lower()
    if block.get("type") == "audio":
        return Media("audio", mime, data)
    sniffed = image_type(decoded[:16])
    if sniffed is None and mime in ("image/png", "image/jpeg", "image/gif", "image/webp"):
        logger.debug("skipping an image that says %s but is not one", mime)
        return None
    return Media("image", sniffed or mime, data)


#: The content block types the spec defines (the tags of `ContentBlock`). A tuple, not a
#: set: a server may send an unhashable ``type``, and ``in`` on a tuple only compares.
_KNOWN_BLOCKS = ("text", "image", "audio", "resource_link", "resource")


def flatten_block(block: ContentBlock) -> str | None:
    """One content block as text (a placeholder for an unknown type; None for a non-object)."""
    # The type says what the spec promises; servers send anything, so every field is checked.
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind not in _KNOWN_BLOCKS:
        logger.debug("skipping content block of unknown type %r", kind)
        return f"[unsupported content: {kind}]"
    # The tag is present now: indexing it lets the checker narrow the union.
    if block["type"] == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    if block["type"] == "resource_link":
        name = block.get("title") or block.get("name") or "resource"
        return f"[resource link: {name} <{block.get('uri', '')}>]"
    if block["type"] == "resource":
        resource = block.get("resource")
        if not isinstance(resource, dict):
            return "[resource]"
        body = resource.get("text")
        if isinstance(body, str):
            return body
        mime = resource.get("mimeType") or "unknown type"
        size = size_text(_decoded_length(resource.get("blob")))
        return f"[resource {resource.get('uri', '')}: {mime}, {size}]"
    # What is left is "image" or "audio", both base64 data with a MIME type.
    mime = block.get("mimeType") or "unknown type"
    return f"[{block['type']}: {mime}, {size_text(_decoded_length(block.get('data')))}]"


def _decoded_length(data: Any) -> int:
    if not isinstance(data, str):
        return 0
    # Computed from the base64 length: no need to decode a possibly large payload.
    stripped = data.rstrip()
    return max(0, len(stripped) * 3 // 4 - (len(stripped) - len(stripped.rstrip("="))))
