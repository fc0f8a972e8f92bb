"""`McpTool` and naming: remote tools as local tools, results flattened, failures as results."""

from __future__ import annotations

import json
import logging
import re
from typing import Any, cast

import pytest
from scripted.fakes import FakeTransport, RpcError, tool

from cat_code.host.mcp_tools.tool_adapter import (
    MAX_NAME_LENGTH,
    McpTool,
    assign_names,
    flatten_result,
    may_belong_to,
    registered_name,
    sanitize,
)
from cat_code.mcp.client import McpClient
from cat_code.mcp.errors import ProcessExited
from cat_code.mcp.wire import CallToolResult, ToolDefinition
from cat_code.tools.base import ProgressCallback, Tool, ToolOwner

VALID_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class Direct:
    """The adapter's `ToolServer` calling one client straight (the pool's server does more)."""

    def __init__(self, client: McpClient) -> None:
        self.name = client.name
        self.client = client

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> CallToolResult:
        return await self.client.call_tool(tool, arguments, progress=progress)


async def adapted(
    wire: dict[str, Any], handlers: dict[str, Any] | None = None, **client_kwargs: Any
) -> tuple[McpTool, FakeTransport]:
    fake = FakeTransport(handlers, tools=[wire])
    client = McpClient(fake, name="srv", **client_kwargs)
    await client.connect(timeout=5)
    name = registered_name("srv", wire["name"])
    return McpTool(Direct(client), cast(ToolDefinition, wire), name), fake


# -- naming ------------------------------------------------------------------------------


def test_a_tool_is_registered_as_mcp_server_tool() -> None:
    assert registered_name("echo", "echo") == "mcp__echo__echo"
    assert registered_name("git-hub", "list_issues") == "mcp__git-hub__list_issues"


@pytest.mark.parametrize(
    ("server", "tool_name", "expected"),
    [
        ("my server", "read.file/v2", "mcp__my_server__read_file_v2"),
        ("café", "naïve tool", "mcp__caf___na_ve_tool"),
        ("a:b", "x@y", "mcp__a_b__x_y"),
        ("", "", "mcp______"),
    ],
)
def test_each_part_is_reduced_to_letters_digits_underscore_and_dash(
    server: str, tool_name: str, expected: str
) -> None:
    name = registered_name(server, tool_name)
    assert name == expected
    assert VALID_NAME.match(name)


def test_sanitize_never_returns_an_empty_part() -> None:
    assert sanitize("") == "_"
    assert sanitize("ok-name_1") == "ok-name_1"


def test_a_name_of_exactly_64_characters_is_kept() -> None:
    tool_name = "t" * (MAX_NAME_LENGTH - len("mcp__s__"))
    assert registered_name("s", tool_name) == f"mcp__s__{tool_name}"


def test_a_longer_name_is_shortened_to_64_with_a_stable_hash_suffix() -> None:
    tool_name = "describe_" + "very_" * 30 + "long_tool"
    full = f"mcp__server__{tool_name}"

    name = registered_name("server", tool_name)

    assert len(name) == MAX_NAME_LENGTH
    assert VALID_NAME.match(name)
    assert name.startswith(full[:50])
    assert name == registered_name("server", tool_name)  # stable across calls (and runs)
    assert re.fullmatch(r".*_[0-9a-f]{8}", name)


def test_long_names_that_share_a_prefix_stay_distinct() -> None:
    stem = "a" * 80
    names = {registered_name("s", stem + suffix) for suffix in ("_one", "_two", "_three")}
    assert len(names) == 3
    assert all(len(n) == MAX_NAME_LENGTH for n in names)


def test_a_collision_after_sanitising_is_resolved_deterministically_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="cat_code.host.mcp_tools.tool_adapter")
    tools = ["read.file", "read_file", "read file"]

    names = assign_names("s", tools)

    assert len(set(names.values())) == 3
    assert all(VALID_NAME.match(n) for n in names.values())
    assert names["read_file"] == "mcp__s__read_file"  # the name that needed no change keeps it
    for order in (list(reversed(tools)), sorted(tools), [tools[1], tools[0], tools[2]]):
        assert assign_names("s", order) == names  # whatever order the server sends
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2 * 4
    assert all("mcp__s__read_file" in w and "taken" in w for w in warnings)


def test_a_name_taken_by_another_tool_is_not_reused(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="cat_code.host.mcp_tools.tool_adapter")
    names = assign_names("s", ["x"], taken={"mcp__s__x"})
    assert names["x"] != "mcp__s__x"
    assert VALID_NAME.match(names["x"])
    assert any("mcp__s__x" in r.getMessage() for r in caplog.records)


