"""`McpClient`'s resources, prompts and completion over the in-memory `FakeTransport`:
capabilities honoured, pages followed, bad entries left out, caches and change notifications."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from scripted.fakes import FakeTransport, RpcError

from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import McpError, ProtocolError

HANDSHAKE = "2025-11-25"
EVERYTHING = {
    "tools": {},
    "resources": {"listChanged": True},
    "prompts": {"listChanged": True},
    "completions": {},
}


def fake_with(
    capabilities: dict[str, Any], handlers: dict[str, Any] | None = None
) -> FakeTransport:
    fake = FakeTransport(handlers)

    def initialize(params: dict[str, Any]) -> dict[str, Any]:
        return {
            "protocolVersion": HANDSHAKE,
            "capabilities": capabilities,
            "serverInfo": {"name": "fake", "version": "1"},
        }

    fake.handlers["initialize"] = initialize
    return fake


async def connected(fake: FakeTransport) -> McpClient:
    client = McpClient(fake, name="fake", protocol_version=HANDSHAKE)
    await client.connect(timeout=5)
    return client


async def test_a_server_without_resources_prompts_or_completions_is_asked_nothing() -> None:
    fake = fake_with({"tools": {}})
    client = await connected(fake)
    assert await client.list_resources() == []
    assert await client.list_resource_templates() == []
    assert await client.list_prompts() == []
    assert await client.complete({"type": "ref/prompt", "name": "p"}, "a", "") == {"values": []}
    with pytest.raises(ProtocolError, match="offers no resources"):
        await client.read_resource("x://y")
    with pytest.raises(ProtocolError, match="offers no prompts"):
        await client.get_prompt("p")
    assert fake.methods() == ["initialize"]


async def test_resources_follow_every_page_and_bad_entries_are_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pages = {
        None: {
            "resources": [{"uri": "a://1", "name": "one"}, {"name": "no uri"}],
            "nextCursor": "",
        },
        "": {"resources": [{"uri": "a://2"}, "junk", {"uri": "a://3", "name": "3", "size": "big"}]},
    }
    fake = fake_with(EVERYTHING, {"resources/list": lambda p: pages[p.get("cursor")]})
    client = await connected(fake)
    with caplog.at_level(logging.WARNING):
        resources = await client.list_resources()
    assert resources == [
        {"uri": "a://1", "name": "one"},
        {"uri": "a://2", "name": "a://2"},  # a nameless resource is named by its URI
        {"uri": "a://3", "name": "3"},  # a size that is not a number is dropped
    ]
    assert "fake: skipping a resource without a uri" in caplog.text
    listings = [r.get("params") for r in fake.requests if r["method"] == "resources/list"]
    assert listings == [None, {"cursor": ""}]


async def test_a_listing_without_its_array_is_a_protocol_error() -> None:
    fake = fake_with(EVERYTHING, {"prompts/list": lambda p: {"items": []}})
    client = await connected(fake)
    with pytest.raises(ProtocolError, match="prompts/list result has no 'prompts' array"):
        await client.list_prompts()


async def test_listings_are_cached_until_the_server_says_they_changed() -> None:
    notified: list[str] = []
    fake = fake_with(
        EVERYTHING,
        {
            "resources/list": lambda p: {"resources": [{"uri": "a://1", "name": "a"}]},
            "resources/templates/list": lambda p: {
                "resourceTemplates": [{"uriTemplate": "a://{x}", "name": "ax"}]
            },
            "prompts/list": lambda p: {"prompts": [{"name": "p"}]},
        },
    )
    client = await connected(fake)
    client.on_resources_changed = lambda: notified.append("resources")
    client.on_prompts_changed = lambda: notified.append("prompts")
    client.on_resource_updated = notified.append
    for _ in range(2):
        await client.list_resources()
        await client.list_resource_templates()
        await client.list_prompts()
    assert client.cached_prompts() == [{"name": "p"}]
    assert fake.methods().count("resources/list") == 1
    assert fake.methods().count("prompts/list") == 1

    fake.push({"method": "notifications/resources/list_changed"})
    fake.push({"method": "notifications/prompts/list_changed"})
    fake.push({"method": "notifications/resources/updated", "params": {"uri": "a://1"}})
    assert notified == ["resources", "prompts", "a://1"]
    assert client.cached_prompts() is None
    await client.list_resources()
    await client.list_resource_templates()
    await client.list_prompts()
    assert fake.methods().count("resources/list") == 2
    assert fake.methods().count("resources/templates/list") == 2
    assert fake.methods().count("prompts/list") == 2


async def test_read_resource_keeps_text_and_blob_contents_and_drops_the_rest() -> None:
    contents = [
        {"uri": "a://1", "mimeType": "text/plain", "text": "hello"},
        {"uri": "a://1#2", "blob": "aGk="},
        {"uri": "a://1#3"},
        {"text": "no uri"},
    ]
    fake = fake_with(EVERYTHING, {"resources/read": lambda p: {"contents": contents}})
    client = await connected(fake)
    result = await client.read_resource("a://1")
    assert result == {"contents": contents[:2]}
    assert fake.requests[-1]["params"] == {"uri": "a://1"}


async def test_a_read_error_keeps_the_servers_code_and_message() -> None:
    def missing(params: dict[str, Any]) -> Any:
        raise RpcError(-32002, "Resource not found", {"uri": params["uri"]})

    client = await connected(fake_with(EVERYTHING, {"resources/read": missing}))
    with pytest.raises(McpError) as caught:
        await client.read_resource("a://gone")
    assert (caught.value.code, caught.value.message) == (-32002, "Resource not found")


async def test_get_prompt_sends_string_arguments_and_checks_the_messages() -> None:
    def get(params: dict[str, Any]) -> dict[str, Any]:
        return {
            "description": "d",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": f"hi {params['arguments']}"}},
                {"role": "system", "content": {"type": "text", "text": "not a role"}},
                {"role": "assistant", "content": "not a block"},
            ],
        }

    fake = fake_with(EVERYTHING, {"prompts/get": get})
    client = await connected(fake)
    result = await client.get_prompt("greet", {"name": "Ann"})
    assert result == {
        "description": "d",
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi {'name': 'Ann'}"}}],
    }
    assert fake.requests[-1]["params"] == {"name": "greet", "arguments": {"name": "Ann"}}


async def test_complete_sends_ref_argument_and_context_and_keeps_string_values() -> None:
    values = ["a", 2, "b"] + [f"v{i}" for i in range(120)]
    fake = fake_with(
        EVERYTHING,
        {"completion/complete": lambda p: {"completion": {"values": values, "hasMore": True}}},
    )
    client = await connected(fake)
    completion = await client.complete(
        {"type": "ref/prompt", "name": "p"}, "city", "Pa", {"country": "FR"}
    )
    assert completion["values"][:3] == ["a", "b", "v0"]
    assert len(completion["values"]) == 100 and completion["hasMore"] is True
    assert fake.requests[-1]["params"] == {
        "ref": {"type": "ref/prompt", "name": "p"},
        "argument": {"name": "city", "value": "Pa"},
        "context": {"arguments": {"country": "FR"}},
    }


async def test_a_modern_server_is_listened_to_for_every_list_it_says_may_change() -> None:
    listened: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def listen(params: dict[str, Any]) -> Any:
        listened.put_nowait(params["notifications"])
        await asyncio.Event().wait()

    discover = {
        "supportedVersions": ["2026-07-28"],
        "capabilities": {
            "tools": {},
            "resources": {"listChanged": True},
            "prompts": {"listChanged": True},
        },
        "serverInfo": {"name": "modern", "version": "1"},
    }
    fake = FakeTransport({"server/discover": lambda p: discover, "subscriptions/listen": listen})
    client = McpClient(fake, name="fake")
    await client.connect(timeout=5)
    assert client.era == "modern"
    changed = asyncio.Event()
    client.on_prompts_changed = changed.set
    async with asyncio.timeout(5):
        flags = await listened.get()
        fake.push({"method": "notifications/prompts/list_changed"})
        await changed.wait()
    assert flags == {"resourcesListChanged": True, "promptsListChanged": True}
    await client.close()
