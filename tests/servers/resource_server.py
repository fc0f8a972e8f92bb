"""The `mcp` SDK's server (2.x) over stdio with resources, templates, prompts and completion.

A test peer for the resource and prompt side of cat-code's client, in either era (the SDK
answers ``server/discover``, so an unpinned client gets 2026-07-28; pin a handshake
version for the other). ``resources/list`` and ``prompts/list`` are served three entries
a page (the SDK would send one page), so the client must follow ``nextCursor``.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import (
    Completion,
    ListPromptsResult,
    ListResourcesResult,
    PromptReference,
    ResourceTemplateReference,
)

PAGE = 3
COLOURS = ["red", "green", "blue", "cyan"]


class PagedServer(MCPServer):
    """An `MCPServer` whose resource and prompt lists come in pages of `PAGE`."""

    async def _handle_list_resources(self, ctx: Any, params: Any) -> ListResourcesResult:
        items = await self.list_resources()
        start, after = _page(params, len(items))
        return ListResourcesResult(resources=items[start : start + PAGE], next_cursor=after)

    async def _handle_list_prompts(self, ctx: Any, params: Any) -> ListPromptsResult:
        items = await self.list_prompts()
        start, after = _page(params, len(items))
        return ListPromptsResult(prompts=items[start : start + PAGE], next_cursor=after)


def _page(params: Any, total: int) -> tuple[int, str | None]:
    cursor = getattr(params, "cursor", None) if params is not None else None
    start = int(cursor) if cursor else 0
    return start, str(start + PAGE) if start + PAGE < total else None


srv = PagedServer("resource-test-server")


@srv.resource("note://readme", name="readme", mime_type="text/markdown")
def readme() -> str:
    return "# Read me\nThe notes server."


@srv.resource("note://logo", name="logo", mime_type="image/png")
def logo() -> bytes:
    return b"\x89PNG\r\n\x1a\nfake"


def _note(index: int) -> None:
    srv.resource(f"note://n{index}", name=f"note {index}", mime_type="text/plain")(
        lambda: f"note number {index}"
    )


for _index in range(1, 5):  # enough to need a second page
    _note(_index)


@srv.resource("colour://{name}", name="colour", mime_type="text/plain")
def colour(name: str) -> str:
    return f"the colour {name}"


@srv.prompt(description="Review a file with attention to one topic")
def review(path: str, focus: str = "bugs") -> str:
    return f"Review {path}, focusing on {focus}."


@srv.prompt(description="Talk about a colour")
def paint(colour: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"Describe {colour}."},
        {"role": "assistant", "content": "Which shade?"},
        {"role": "user", "content": "The brightest."},
    ]


for _name in ("p3", "p4"):  # enough to need a second page
    srv.prompt(name=_name, description=f"filler prompt {_name}")(lambda: "filler")


@srv.tool()
async def add_prompt(name: str, ctx: Context) -> str:
    """Add a prompt called `name` and tell the client the prompt list changed."""
    srv.prompt(name=name, description="added while running")(lambda: f"the {name} prompt")
    if ctx.protocol_version == "2026-07-28":
        await ctx.notify_prompts_changed()  # on the client's subscriptions/listen stream
    else:
        await ctx.request_context.session.send_prompt_list_changed()
    return f"added {name}"


@srv.completion()
async def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
    if isinstance(ref, PromptReference) and argument.name == "colour":
        return Completion(values=[c for c in COLOURS if c.startswith(argument.value)])
    if isinstance(ref, ResourceTemplateReference) and argument.name == "name":
        return Completion(values=[c for c in COLOURS if c.startswith(argument.value)])
    if isinstance(ref, PromptReference) and argument.name == "focus":
        path = (context.arguments or {}).get("path", "") if context is not None else ""
        return Completion(values=[f"{path} security", f"{path} style"])
    return None


if __name__ == "__main__":
    srv.run("stdio")