def test_collisions_between_long_names_stay_within_64_characters() -> None:
    stem = "x" * 70
    names = assign_names("s", [stem + ".a", stem + "_a"])
    assert len(set(names.values())) == 2
    assert all(len(n) <= MAX_NAME_LENGTH and VALID_NAME.match(n) for n in names.values())


# -- the tool's fields -------------------------------------------------------------------


async def test_an_mcp_tool_carries_the_wire_fields_as_a_local_tool() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"path": {"type": "string"}, "mode": {"oneOf": [{"const": "r"}]}},
        "required": ["path"],
        "$defs": {"x": {"type": "integer"}},
    }
    wire = tool("read.file", description="Read a file", inputSchema=schema,
                annotations={"readOnlyHint": True})  # fmt: skip
    mcp_tool, _ = await adapted(wire)

    assert isinstance(mcp_tool, Tool)
    assert mcp_tool.name == "mcp__srv__read_file"
    assert mcp_tool.tool_name == "read.file"
    assert mcp_tool.server == "srv"
    assert mcp_tool.owner == ToolOwner("srv") and str(mcp_tool.owner) == "mcp:srv"
    assert mcp_tool.description == "Read a file"
    assert mcp_tool.input_schema == schema  # passed through untouched
    assert mcp_tool.read_only is True


@pytest.mark.parametrize(
    ("annotations", "read_only"),
    [
        (None, False),
        ({}, False),
        ({"readOnlyHint": False}, False),
        ({"readOnlyHint": "true"}, False),
        ({"destructiveHint": False}, False),
        ({"readOnlyHint": True}, True),
    ],
)
async def test_read_only_comes_from_the_read_only_hint_alone(
    annotations: dict[str, Any] | None, read_only: bool
) -> None:
    wire = tool("t") if annotations is None else tool("t", annotations=annotations)
    mcp_tool, _ = await adapted(wire)
    assert mcp_tool.read_only is read_only


@pytest.mark.parametrize(
    ("fields", "description"),
    [
        ({"description": "Does it", "title": "Doer"}, "Does it"),
        ({"title": "Doer"}, "Doer"),
        ({"description": "", "title": "Doer"}, "Doer"),
        ({}, ""),
        ({"description": 42}, ""),
    ],
)
async def test_the_description_falls_back_to_the_title(
    fields: dict[str, Any], description: str
) -> None:
    mcp_tool, _ = await adapted(tool("t", **fields))
    assert mcp_tool.description == description


async def test_a_tool_without_an_input_schema_gets_an_object_schema() -> None:
    mcp_tool, _ = await adapted({"name": "bare"})
    assert mcp_tool.input_schema == {"type": "object"}


# -- execute -----------------------------------------------------------------------------


def echo(params: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"{params['name']}: {params['arguments']}"}]}


async def test_execute_sends_the_original_name_on_the_wire() -> None:
    mcp_tool, fake = await adapted(tool("read.file/v2"), {"tools/call": echo})

    result = await mcp_tool.execute({"path": "a.txt"})

    assert mcp_tool.name == "mcp__srv__read_file_v2"
    assert fake.requests[-1]["params"] == {"name": "read.file/v2", "arguments": {"path": "a.txt"}}
    assert result.content == "read.file/v2: {'path': 'a.txt'}"
    assert result.is_error is False
    assert result.tool_call_id == ""  # the agent loop fills it in
    assert result.raw == echo({"name": "read.file/v2", "arguments": {"path": "a.txt"}})


async def test_execute_forwards_progress() -> None:
    fake_holder: list[FakeTransport] = []

    def reporting(params: dict[str, Any]) -> dict[str, Any]:
        token = params["_meta"]["progressToken"]
        fake_holder[0].push({"method": "notifications/progress", "params": {
            "progressToken": token, "progress": 1, "total": 4}})  # fmt: skip
        return {"content": []}

    mcp_tool, fake = await adapted(tool("t"), {"tools/call": reporting})
    fake_holder.append(fake)
    seen: list[Any] = []
    await mcp_tool.execute({}, progress=lambda *a: seen.append(a))
    assert seen == [(1.0, 4.0, None)]


async def test_a_tool_error_result_is_carried_through() -> None:
    def failing(params: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "no such file"}], "isError": True}

    mcp_tool, _ = await adapted(tool("t"), {"tools/call": failing})
    result = await mcp_tool.execute({})
    assert result.is_error is True
    assert result.content == "no such file"


