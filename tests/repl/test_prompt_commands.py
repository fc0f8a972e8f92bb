"""Prompt commands, ``/mcp resources|prompts``, ``@server:uri`` mentions and their Tab
completion, against the `mcp` SDK's resource server over stdio (a real pool)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from cat_code.agent.providers.base import AssistantMessage, UserMessage
from cat_code.host.config.load import McpConfig, StdioServerConfig
from cat_code.host.mcp_tools import resource_excerpt
from cat_code.host.mcp_tools.resource_tools import ReadMcpResourceTool
from cat_code.host.servers.pool import McpPool
from cat_code.repl.commands import CommandContext, Show, complete, handle_command
from cat_code.repl.mentions import (
    Mention,
    MentionError,
    attach_resources,
    complete_mention,
    find_mentions,
    mention_word,
)
from cat_code.repl.prompt_commands import (
    ListPrompts,
    ListResources,
    ListSkills,
    RunPrompt,
    complete_argument,
    get_prompt,
)
from cat_code.tools.registry import ToolRegistry

RESOURCE_SERVER = Path(__file__).resolve().parents[1] / "servers" / "resource_server.py"


#: One server for the whole module: starting the SDK's server takes a while.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool() -> AsyncIterator[McpPool]:
    entry = StdioServerConfig(
        name="notes", source=Path("t.json"), command=sys.executable,
        args=(str(RESOURCE_SERVER),), startup_timeout_s=30, protocol_version="2025-11-25",
    )  # fmt: skip
    async with McpPool(McpConfig(servers=[entry])) as pool:
        await pool.connect_all()
        await pool.prompts()  # what the REPL does once connected
        yield pool


def ctx_of(pool: McpPool | None) -> CommandContext:
    return CommandContext(registry=ToolRegistry(), pool=pool)


async def test_a_prompt_command_takes_its_arguments_and_names_missing_ones(pool: McpPool) -> None:
    ctx = ctx_of(pool)
    action = handle_command('/mcp__notes__review "my file.py" focus=speed', ctx)
    assert action == RunPrompt(
        "/mcp__notes__review", "notes", "review", {"path": "my file.py", "focus": "speed"}
    )
    missing = handle_command("/mcp__notes__review", ctx)
    assert missing == Show(
        "/mcp__notes__review: missing required argument: path\n"
        "usage: /mcp__notes__review path [focus]",
        "error",
    )
    typo = handle_command("/mcp__notes__review a.py bogus=1", ctx)
    assert typo == Show(
        "/mcp__notes__review: unknown argument 'bogus' (the prompt takes: path, focus); "
        "to send 'bogus=1' as a value, put it after --\n"
        "usage: /mcp__notes__review path [focus]",
        "error",
    )
    assert handle_command("/mcp__notes__review a.py -- bogus=1", ctx) == RunPrompt(
        "/mcp__notes__review", "notes", "review", {"path": "a.py", "focus": "bogus=1"}
    )
    unknown = handle_command("/mcp__notes__nope", ctx)
    assert isinstance(unknown, Show) and unknown.kind == "error"
    assert "unknown command /mcp__notes__nope" in unknown.text and "/mcp prompts" in unknown.text


async def test_help_lists_the_prompt_commands_and_tab_completes_them(pool: McpPool) -> None:
    ctx = ctx_of(pool)
    shown = handle_command("/help", ctx)
    assert isinstance(shown, Show)
    assert "MCP prompts" in shown.text
    assert (
        "/mcp__notes__review path [focus]  Review a file with attention to one topic" in shown.text
    )
    assert complete("/mcp__notes__p", ctx) == [
        "/mcp__notes__p3",
        "/mcp__notes__p4",
        "/mcp__notes__paint",
    ]
    assert "resources" in complete("/mcp r", ctx)
    assert complete("/mcp prompts no", ctx) == ["notes"]


async def test_mcp_resources_and_prompts_are_actions_and_unknown_servers_are_named(
    pool: McpPool,
) -> None:
    ctx = ctx_of(pool)
    assert handle_command("/mcp resources", ctx) == ListResources(None)
    assert handle_command("/mcp prompts notes", ctx) == ListPrompts("notes")
    assert handle_command("/mcp resources ghost", ctx) == Show(
        "no MCP server named 'ghost' (configured: notes)", "error"
    )
    assert handle_command("/mcp skills", ctx) == ListSkills(None)
    assert handle_command("/mcp skills notes", ctx) == ListSkills("notes")
    assert handle_command("/mcp skills ghost", ctx).kind == "error"  # type: ignore[union-attr]
    assert complete("/mcp sk", ctx) == ["skills"]
    assert complete("/mcp skills no", ctx) == ["notes"]


async def test_a_prompt_is_got_as_conversation_messages(pool: McpPool) -> None:
    messages = await get_prompt(
        pool, RunPrompt("/mcp__notes__paint", "notes", "paint", {"colour": "red"})
    )
    assert messages == [
        UserMessage(text="Describe red."),
        AssistantMessage(text="Which shade?"),
        UserMessage(text="The brightest."),
    ]


async def test_prompt_arguments_complete_through_the_server(pool: McpPool) -> None:
    assert await complete_argument("/mcp__notes__paint b", pool) == ("b", ["blue"])
    assert await complete_argument("/mcp__notes__paint colour=c", pool) == (
        "colour=c",
        ["colour=cyan"],
    )
    word, values = await complete_argument("/mcp__notes__review x.py ", pool)
    assert (word, values) == ("", ["'x.py security'", "'x.py style'"])
    # "--" only ends the names, as when the command runs.
    assert await complete_argument("/mcp__notes__review -- x.py ", pool) == (word, values)


async def test_mentions_are_a_configured_server_and_a_uri_with_a_scheme() -> None:
    text = "see @notes:note://readme, and @docs:file:///a%20b.md. not @bob:hi or a@b:c://d"
    assert find_mentions(text) == [
        Mention("notes", "note://readme"),
        Mention("docs", "file:///a%20b.md"),
    ]
    assert find_mentions(text, {"notes"}) == [Mention("notes", "note://readme")]
    assert mention_word("read @notes:no") == "@notes:no"
    assert mention_word("read @notes:no ") is None
    assert mention_word("read (@notes:no") == "@notes:no"


async def test_a_mention_in_prose_leaves_the_prose_out_of_its_uri() -> None:
    text = (
        "(see @ev:demo://x/a.md) and [@ev:demo://x/b.md], '@ev:demo://x/c.md', "
        '"@ev:demo://x/d.md"; `@ev:demo://x/e.md`! {@ev:demo://x/(f)} @ev:demo://x/g.md?) '
        "@ev:demo:) @ev:demo://x/it's"
    )
    assert [m.uri for m in find_mentions(text)] == [
        "demo://x/a.md",
        "demo://x/b.md",
        "demo://x/c.md",
        "demo://x/d.md",
        "demo://x/e.md",
        "demo://x/(f)",
        "demo://x/g.md",
        "demo://x/it's",
    ]


async def test_a_mention_attaches_the_resource_and_a_bad_one_stops_the_prompt(
    pool: McpPool,
) -> None:
    sent = await attach_resources("summarise @notes:note://readme please", pool)
    assert sent == (
        "summarise @notes:note://readme please\n\n"
        '<resource server="notes" uri="note://readme">\n# Read me\nThe notes server.\n</resource>'
    )
    assert await attach_resources("no mention here", pool) == "no mention here"
    with pytest.raises(MentionError, match=r"note://gone.*'notes'"):
        await attach_resources("@notes:note://gone", pool)


async def test_a_mention_of_a_server_that_is_not_configured_is_plain_text(pool: McpPool) -> None:
    text = "mail @bob:mailto:bob@example.com or @ghost:a://b about (@notes:note://n1)"
    assert await attach_resources(text, pool) == (
        f'{text}\n\n<resource server="notes" uri="note://n1">\nnote number 1\n</resource>'
    )
    assert await attach_resources("mail @bob:mailto:bob@example.com", None) == (
        "mail @bob:mailto:bob@example.com"
    )


async def test_a_long_mentioned_resource_is_cut_like_the_tool_cuts_it_and_says_how_to_read_on(
    pool: McpPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resource_excerpt, "MAX_RESOURCE_CHARS", 10)
    sent = await attach_resources("@notes:colour://ultraviolet", pool)
    cut = (
        "the colour\n… [12 more characters cut, of 22; read on with read_mcp_resource "
        '{"server": "notes", "uri": "colour://ultraviolet", "offset": 10}]'
    )
    body = sent.split("\n\n", 1)[1]
    assert body == f'<resource server="notes" uri="colour://ultraviolet">\n{cut}\n</resource>'
    # The tool reads on from there, and says where the part starts.
    read_tool = ReadMcpResourceTool(pool)
    whole = {"server": "notes", "uri": "colour://ultraviolet"}
    assert (await read_tool.execute(whole)).content == cut
    middle = await read_tool.execute({**whole, "offset": 10})
    assert (middle.content, middle.is_error) == (
        "… [characters 10–20 of 22]\n ultraviol\n… [2 more characters cut, of 22; read on with "
        'read_mcp_resource {"server": "notes", "uri": "colour://ultraviolet", "offset": 20}]',
        False,
    )
    end = await read_tool.execute({**whole, "offset": 20})
    assert (end.content, end.is_error) == ("… [characters 20–22 of 22]\net", False)
    past = await read_tool.execute({**whole, "offset": 22})
    assert past.is_error and "offset 22 is past the end of colour://ultraviolet" in past.content
    bad = await read_tool.execute({**whole, "offset": -1})
    assert bad.is_error and "'offset'" in bad.content


async def test_mentions_complete_servers_then_uris_then_template_values(pool: McpPool) -> None:
    assert await complete_mention("@no", pool) == ["@notes:"]
    uris = await complete_mention("@notes:note://n", pool)
    assert uris == [f"@notes:note://n{i}" for i in range(1, 5)]
    assert await complete_mention("@notes:col", pool) == ["@notes:colour://"]
    assert await complete_mention("@notes:colour://g", pool) == ["@notes:colour://green"]
    assert await complete_mention("@ghost:x", pool) == []
