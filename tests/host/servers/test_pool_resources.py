"""Resources, templates, prompts and completion through `McpPool`, against real servers over
stdio: the `mcp` SDK's server (`tests/servers/resource_server.py`) in both protocol eras,
and the npm ``@modelcontextprotocol/server-everything``; plus the model's resource tools."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from conftest import EVERYTHING_SERVER, node_available
from scripted.procs import SERVERS, wait_until

from cat_code.host.config.load import McpConfig, StdioServerConfig
from cat_code.host.mcp_tools.prompts import command_names
from cat_code.host.mcp_tools.resource_tools import resource_tools
from cat_code.host.servers.catalog import UnknownServer
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.server import McpServer
from cat_code.mcp.errors import McpError, TransportClosed
from cat_code.mcp.resources import blob_bytes, contents_text
from cat_code.mcp.transports.stdio import StdioTransport
from cat_code.mcp.wire import ReadResourceResult

SOURCE = Path("test-mcp.json")
RESOURCE_SERVER = SERVERS / "resource_server.py"
ECHO = Path(__file__).resolve().parents[3] / "examples" / "echo_server.py"

needs_everything = pytest.mark.skipif(
    not node_available(), reason="node or server-everything is missing (run `npm ci`)"
)


def entry(name: str, command: str, *args: str, version: str | None = None) -> StdioServerConfig:
    return StdioServerConfig(
        name=name, source=SOURCE, command=command, args=args, startup_timeout_s=30,
        request_timeout_s=20, protocol_version=version,
    )  # fmt: skip


#: One server per era for the whole module: starting the SDK's server takes a while.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(
    scope="module", loop_scope="module", params=["2025-11-25", None], ids=["handshake", "modern"]
)
async def notes(request: pytest.FixtureRequest) -> AsyncIterator[McpPool]:
    """The SDK's resource server, pinned to the handshake era or left to pick 2026-07-28."""
    config = McpConfig(
        servers=[entry("notes", sys.executable, str(RESOURCE_SERVER), version=request.param)]
    )
    async with McpPool(config) as pool:
        await pool.connect_all()
        [status] = pool.status()
        assert status.state == "CONNECTED", status.error
        expected = "handshake" if request.param else "modern"
        assert status.era == expected
        yield pool


async def test_resources_are_listed_over_every_page_with_their_server(notes: McpPool) -> None:
    listed = await notes.resources()
    assert listed.failures == {}
    uris = [r["uri"] for server, r in listed.items if server == "notes"]
    assert sorted(uris) == sorted(
        ["note://readme", "note://logo", "note://n1", "note://n2", "note://n3", "note://n4"]
    )
    readme = next(r for _, r in listed.items if r["uri"] == "note://readme")
    assert readme["name"] == "readme" and readme["mimeType"] == "text/markdown"


async def test_templates_are_listed(notes: McpPool) -> None:
    templates = await notes.resource_templates()
    assert [(s, t["uriTemplate"]) for s, t in templates.items] == [("notes", "colour://{name}")]


async def test_text_and_blob_resources_are_read(notes: McpPool) -> None:
    text = await read_from(notes, "notes", "note://readme")
    assert contents_text(text) == "# Read me\nThe notes server."
    blob = await read_from(notes, "notes", "note://logo")
    [contents] = blob["contents"]
    assert blob_bytes(contents) == b"\x89PNG\r\n\x1a\nfake"
    assert contents_text(blob) == "[binary resource note://logo: image/png, 12 bytes]"
    filled = await read_from(notes, "notes", "colour://teal")
    assert contents_text(filled) == "the colour teal"


async def test_an_unknown_resource_is_the_servers_error(notes: McpPool) -> None:
    with pytest.raises(McpError):
        await read_from(notes, "notes", "note://nothing-here")