async def test_a_timeout_becomes_an_error_result() -> None:
    fake_holder: list[FakeTransport] = []
    mcp_tool, fake = await adapted(
        tool("slow"), {"tools/call": lambda params: fake_holder[0].hang()}, request_timeout=0.05
    )
    fake_holder.append(fake)

    result = await mcp_tool.execute({})

    assert result.is_error is True
    assert result.content.startswith("Error: MCP tool 'mcp__srv__slow' failed: ")
    assert "timed out" in result.content


async def test_a_dead_server_becomes_an_error_result() -> None:
    def died(params: dict[str, Any]) -> Any:
        raise ProcessExited("server process exited with code 1; last stderr: segfault", 1)

    mcp_tool, _ = await adapted(tool("t"), {"tools/call": died})
    result = await mcp_tool.execute({})
    assert result.is_error is True
    assert result.content == (
        "Error: MCP tool 'mcp__srv__t' failed: "
        "server process exited with code 1; last stderr: segfault"
    )


async def test_a_closed_connection_becomes_an_error_result() -> None:
    mcp_tool, fake = await adapted(tool("t"), {"tools/call": echo})
    await fake.close()
    result = await mcp_tool.execute({})
    assert result.is_error is True
    assert result.content == "Error: MCP tool 'mcp__srv__t' failed: connection closed"


async def test_a_json_rpc_error_becomes_an_error_result() -> None:
    def refuse(params: dict[str, Any]) -> Any:
        raise RpcError(-32602, "Unknown tool: t")

    mcp_tool, _ = await adapted(tool("t"), {"tools/call": refuse})
    result = await mcp_tool.execute({})
    assert result.is_error is True
    assert result.content == "Error: MCP tool 'mcp__srv__t' failed: Unknown tool: t (code -32602)"


async def test_a_malformed_result_becomes_an_error_result() -> None:
    mcp_tool, _ = await adapted(tool("t"), {"tools/call": lambda params: ["not", "a", "result"]})
    result = await mcp_tool.execute({})
    assert result.is_error is True
    assert result.content.startswith("Error: MCP tool 'mcp__srv__t' failed: ")


async def test_an_unexpected_exception_becomes_an_error_result_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(params: dict[str, Any]) -> Any:
        raise RuntimeError("kaboom")

    mcp_tool, _ = await adapted(tool("t"), {"tools/call": broken})

    result = await mcp_tool.execute({})

    assert result.is_error is True
    assert result.content == "Error: MCP tool 'mcp__srv__t' failed: RuntimeError: kaboom"
    assert any(r.levelno == logging.ERROR and r.exc_info for r in caplog.records)


# -- flattening --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "text"),
    [
        ({"type": "text", "text": "hello"}, "hello"),
        ({"type": "image", "data": "iVBORw0K", "mimeType": "image/png"},
         "[image: image/png, 6 bytes]"),
        ({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
         "[audio: audio/wav, 4 bytes]"),
        ({"type": "image", "data": "A" * 4096, "mimeType": "image/jpeg"},
         "[image: image/jpeg, 3.0 KiB]"),
        ({"type": "image", "data": "A" * (4 * 1024 * 1024), "mimeType": "image/webp"},
         "[image: image/webp, 3.0 MiB]"),
        ({"type": "image", "data": "AAAA"}, "[image: unknown type, 3 bytes]"),
        ({"type": "resource_link", "uri": "file:///src/a.py", "name": "a.py"},
         "[resource link: a.py <file:///src/a.py>]"),
        ({"type": "resource_link", "uri": "https://x.test/r", "name": "r", "title": "The R"},
         "[resource link: The R <https://x.test/r>]"),
        ({"type": "resource", "resource": {"uri": "file:///n.md", "text": "# Notes"}}, "# Notes"),
        ({"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAECAw==",
                                           "mimeType": "application/octet-stream"}},
         "[resource file:///b.bin: application/octet-stream, 4 bytes]"),
        ({"type": "resource", "resource": {"uri": "file:///b", "blob": ""}},
         "[resource file:///b: unknown type, 0 bytes]"),
        ({"type": "hologram", "data": "?"}, "[unsupported content: hologram]"),
    ],
)  # fmt: skip
def test_every_content_type_is_flattened_to_text(block: dict[str, Any], text: str) -> None:
    result = flatten_result({"content": [block]})
    assert result.content == text
    assert result.is_error is False


