"""Tool search: the mode decision, the ranking, and the agent loop over 500 tool definitions."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from cat_code.agent.loop import Agent
from cat_code.agent.providers.base import Message, ModelResponse, UserMessage
from cat_code.agent.providers.fake import ScriptedProvider, reply, use_tools
from cat_code.agent.tool_search import (
    DEFAULT_WINDOW,
    ENV_VAR,
    SEARCH_TOOL_NAME,
    FoundTools,
    Mode,
    SearchDecision,
    ToolSearch,
    context_window,
    definition_json,
    estimate_tokens,
    mode_from_env,
)
from cat_code.host.config.load import load_config
from cat_code.host.servers.pool import McpPool
from cat_code.tools.base import ProgressCallback, Tool, ToolOwner, ToolResult
from cat_code.tools.builtin import builtin_tools
from cat_code.tools.registry import ToolRegistry

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))
from catalog_server import catalog

CATALOG_SERVER = Path(__file__).resolve().parents[1] / "servers" / "catalog_server.py"
ECHO_SERVER = Path(__file__).resolve().parents[2] / "examples" / "echo_server.py"

BUILTINS = [t.name for t in builtin_tools(Path.cwd())]
CLAUDE = "anthropic:claude-sonnet-5-5"


class RemoteTool(Tool):
    """An MCP-like tool in memory: owner ``mcp:<server>``, answers with its name and input."""

    def __init__(self, server: str, wire: dict[str, Any], *, always_load: bool = False) -> None:
        self.name = f"mcp__{server}__{wire['name']}"
        self.description = wire["description"]
        self.input_schema = wire["inputSchema"]
        self.owner = ToolOwner(server)
        self.always_load = always_load
        self.read_only = True  # runs without asking: permissions are not under test here
        self.calls: list[dict[str, Any]] = []

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        self.calls.append(arguments)
        return ToolResult(f"{self.name} done: {json.dumps(arguments, sort_keys=True)}")


def five_hundred() -> list[RemoteTool]:
    """The catalog split over two servers, as the e2e test's real servers split it."""
    return [RemoteTool("biz" if i < 250 else "ops", w) for i, w in enumerate(catalog())]


def pinned() -> RemoteTool:
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    wire = {"name": "echo", "description": "Echo back the input text", "inputSchema": schema}
    return RemoteTool("pinned", wire, always_load=True)


def registry_with(*tools: Tool) -> ToolRegistry:
    return ToolRegistry([*builtin_tools(Path.cwd()), *tools])


@pytest.fixture(autouse=True)
def _auto_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)


# -- the mode ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "mode"),
    [("", Mode.AUTO), ("auto", Mode.AUTO), ("on", Mode.ON), (" OFF ", Mode.OFF)],
)
def test_the_mode_comes_from_the_environment(value: str, mode: Mode) -> None:
    assert mode_from_env({ENV_VAR: value}) is mode
    assert mode_from_env({}) is Mode.AUTO