async def test_prompts_are_listed_over_every_page_and_got_with_arguments(notes: McpPool) -> None:
    prompts = await notes.prompts()
    names = [p["name"] for _, p in prompts.items]
    assert sorted(names) == ["p3", "p4", "paint", "review"]
    review = next(p for _, p in prompts.items if p["name"] == "review")
    assert [(a["name"], a.get("required", False)) for a in review["arguments"]] == [
        ("path", True),
        ("focus", False),
    ]
    assert "/mcp__notes__review" in command_names(notes.known_prompts())
    result = await notes.use(
        "notes", lambda c: c.get_prompt("review", {"path": "a.py", "focus": "style"})
    )
    [message] = result["messages"]
    assert message["role"] == "user"
    assert message["content"] == {"type": "text", "text": "Review a.py, focusing on style."}


async def test_completion_answers_for_prompt_arguments_and_template_variables(
    notes: McpPool,
) -> None:
    async def complete(ref: Any, argument: str, value: str, *context: dict[str, str]) -> Any:
        return await notes.use("notes", lambda c: c.complete(ref, argument, value, *context))

    prompt = await complete({"type": "ref/prompt", "name": "paint"}, "colour", "b")
    assert prompt["values"] == ["blue"]
    template = await complete({"type": "ref/resource", "uri": "colour://{name}"}, "name", "c")
    assert template["values"] == ["cyan"]
    context = await complete(
        {"type": "ref/prompt", "name": "review"}, "focus", "", {"path": "x.py"}
    )
    assert context["values"] == ["x.py security", "x.py style"]


async def test_the_resource_tools_list_and_read_for_the_model(notes: McpPool) -> None:
    list_tool, read_tool = resource_tools(notes)
    assert list_tool.read_only and read_tool.read_only
    listed = await list_tool.execute({})
    assert not listed.is_error
    assert '"uri": "note://readme"' in listed.content and '"server": "notes"' in listed.content
    assert '"uriTemplate": "colour://{name}"' in listed.content
    read = await read_tool.execute({"server": "notes", "uri": "note://n2"})
    assert (read.content, read.is_error, read.media) == ("note number 2", False, [])
    image = await read_tool.execute({"server": "notes", "uri": "note://logo"})
    assert image.content == "[binary resource note://logo: image/png, 12 bytes]"
    assert [(m.kind, m.mime_type, m.data) for m in image.media] == [
        ("image", "image/png", "iVBORw0KGgpmYWtl")
    ]
    missing = await read_tool.execute({"server": "notes", "uri": "note://nope"})
    assert missing.is_error and "note://nope" in missing.content and "'notes'" in missing.content
    unknown = await read_tool.execute({"server": "ghost", "uri": "note://n2"})
    assert unknown.is_error and "'ghost'" in unknown.content and "notes" in unknown.content
    bad = await read_tool.execute({"server": "notes"})
    assert bad.is_error and "'uri'" in bad.content


async def test_a_server_without_resources_or_prompts_is_not_asked() -> None:
    config = McpConfig(servers=[entry("echo", sys.executable, str(ECHO))])
    async with McpPool(config) as pool:
        await pool.connect_all()
        [server] = pool.servers
        assert server.client is not None
        assert (await pool.resources()).items == []
        assert (await pool.prompts()).items == []
        completion = await pool.use(
            "echo", lambda c: c.complete({"type": "ref/prompt", "name": "x"}, "a", "")
        )
        assert completion == {"values": []}


async def test_asking_a_server_that_is_not_connected_names_it() -> None:
    config = McpConfig(servers=[entry("dead", sys.executable, "-c", "raise SystemExit(3)")])
    async with McpPool(config) as pool:
        await pool.connect_all()
        with pytest.raises(UnknownServer, match="'dead'"):
            await pool.use("dead", lambda c: c.read_resource("x://y"), heal=True)
        with pytest.raises(TransportClosed, match="'dead' is FAILED"):
            await pool.servers[0].use(lambda c: c.read_resource("x://y"), heal=True)
        assert resource_tools(McpPool(McpConfig())) == []


async def read_from(pool: McpPool, server: str, uri: str) -> ReadResourceResult:
    return await pool.use(server, lambda c: c.read_resource(uri), heal=True)


