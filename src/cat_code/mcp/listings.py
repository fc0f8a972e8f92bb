"""One paged, cached listing for every list method: tools, resources, templates, prompts, skills.

`Listings.get` reads every page of a list (at most `MAX_LIST_PAGES`; an empty-string cursor
is a cursor, which the 2026 spec says must not be taken as the end), checks each entry where
it crosses into our code (`LISTED`: the result's array and the check each entry passes), and
caches the list until the server says it changed (`changed`, from its ``list_changed``
notification) or, in the 2026-07-28 era, until its ``ttlMs`` runs out. A change that
arrives while a list is being read makes the read start again, at most `MAX_RELISTS` times;
then the list is returned uncached, so a server that changes its list constantly cannot
loop us.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cat_code.mcp.errors import ProtocolError
from cat_code.mcp.prompts import valid_prompt
from cat_code.mcp.resources import valid_resource, valid_template
from cat_code.mcp.skills import valid_skill
from cat_code.mcp.transports.base import JsonObject

if TYPE_CHECKING:
    from cat_code.mcp.client import McpClient

logger = logging.getLogger(__name__)

#: The most pages a listing may take; a server looping on cursors must not hang us.
MAX_LIST_PAGES = 1000
#: How often a listing is redone when the list changes while it is read.
MAX_RELISTS = 3


def valid_tool(tool: Any, server: str) -> JsonObject | None:
    """Where tool definitions cross into our code: a named object is taken as one."""
    if isinstance(tool, dict) and isinstance(tool.get("name"), str) and tool["name"]:
        return tool
    logger.warning("%s: skipping a tool without a name: %.200r", server, tool)
    return None


#: Listed method → (the result's array, the check each entry passes: the entry or None).
LISTED: dict[str, tuple[str, Callable[[Any, str], Any]]] = {
    "tools/list": ("tools", valid_tool),
    "resources/list": ("resources", valid_resource),
    "resources/templates/list": ("resourceTemplates", valid_template),
    "prompts/list": ("prompts", valid_prompt),
    "skills/list": ("skills", valid_skill),
}


@dataclass(slots=True)
class _Listing:
    """One cached list: its items, until when they are fresh, and a change counter."""

    items: list[Any] | None = None
    fresh_until: float = math.inf
    #: Bumped by every list_changed, so a listing in flight knows it is stale.
    generation: int = 0


class Listings:
    """The cached lists of one `McpClient`."""

    def __init__(self, client: McpClient) -> None:
        self._client = client
        self._lists: dict[str, _Listing] = {method: _Listing() for method in LISTED}

    def cached(self, method: str) -> list[Any] | None:
        """The list as last read, if no change was announced since (no request)."""
        return self._lists[method].items

    def changed(self, *methods: str) -> None:
        for method in methods:
            listing = self._lists[method]
            listing.items = None
            listing.generation += 1

    async def get(self, method: str, *, refresh: bool = False) -> list[Any]:
        """Every item over every page; the cache when it is fresh and no refresh is asked."""
        listing = self._lists[method]
        fresh = listing.fresh_until > asyncio.get_running_loop().time()
        if listing.items is not None and not refresh and fresh:
            return listing.items
        items: list[Any] = []
        for _ in range(MAX_RELISTS):
            generation = listing.generation
            items, ttl = await self._pages(method)
            if generation == listing.generation:
                listing.items = items
                listing.fresh_until = asyncio.get_running_loop().time() + ttl
                break
            # The list changed while we read it: what we hold may already be stale.
        return items

    async def _pages(self, method: str) -> tuple[list[Any], float]:
        client = self._client
        key, valid = LISTED[method]
        items: list[Any] = []
        cursor: Any = None
        ttl = math.inf
        for _ in range(MAX_LIST_PAGES):
            params = {"cursor": cursor} if cursor is not None else None
            result = await client.request(method, params)
            if not isinstance(result, dict) or not isinstance(result.get(key), list):
                raise ProtocolError(f"{method} result has no {key!r} array")
            page = [v for entry in result[key] if (v := valid(entry, client.name)) is not None]
            if method == "tools/list":
                # The era's session sees each tool (2026-07-28 keeps their header names).
                page = client.session.accept_tools(page)
            items.extend(page)
            if client.modern is not None:
                ttl = min(ttl, _ttl_s(result))
            cursor = result.get("nextCursor")
            if cursor is None:
                return items, ttl
        raise ProtocolError(f"{method} did not end after {MAX_LIST_PAGES} pages")


def _ttl_s(result: JsonObject) -> float:
    """How long a 2026-07-28 list result stays fresh: ``ttlMs``; absent or negative is 0."""
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not ttl > 0:
        return 0.0
    return float(ttl) / 1000


__all__ = ["LISTED", "MAX_LIST_PAGES", "MAX_RELISTS", "Listings", "valid_tool"]