def test_a_bad_mode_warns_once_naming_the_variable_and_falls_back_to_auto(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        assert mode_from_env({ENV_VAR: "yes"}) is Mode.AUTO
    [record] = caplog.records
    assert record.getMessage() == "CAT_CODE_TOOL_SEARCH='yes' is not auto, on or off; using auto"


def test_context_windows_are_estimated_per_provider_and_model() -> None:
    assert context_window("anthropic:claude-sonnet-5-5") == 200_000
    assert context_window("openai:gpt-4o-mini") == 128_000
    assert context_window("openai:gpt-4.1") == 1_000_000
    assert context_window("openai:gpt-5.5") == 400_000
    # A local model behind an OpenAI-compatible server, or anything unknown.
    assert context_window("openai:qwen2.5-coder:7b") == DEFAULT_WINDOW
    assert context_window("fake:scripted") == DEFAULT_WINDOW


def definition_tokens(tools: list[Tool]) -> int:
    """What a request spends on these tools' definitions, as search estimates it."""
    return sum(estimate_tokens(definition_json(tool)) for tool in tools)


def test_auto_turns_search_on_only_past_ten_percent_of_the_window() -> None:
    tools = five_hundred()
    tokens = definition_tokens(tools)
    assert tokens > 20_000  # the catalog is big enough to matter on a 200k window
    big = ToolSearch(registry_with(*tools), CLAUDE).decide()
    assert big == SearchDecision(Mode.AUTO, True, tokens, 500, 200_000, 20_000)
    assert str(big) == (
        f"tool search: on (auto: MCP tool definitions ≈ {tokens:,} tokens > 10% of 200,000)"
    )
    few = tools[:10]
    small = ToolSearch(registry_with(*few), CLAUDE).decide()
    assert not small.on and small.tokens == definition_tokens(few)
    assert str(small).startswith("tool search: off (auto: MCP tool definitions ≈ ")
    assert str(small).endswith(" tokens ≤ 10% of 200,000)")


def test_the_environment_forces_the_mode_and_says_so() -> None:
    on = ToolSearch(registry_with(*five_hundred()[:3]), CLAUDE, mode=Mode.ON).decide()
    assert on.on and str(on) == "tool search: on (CAT_CODE_TOOL_SEARCH=on)"
    off = ToolSearch(registry_with(*five_hundred()), CLAUDE, mode=Mode.OFF).decide()
    assert not off.on and str(off) == "tool search: off (CAT_CODE_TOOL_SEARCH=off)"


def test_built_in_and_always_loaded_tools_neither_count_nor_get_deferred() -> None:
    search = ToolSearch(registry_with(pinned()), CLAUDE, mode=Mode.ON)
    assert search.decide().count == 0 and search.decide().tokens == 0
    # Nothing to search: no search tool, every tool as it is.
    assert [t.name for t in search.tools_for_request([])] == [*BUILTINS, "mcp__pinned__echo"]
    assert search.status([]) == (
        "tool search: on (CAT_CODE_TOOL_SEARCH=on)\n  no MCP tools to defer yet: every tool is sent"
    )


def test_the_decision_follows_tools_as_they_come_and_go() -> None:
    registry = registry_with()
    search = ToolSearch(registry, CLAUDE)
    assert not search.decide().on
    tools = five_hundred()
    for tool in tools:
        registry.register(tool)
    assert search.decide().on
    for tool in tools[20:]:
        registry.unregister(tool.name)
    assert not search.decide().on


# -- ranking ---------------------------------------------------------------------------------


def found(result: ToolResult) -> tuple[str, ...]:
    assert isinstance(result.raw, FoundTools)
    return result.raw.names


@pytest.fixture
def search() -> ToolSearch:
    return ToolSearch(registry_with(*five_hundred(), pinned()), CLAUDE)


def test_words_of_the_name_rank_first_and_plurals_still_match(search: ToolSearch) -> None:
    assert found(search.run_query("export expenses", 5))[0] == "mcp__biz__export_expense"
    assert found(search.run_query("rollback deployment", 3)) == (
        "mcp__ops__archive_deployment",
        "mcp__ops__create_deployment",
        "mcp__ops__delete_deployment",
    )
    assert found(search.run_query("Delete the pull requests", 1)) == (
        "mcp__ops__delete_pull_request",
    )
    assert found(search.run_query("get invoice", 1)) == ("mcp__biz__get_invoice",)
    assert found(search.run_query("validating releases", 1)) == ("mcp__ops__validate_release",)


def test_descriptions_are_searched_when_the_name_does_not_say_it(search: ToolSearch) -> None:
    # "kubernetes" and "reimbursed" only appear in descriptions.
    assert all("cluster" in name for name in found(search.run_query("kubernetes", 10)))
    assert found(search.run_query("reimbursed", 1)) == ("mcp__biz__archive_expense",)


def test_a_result_carries_full_definitions_best_first_up_to_the_limit(
    search: ToolSearch,
) -> None:
    result = search.run_query("invoice", 2)
    headline, _, body = result.content.partition("\n")
    assert headline == (
        "2 tool(s) matched 'invoice' (showing the best 2 of 10). You can call them now; "
        "their definitions:"
    )
    definitions = json.loads(body)
    assert [d["name"] for d in definitions] == list(found(result))
    assert definitions[0]["input_schema"]["required"] == ["id"]
    assert definitions[0]["description"].startswith("Archive a invoice so it is hidden")
    assert not result.is_error


def test_required_words_and_exact_selection(search: ToolSearch) -> None:
    names = found(search.run_query("+ops +backup restore", 5))
    assert names[0] == "mcp__ops__restore_backup"
    assert all(name.startswith("mcp__ops__") and "backup" in name for name in names)
    selected = search.run_query("select:mcp__ops__get_alert, get_invoice, nope", 5)
    assert found(selected) == ("mcp__ops__get_alert", "mcp__biz__get_invoice")
    assert selected.content.startswith("2 tool(s) selected; no tool named nope.")


def test_always_loaded_tools_are_not_searched_and_no_match_is_said_plainly(
    search: ToolSearch,
) -> None:
    nothing = search.run_query("echo", 5)
    assert found(nothing) == () and not nothing.is_error
    assert nothing.content.startswith("No tool matched 'echo' among 500 tools.")


async def test_bad_search_arguments_are_errors_the_model_reads(search: ToolSearch) -> None:
    tool = search.search_tool
    empty = await tool.execute({"query": "  "})
    assert empty.is_error and "non-empty 'query'" in empty.content
    bad_limit = await tool.execute({"query": "invoice", "limit": 0})
    assert bad_limit.is_error and "'limit' must be a whole number from 1 to 50" in bad_limit.content
    capped = await tool.execute({"query": "archive", "limit": 1000})
    assert len(found(capped)) == 50


# -- the agent loop over 500 definitions --------------------------------------------------


def last_result(messages: list[Message]) -> ToolResult:
    last = messages[-1]
    assert isinstance(last, UserMessage)
    [result] = last.tool_results
    return result


async def test_the_model_searches_then_calls_a_found_tool_across_500_definitions() -> None:
    tools = five_hundred()
    registry = registry_with(*tools, pinned())
    chosen: list[str] = []

    def pick_the_best(messages: list[Message]) -> ModelResponse:
        result = last_result(messages)
        assert not result.is_error, result.content
        definitions = json.loads(result.content.partition("\n")[2])
        chosen.append(definitions[0]["name"])
        return use_tools((chosen[0], {"format": "csv", "status": "all"}))

    def finish(messages: list[Message]) -> ModelResponse:
        result = last_result(messages)
        assert not result.is_error
        return reply(result.content)

    provider = ScriptedProvider(
        [
            use_tools((SEARCH_TOOL_NAME, {"query": "export expenses to csv", "limit": 3})),
            pick_the_best,
            finish,
            reply("ok"),  # a second turn of the same conversation
            reply("cleared"),  # after /clear
        ]
    )
    agent = Agent(provider, registry, tool_search=ToolSearch(registry, CLAUDE))

    outcome = await agent.run("export all expenses as CSV")

    assert outcome.status == "done"
    assert outcome.text == 'mcp__biz__export_expense done: {"format": "csv", "status": "all"}'
    first, second, third = provider.calls
    # First request: built-ins, search_tools and the always-loaded tool; none of the 500.
    assert first.tools == [*BUILTINS, "mcp__pinned__echo", SEARCH_TOOL_NAME]
    # Then the three tools found ride along on every request of the conversation.
    found_three = ["mcp__biz__export_budget", "mcp__biz__export_expense"]
    assert chosen == ["mcp__biz__export_expense"]
    assert second.tools[: len(first.tools)] == first.tools
    assert len(second.tools) == len(first.tools) + 3
    assert set(found_three) <= set(second.tools[len(first.tools) :])
    assert third.tools == second.tools
    assert next(t for t in tools if t.name == chosen[0]).calls == [
        {"format": "csv", "status": "all"}
    ]
    # The search result is the only big text: no request carried 500 definitions.
    assert all(len(call.tools) < 20 for call in provider.calls)

    await agent.run("and again")
    assert provider.calls[3].tools == second.tools

    agent.clear()
    await agent.run("new topic")
    assert provider.calls[4].tools == first.tools


async def test_a_deferred_tool_called_by_its_exact_name_runs_and_is_loaded_after() -> None:
    tools = five_hundred()
    registry = registry_with(*tools)
    provider = ScriptedProvider(
        [use_tools(("mcp__ops__get_incident", {"id": "INC-7"})), reply("done")]
    )
    agent = Agent(provider, registry, tool_search=ToolSearch(registry, CLAUDE))

    outcome = await agent.run("what is INC-7?")

    assert outcome.status == "done"
    assert next(t for t in tools if t.name == "mcp__ops__get_incident").calls == [{"id": "INC-7"}]
    first, second = provider.calls
    assert "mcp__ops__get_incident" not in first.tools
    assert second.tools == [*first.tools, "mcp__ops__get_incident"]


async def test_search_tools_is_an_unknown_tool_while_search_is_off() -> None:
    registry = registry_with(*five_hundred()[:5])
    provider = ScriptedProvider([use_tools((SEARCH_TOOL_NAME, {"query": "x"})), reply("ok")])
    agent = Agent(provider, registry, tool_search=ToolSearch(registry, CLAUDE))

    await agent.run("hi")

    assert provider.calls[0].tools == registry.names()
    result = last_result(provider.calls[1].messages)
    assert result.is_error and result.content.startswith("Error: unknown tool 'search_tools'")


async def test_the_agent_reads_the_mode_from_the_environment_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_VAR, "off")
    registry = registry_with(*five_hundred())
    provider = ScriptedProvider([reply("ok")])
    agent = Agent(provider, registry)
    await agent.run("hi")
    assert len(provider.calls[0].tools) == len(BUILTINS) + 500
    assert str(agent.tool_search.decide()) == "tool search: off (CAT_CODE_TOOL_SEARCH=off)"