# -- server-everything (the TypeScript SDK) ------------------------------------------------


@needs_everything
async def test_server_everything_resources_templates_prompts_and_completion() -> None:
    config = McpConfig(servers=[entry("everything", "node", str(EVERYTHING_SERVER), "stdio")])
    async with McpPool(config) as pool:
        await pool.connect_all()
        assert pool.status()[0].state == "CONNECTED"
        resources = await pool.resources()
        uris = [r["uri"] for _, r in resources.items]
        assert "demo://resource/static/document/features.md" in uris
        templates = await pool.resource_templates()
        assert "demo://resource/dynamic/blob/{resourceId}" in [
            t["uriTemplate"] for _, t in templates.items
        ]
        features = await read_from(
            pool, "everything", "demo://resource/static/document/features.md"
        )
        assert "## Resources" in contents_text(features)
        blob = await read_from(pool, "everything", "demo://resource/dynamic/blob/3")
        [contents] = blob["contents"]
        assert (blob_bytes(contents) or b"").startswith(b"Resource 3: This is a base64 blob")
        # A blob of a textual type reaches readers decoded.
        assert contents_text(blob).startswith("Resource 3: This is a base64 blob")

        prompts = await pool.prompts()
        args = next(p for _, p in prompts.items if p["name"] == "args-prompt")
        assert [a["name"] for a in args["arguments"]] == ["city", "state"]
        got = await pool.use("everything", lambda c: c.get_prompt("args-prompt", {"city": "Paris"}))
        assert got["messages"][0]["content"] == {
            "type": "text",
            "text": "What's weather in Paris?",
        }

        ref: Any = {"type": "ref/prompt", "name": "completable-prompt"}
        department = await pool.use("everything", lambda c: c.complete(ref, "department", "S"))
        assert department["values"] == ["Sales", "Support"]
        names = await pool.use(
            "everything", lambda c: c.complete(ref, "name", "", {"department": "Sales"})
        )
        assert names["values"] == ["David", "Eve", "Frank"]


@pytest.mark.slow
async def test_a_prompt_added_by_the_server_is_listed_after_its_notification() -> None:
    for version in ("2025-11-25", None):
        config = McpConfig(
            servers=[entry("live", sys.executable, str(RESOURCE_SERVER), version=version)]
        )
        async with McpPool(config) as pool:
            await pool.connect_all()
            [server] = pool.servers
            assert server.client is not None
            await pool.prompts()
            assert "fresh" not in [p["name"] for _, p in pool.known_prompts()]
            changed = asyncio.Event()
            server.client.on_prompts_changed = changed.set
            await server.call_tool("add_prompt", {"name": "fresh"})
            async with asyncio.timeout(10):
                await changed.wait()
            assert "fresh" in [p["name"] for _, p in (await pool.prompts()).items]
            assert "/mcp__live__fresh" in command_names(pool.known_prompts())


@pytest.mark.slow
async def test_a_crashed_server_is_started_again_by_a_resource_read_or_listing() -> None:
    servers = [
        entry("notes", sys.executable, str(RESOURCE_SERVER)),
        entry("echo", sys.executable, str(ECHO)),
    ]
    async with McpPool(McpConfig(servers=servers)) as pool:
        await pool.connect_all()
        server, echo = pool.servers

        async def crash(server: McpServer) -> None:
            client = server.client
            assert client is not None and isinstance(client.transport, StdioTransport)
            pid = client.transport.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            await wait_until(lambda: server.state == "FAILED", timeout=10)

        await crash(server)
        read = await read_from(pool, "notes", "note://readme")
        assert contents_text(read) == "# Read me\nThe notes server."
        assert (server.state, server.restarts) == ("CONNECTED", 1)

        await crash(server)
        await crash(echo)
        listed = await pool.resources()
        assert ("notes", "note://readme") in [(s, r["uri"]) for s, r in listed.items]
        assert listed.failures == {} and server.restarts == 2
        # A server without resources is left for its next tool call to start.
        assert (echo.state, echo.restarts) == ("FAILED", 0)
