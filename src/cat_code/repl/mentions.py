"""``@server:uri`` in a prompt: the resource's contents go to the model with the message.

A mention is ``@`` at the start of the line or after a space, a configured server's name,
``:``, and a URI with a scheme (``@docs:file:///README.md``, ``@everything:demo://x``),
up to the next space; punctuation that ends a sentence (``.,;:!?``) is not part of it.
``@name:text`` whose text has no scheme is plain text (``@bob:hi``). Every mention is
read before anything is sent; a mention of a server that is not configured, not
connected, or that fails to read its URI stops the prompt with a note naming the server
and the URI, so nothing half-attached ever reaches the model. The text is sent as typed,
followed by one ``<resource server=… uri=…>`` block per resource.

Completion: ``@`` completes the servers that offer resources, ``@server:`` their URIs
(listed resources, and templates up to their first variable, which the server's
``completion/complete`` may fill in).
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cat_code.mcp.errors import McpClientError
from cat_code.mcp.resource_tools import read_failure
from cat_code.mcp.resources import (
    contents_text,
    expand_template,
    template_prefix,
    template_variables,
)

if TYPE_CHECKING:
    from cat_code.mcp.pool import McpPool, McpServer

logger = logging.getLogger(__name__)

#: ``@server:scheme:rest``: a server name, then a URI that has a scheme.
_MENTION = re.compile(r"(?<!\S)@([A-Za-z0-9_.-]+):([A-Za-z][A-Za-z0-9+.-]*:\S+)")
_TRAILING = ".,;:!?"
#: How long Tab waits for a server's listing or completion before offering nothing.
COMPLETION_TIMEOUT_S = 3.0


class MentionError(Exception):
    """A mention cannot be attached; the message says which and why (the prompt is kept)."""


@dataclass(frozen=True, slots=True)
class Mention:
    server: str
    uri: str


def find_mentions(text: str, servers: set[str] | None = None) -> list[Mention]:
    """The mentions in ``text`` in order, each once (of ``servers`` only, when given)."""
    found: list[Mention] = []
    for match in _MENTION.finditer(text):
        mention = Mention(match.group(1), match.group(2).rstrip(_TRAILING))
        if (servers is None or mention.server in servers) and mention not in found:
            found.append(mention)
    return found


async def attach_resources(text: str, pool: McpPool | None) -> str:
    """``text`` followed by the contents of every resource it mentions; `MentionError`
    when any of them cannot be read."""
    mentions = find_mentions(text)
    if not mentions:
        return text
    if pool is None or not pool.servers:
        raise MentionError(
            f"@{mentions[0].server}:{mentions[0].uri}: no MCP servers are configured"
        )
    configured = {s.name for s in pool.servers}
    unknown = [m for m in mentions if m.server not in configured]
    if unknown:
        known = ", ".join(sorted(configured)) or "none"
        raise MentionError(
            f"@{unknown[0].server}:{unknown[0].uri}: no MCP server named "
            f"{unknown[0].server!r} (configured: {known})"
        )

    async def read(mention: Mention) -> str:
        try:
            result = await pool.read_resource(mention.server, mention.uri)
        except McpClientError as exc:
            raise MentionError(read_failure(mention.server, mention.uri, exc)) from exc
        return (
            f'<resource server="{mention.server}" uri="{mention.uri}">\n'
            f"{contents_text(result)}\n</resource>"
        )

    blocks = await asyncio.gather(*(read(m) for m in mentions))
    return "\n\n".join([text, *blocks])


# -- Tab completion ----------------------------------------------------------------------


def mention_word(text_before_cursor: str) -> str | None:
    """The ``@…`` word being typed at the cursor, or None when the cursor is not in one."""
    word = re.split(r"\s", text_before_cursor)[-1]
    return word if word.startswith("@") else None


async def complete_mention(word: str, pool: McpPool) -> list[str]:
    """Completions (whole words) for ``word``, an ``@`` mention being typed."""
    server, colon, typed = word[1:].partition(":")
    if not colon:
        offering = [s.name for s in pool.servers if s.offers("resources")]
        return [f"@{name}:" for name in offering if name.startswith(server)]
    try:
        target = pool.connected(server)[0]
    except McpClientError:
        return []
    if not target.offers("resources"):
        return []
    try:
        async with asyncio.timeout(COMPLETION_TIMEOUT_S):
            resources = await target.list_resources()
            templates = await target.list_resource_templates()
    except (McpClientError, TimeoutError) as exc:
        logger.debug("%s: no resources to complete: %s", server, exc)
        return []
    uris = [r["uri"] for r in resources if r["uri"].startswith(typed)]
    for template in templates:
        pattern = template["uriTemplate"]
        prefix = template_prefix(pattern)
        if prefix.startswith(typed) and prefix != typed:
            uris.append(prefix)
        elif typed.startswith(prefix) and prefix != pattern:
            uris += await _template_values(target, pattern, typed[len(prefix) :])
    return [f"@{server}:{uri}" for uri in dict.fromkeys(uris)]


async def _template_values(server: McpServer, template: str, value: str) -> list[str]:
    """URIs of ``template`` with its first variable completed from ``value`` by the server."""
    variables = template_variables(template)
    if not variables or not server.offers("completions"):
        return []
    first = variables[0]
    try:
        async with asyncio.timeout(COMPLETION_TIMEOUT_S):
            completion = await server.complete(
                {"type": "ref/resource", "uri": template}, first, value
            )
    except (McpClientError, TimeoutError) as exc:
        logger.debug("%s: completing %s failed: %s", server.name, template, exc)
        return []
    out = [expand_template(template, {first: v}) for v in completion["values"]]
    return [uri for uri in out if "{" not in uri]


__all__ = [
    "COMPLETION_TIMEOUT_S",
    "Mention",
    "MentionError",
    "attach_resources",
    "complete_mention",
    "find_mentions",
    "mention_word",
]