async def test_an_unknown_tool_while_search_is_on_lists_what_was_sent_not_every_tool() -> None:
    registry = registry_with(*five_hundred())
    provider = ScriptedProvider([use_tools(("mcp__ops__get_incidnet", {})), reply("ok")])
    agent = Agent(provider, registry, tool_search=ToolSearch(registry, CLAUDE))

    await agent.run("hi")

    result = last_result(provider.calls[1].messages)
    assert result.is_error and result.content == (
        "Error: unknown tool 'mcp__ops__get_incidnet'. Available tools: "
        f"{', '.join(BUILTINS)}, search_tools"
    )


def test_once_every_deferred_tool_was_found_search_tools_is_no_longer_sent() -> None:
    tools = five_hundred()[:3]
    registry = registry_with(*tools)
    search = ToolSearch(registry, CLAUDE, mode=Mode.ON)
    assert search.tools_for_request([])[-1] is search.search_tool
    select = use_tools((SEARCH_TOOL_NAME, {"query": "select:x"})).message
    found_all = UserMessage(tool_results=[ToolResult("", raw=FoundTools(tuple(registry.names())))])
    sent = search.tools_for_request([select, found_all])
    assert [t.name for t in sent] == registry.names()


async def test_the_pool_marks_always_load_servers_and_search_never_defers_their_tools(
    tmp_path: Path,
) -> None:
    config = tmp_path / "mcp.json"
    servers = {
        "pinned": {"command": sys.executable, "args": [str(ECHO_SERVER)], "alwaysLoad": True},
        "ops": {"command": sys.executable, "args": [str(CATALOG_SERVER), "250", "20"]},
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    async with McpPool(load_config([config])) as pool:
        await pool.connect_all()
        registry = registry_with()
        pool.register_into(registry)
        search = ToolSearch(registry, CLAUDE, mode=Mode.ON)
        sent = [t.name for t in search.tools_for_request([])]
    assert all(t.always_load for t in pool.tools("pinned"))
    assert not any(t.always_load for t in pool.tools("ops")) and len(pool.tools("ops")) == 20
    assert sent == [*BUILTINS, *(t.name for t in pool.tools("pinned")), SEARCH_TOOL_NAME]