def test_several_blocks_are_joined_by_newlines() -> None:
    result = flatten_result({"content": [
        {"type": "text", "text": "one"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "text", "text": "two"},
    ]})  # fmt: skip
    assert result.content == "one\n[image: image/png, 3 bytes]\ntwo"


def test_structured_content_is_shown_as_compact_json_when_there_is_no_text_block() -> None:
    result = flatten_result({"content": [], "structuredContent": {"sum": 3, "unit": "€"}})
    assert result.content == '{"sum":3,"unit":"€"}'


def test_structured_content_is_not_repeated_when_a_text_block_carries_it() -> None:
    result = flatten_result({
        "content": [{"type": "text", "text": '{"sum": 3}'}],
        "structuredContent": {"sum": 3},
    })  # fmt: skip
    assert result.content == '{"sum": 3}'


def test_structured_content_follows_non_text_blocks() -> None:
    result = flatten_result({
        "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
        "structuredContent": {"ok": True},
    })  # fmt: skip
    assert result.content == '[image: image/png, 3 bytes]\n{"ok":true}'


@pytest.mark.parametrize(
    ("is_error", "expected"), [(True, True), (False, False), (None, False), ("yes", False)]
)
def test_is_error_is_carried_through(is_error: Any, expected: bool) -> None:
    result = flatten_result({"content": [{"type": "text", "text": "x"}], "isError": is_error})
    assert result.is_error is expected


@pytest.mark.parametrize(
    "result",
    [{}, {"content": None}, {"content": "text"}, {"content": [None, 3, "x", {"type": "text"}]}],
)
def test_malformed_content_never_raises(result: dict[str, Any]) -> None:
    flattened = flatten_result(result)
    assert isinstance(flattened.content, str)


@pytest.mark.parametrize("kind", [None, 3, ["text"], {"type": "text"}])
def test_a_block_whose_type_is_missing_or_not_a_string_is_unsupported_content(kind: Any) -> None:
    block = {"text": "hidden"} if kind is None else {"type": kind, "text": "hidden"}
    assert flatten_result({"content": [block]}).content == f"[unsupported content: {kind}]"


@pytest.mark.parametrize("server", ["echo", "a.b", "s" * 70])
def test_every_name_a_server_gets_is_recognised_as_its_own_and_no_other(server: str) -> None:
    tools = ["echo", "read.file", "read_file", "t" * 80]
    names = assign_names(server, tools, taken={registered_name(server, "echo")})
    for name in names.values():
        assert may_belong_to(server, name)
        assert not may_belong_to("other", name)


def test_a_taken_name_already_cut_to_64_characters_still_finds_a_free_one() -> None:
    server = "s" * 70
    plain = registered_name(server, "echo")
    first_try = assign_names(server, ["echo"], taken={plain})["echo"]
    names = assign_names(server, ["echo"], taken={plain, first_try})
    assert names["echo"] not in {plain, first_try} and len(names["echo"]) <= MAX_NAME_LENGTH


# -- schemas pass through ------------------------------------------------------------------


async def test_a_2020_12_input_schema_reaches_the_provider_boundary_byte_identical() -> None:
    from cat_code.agent.providers.schema import object_schema

    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"id": {"$anchor": "ident", "type": "string", "pattern": "^[a-z]+$"}},
        "properties": {
            "id": {"$ref": "#/$defs/id"},
            "profile": {"$ref": "https://example.invalid/profile.json"},
            "kind": {"if": {"const": "a"}, "then": {"minLength": 1}, "else": {"maxLength": 9}},
        },
        "anyOf": [{"required": ["id"]}, {"required": ["profile"]}],
        "additionalProperties": False,
        "x-unknown-keyword": {"kept": True},
    }
    sent = json.dumps(schema, sort_keys=False)
    wire = {"name": "lookup", "inputSchema": json.loads(sent)}
    fake = FakeTransport(
        {"server/discover": lambda p: {"supportedVersions": ["2026-07-28"]}}, tools=[wire]
    )
    client = McpClient(fake, name="srv")
    await client.connect(timeout=5)
    (listed,) = await client.list_tools()
    tool = McpTool(Direct(client), listed, registered_name("srv", "lookup"))
    assert json.dumps(tool.input_schema, sort_keys=False) == sent
    object_schema(tool.input_schema)  # what a provider adapts is a copy
    assert json.dumps(tool.input_schema, sort_keys=False) == sent
