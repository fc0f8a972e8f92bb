"""``@server:uri`` in a prompt: the resource's contents go to the model with the message.

A mention is ``@`` at the start of the line or after a space or an opening quote, bracket
or backtick (``(see @docs:file:///a.md)``, ```@docs:file:///a.md```), a configured
server's name, ``:``, and a URI with a scheme (``@docs:file:///README.md``,
``@everything:demo://x``), up to the next space. What prose puts after a word is not part
of the URI: trailing sentence punctuation (``.,;:!?``), and closing brackets and quotes
(``)]}'"```) that have no opening partner inside the URI. ``@name:text`` whose text has
no scheme is plain text (``@bob:hi``), and so is a mention of a server that is not
configured (``@bob:mailto:bob@example.com``): it is sent as typed, attaching nothing.

Every mention of a configured server is read before anything is sent; one whose server
is not connected, or that fails to read its URI, stops the prompt with a note naming the
server and the URI, so nothing half-attached ever reaches the model. The text is sent as
typed, followed by one ``<resource server=… uri=…>`` block per resource, whose text is
cut like the ``read_mcp_resource`` tool's (`resource_excerpt`: at most
`MAX_RESOURCE_CHARS` characters, with a note saying how to read on).

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

from cat_code.host.mcp_tools.resource_excerpt import excerpt
from cat_code.host.mcp_tools.resource_tools import read_failure
from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import McpClientError
from cat_code.mcp.resources import (
    contents_text,
    expand_template,
    template_prefix,
    template_variables,
)
from cat_code.mcp.wire import CompletionReference

if TYPE_CHECKING:
    from cat_code.host.servers.pool import McpPool
    from cat_code.host.servers.server import McpServer

logger = logging.getLogger(__name__)

#: What may come right before a mention's ``@`` besides a space or the start of the text.
_OPENERS = "([{'\"`"
#: ``@server:scheme:rest``: a server name, then a URI that has a scheme.
_MENTION = re.compile(
    r"(?<![^\s" + re.escape(_OPENERS) + r"])@([A-Za-z0-9_.-]+):([A-Za-z][A-Za-z0-9+.-]*:\S+)"
)
#: A URI that still has a scheme and something after it once prose is trimmed off.
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:.")
_SENTENCE_END = ".,;:!?"
_PAIRS = {")": "(", "]": "[", "}": "{"}
_QUOTES = "'\"`"
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
        uri = _trim_prose(match.group(2))
        if not _URI.match(uri):
            continue
        mention = Mention(match.group(1), uri)
        if (servers is None or mention.server in servers) and mention not in found:
            found.append(mention)
    return found


def _trim_prose(uri: str) -> str:
    """``uri`` without the punctuation, closing brackets and quotes of the prose around it."""
    while uri and _ends_in_prose(uri):
        uri = uri[:-1]
    return uri


def _ends_in_prose(uri: str) -> bool:
    """Whether the last character of ``uri`` belongs to the sentence around it."""
    last = uri[-1]
    if last in _PAIRS:  # balanced inside the URI (``demo://x/(a)``), it is the URI's
        return uri.count(last) > uri.count(_PAIRS[last])
    if last in _QUOTES:
        return uri.count(last) % 2 == 1
    return last in _SENTENCE_END


async def attach_resources(text: str, pool: McpPool | None) -> str:
    """``text`` followed by the contents of every resource it mentions; `MentionError`
    when any of them cannot be read."""
    if pool is None:
        return text
    # ``@bob:mailto:…`` names no server of ours: prose, not a mention.
    mentions = find_mentions(text, {s.name for s in pool.servers})
    if not mentions:
        return text

    async def read(mention: Mention) -> str:
        uri = mention.uri
        try:
            result = await pool.use(mention.server, lambda c: c.read_resource(uri), heal=True)
        except McpClientError as exc:
            raise MentionError(read_failure(mention.server, mention.uri, exc)) from exc
        body = excerpt(contents_text(result), mention.server, mention.uri)
        return f'<resource server="{mention.server}" uri="{mention.uri}">\n{body}\n</resource>'

    blocks = await asyncio.gather(*(read(m) for m in mentions))
    return "\n\n".join([text, *blocks])


# -- Tab completion ----------------------------------------------------------------------


def mention_word(text_before_cursor: str) -> str | None:
    """The ``@…`` word being typed at the cursor, or None when the cursor is not in one."""
    word = re.split(r"\s", text_before_cursor)[-1]
    if word[:1] in _OPENERS and word[1:2] == "@":
        word = word[1:]  # ``(@docs:…``: the bracket is prose
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
            resources = await target.use(McpClient.list_resources, heal=True)
            templates = await target.use(McpClient.list_resource_templates, heal=True)
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
            ref: CompletionReference = {"type": "ref/resource", "uri": template}
            completion = await server.use(lambda c: c.complete(ref, first, value))
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
