"""Slash commands as one pure function: a line in, an action out."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from cat_code.agent.tool_search import Mode, ToolSearch, status_without_model
from cat_code.host.config.load import load_config
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.server import ServerStatus
from cat_code.host.status import format_status, format_tools
from cat_code.repl.commands import (
    CallTool,
    ClearConversation,
    CommandContext,
    Exit,
    Login,
    Logout,
    Show,
    complete,
    handle_command,
    help_text,
    is_command,
)
from cat_code.tools.builtin import builtin_tools
from cat_code.tools.registry import ToolRegistry

ECHO_SERVER = Path(__file__).resolve().parents[2] / "examples" / "echo_server.py"


@pytest.fixture
async def pool(tmp_path: Path) -> AsyncIterator[McpPool]:
    path = tmp_path / "mcp.json"
    servers = {
        "echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]},
        "broken": {"command": str(tmp_path / "no-such-server")},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    async with McpPool(load_config([path])) as connected:
        await connected.connect_all()
        yield connected


@pytest.fixture
def ctx(pool: McpPool) -> CommandContext:
    registry = ToolRegistry(builtin_tools())
    pool.register_into(registry)
    return CommandContext(registry=registry, pool=pool, model="anthropic:m", statuses=pool.status)


def shown(action: Any) -> str:
    assert isinstance(action, Show), action
    return action.text


def test_only_lines_starting_with_a_slash_are_commands() -> None:
    assert is_command("/mcp") and is_command("  /help")
    assert not is_command("what does /usr/bin hold?")


def test_mcp_prints_exactly_the_status_block_of_mcp_list(ctx: CommandContext) -> None:
    assert shown(handle_command("/mcp", ctx)) == format_status(ctx.statuses(), in_repl=True)
    text = shown(handle_command("/mcp", ctx))
    assert "echo" in text and "CONNECTED" in text and "broken" in text and "FAILED" in text


def test_mcp_tools_lists_every_mcp_tool_or_one_servers(ctx: CommandContext) -> None:
    assert ctx.pool is not None
    assert shown(handle_command("/mcp tools", ctx)) == format_tools(ctx.pool)
    assert "mcp__echo__echo" in shown(handle_command("/mcp tools echo", ctx))
    error = handle_command("/mcp tools nope", ctx)
    assert isinstance(error, Show) and error.kind == "error" and "echo" in error.text


def test_mcp_call_parses_the_tool_and_its_json_arguments(ctx: CommandContext) -> None:
    assert handle_command('/mcp call mcp__echo__echo {"text": "hi there"}', ctx) == CallTool(
        "mcp__echo__echo", {"text": "hi there"}
    )
    assert handle_command("/mcp call mcp__echo__fail", ctx) == CallTool("mcp__echo__fail", {})


def test_mcp_call_accepts_a_short_tool_name_when_it_is_unambiguous(ctx: CommandContext) -> None:
    assert handle_command('/mcp call echo {"text": "x"}', ctx) == CallTool(
        "mcp__echo__echo", {"text": "x"}
    )


def test_mcp_call_names_the_json_fault_and_its_column_without_repeating_a_word(
    ctx: CommandContext,
) -> None:
    action = handle_command('/mcp call mcp__echo__echo {"text": "hi', ctx)
    assert isinstance(action, Show) and action.kind == "error"
    assert "(Unterminated string starting at: column 10)" in action.text
    assert "at at" not in action.text


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("/mcp call", "usage"),
        ("/mcp call mcp__echo__nope {}", "unknown tool"),
        ("/mcp call mcp__echo__echo {bad", "not valid"),
        ("/mcp call mcp__echo__echo [1, 2]", "JSON object"),
        ("/mcp frobnicate", "unknown /mcp subcommand"),
        ("/bogus", "unknown command /bogus — /help lists the commands"),
        ("/mpc", "unknown command /mpc — did you mean /mcp? /help lists the commands"),
    ],
)
def test_mistakes_are_error_lines_that_say_what_to_type(
    ctx: CommandContext, line: str, words: str
) -> None:
    action = handle_command(line, ctx)
    assert isinstance(action, Show) and action.kind == "error" and words in action.text


def test_tools_lists_built_in_and_mcp_tools_with_their_owner(ctx: CommandContext) -> None:
    text = shown(handle_command("/tools", ctx))
    assert "shell" in text and "builtin" in text
    assert "mcp__echo__echo" in text and "mcp:echo" in text
    ctx.width = 60
    assert all(len(line) <= 60 for line in shown(handle_command("/tools", ctx)).splitlines())


def test_tools_ends_with_whether_tool_search_is_on_and_why(ctx: CommandContext) -> None:
    search = ToolSearch(ctx.registry, "anthropic:claude-test")
    ctx.tool_search = lambda: search.status([])
    lines = shown(handle_command("/tools", ctx)).splitlines()
    assert lines[-1].startswith("tool search: off (auto: MCP tool definitions ≈ ")
    assert lines[-1].endswith(" tokens ≤ 10% of 200,000)")
    search.mode = Mode.ON
    assert shown(handle_command("/tools", ctx)).splitlines()[-2:] == [
        "tool search: on (CAT_CODE_TOOL_SEARCH=on)",
        "  6 MCP tool(s) are sent only once search_tools finds them; 0 found in this "
        "conversation (/clear forgets them)",
    ]


def test_help_exit_quit_and_clear(ctx: CommandContext) -> None:
    assert shown(handle_command("/help", ctx)) == help_text()
    assert "/mcp call" in help_text() and "Esc Enter" in help_text()
    assert handle_command("/exit", ctx) == Exit() == handle_command("/quit", ctx)
    assert handle_command("/clear", ctx) == ClearConversation()


def test_model_says_how_to_configure_one_when_there_is_none() -> None:
    ctx = CommandContext(registry=ToolRegistry(), model_problem="No model configured: set X.")
    text = shown(handle_command("/model", ctx))
    assert text.startswith("model: none") and "No model configured" in text
    assert "ANTHROPIC_API_KEY" in text and "OPENAI_BASE_URL" in text


def test_mcp_works_with_no_servers_configured() -> None:
    ctx = CommandContext(registry=ToolRegistry(), statuses=list[ServerStatus])
    assert "none configured" in shown(handle_command("/mcp", ctx))
    assert shown(handle_command("/mcp tools", ctx)) == "MCP tools: none"


async def test_mcp_with_no_servers_names_the_config_files_read(tmp_path: Path) -> None:
    path = tmp_path / "team.json"
    path.write_text('{"mcpServers": {}}')
    async with McpPool(load_config([path])) as pool:
        ctx = CommandContext(registry=ToolRegistry(), pool=pool, statuses=pool.status)
        assert f"add servers to {path}, in the" in shown(handle_command("/mcp", ctx))
    path.write_text('{"mcpServers": ')
    async with McpPool(load_config([path])) as pool:
        ctx = CommandContext(registry=ToolRegistry(), pool=pool, statuses=pool.status)
        assert shown(handle_command("/mcp", ctx)) == (
            f"MCP servers: none loaded — could not read {path} (see the warning above)"
        )


def test_completion_of_commands_subcommands_servers_and_tools(ctx: CommandContext) -> None:
    assert complete("/m", ctx) == ["/mcp", "/memory", "/model"]
    assert complete("/mcp t", ctx) == ["tools"]
    assert complete("/mcp tools e", ctx) == ["echo"]
    assert complete("/mcp call mcp__echo__w", ctx) == ["mcp__echo__word_count"]
    assert complete("hello", ctx) == []


def test_mcp_login_and_logout_name_a_remote_server_and_complete_its_name(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "linear": {"url": "https://mcp.linear.app/mcp"},
                    "local": {"command": "x"},
                    "mine": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer t"}},
                }
            }
        )
    )
    pool = McpPool(load_config([path]))
    ctx = CommandContext(registry=ToolRegistry(), pool=pool, statuses=pool.status)
    assert handle_command("/mcp login linear", ctx) == Login("linear")
    assert handle_command("/mcp logout linear", ctx) == Logout("linear")
    assert "usage: /mcp login SERVER" in shown(handle_command("/mcp login", ctx))
    assert "no MCP server named 'nope'" in shown(handle_command("/mcp login nope", ctx))
    assert "stdio server" in shown(handle_command("/mcp login local", ctx))
    assert "own Authorization header" in shown(handle_command("/mcp logout mine", ctx))
    assert complete("/mcp lo", ctx) == ["login", "logout"]
    assert complete("/mcp login ", ctx) == ["linear", "mine"]
    assert complete("/mcp logout l", ctx) == ["linear"]
    assert "/mcp login SERVER" in help_text()


def test_add_dir_takes_one_path_quoted_like_a_shell_word(tmp_path: Path) -> None:
    from cat_code.repl.commands import AddDir

    spaced = tmp_path / "my docs"
    spaced.mkdir()
    ctx = CommandContext(registry=ToolRegistry([]))
    assert handle_command(f'/add-dir "{tmp_path}"', ctx) == AddDir(tmp_path.resolve())
    assert handle_command(f"/add-dir '{spaced}'", ctx) == AddDir(spaced.resolve())
    assert handle_command(f"/add-dir {tmp_path}/my\\ docs", ctx) == AddDir(spaced.resolve())
    assert handle_command('/add-dir ""', ctx) == Show("/add-dir: no directory given", "error")
    two = handle_command(f"/add-dir {tmp_path} {tmp_path}", ctx)
    assert two == Show(
        '/add-dir takes one directory (2 given); quote a path with spaces: /add-dir "my dir"',
        "error",
    )
    unbalanced = handle_command(f'/add-dir "{tmp_path}', ctx)
    assert isinstance(unbalanced, Show) and unbalanced.kind == "error"
    assert unbalanced.text == f'/add-dir: no closing quotation in "{tmp_path}'


def test_add_dir_and_permissions_are_checked_before_the_app_acts(tmp_path: Path) -> None:
    from cat_code.agent.permissions import RuleBook
    from cat_code.repl.commands import AddDir, RemoveRule

    ctx = CommandContext(registry=ToolRegistry([]))
    assert handle_command(f"/add-dir {tmp_path}", ctx) == AddDir(tmp_path.resolve())
    missing = handle_command(f"/add-dir {tmp_path / 'gone'}", ctx)
    assert isinstance(missing, Show) and missing.kind == "error"
    assert missing.text == f"/add-dir: {tmp_path / 'gone'}: no such directory"
    assert handle_command("/add-dir", ctx) == Show("usage: /add-dir DIR", "error")

    user = tmp_path / "settings.json"
    user.write_text('{"permissions": {"allow": ["mcp__echo__*"]}}')
    ctx.rules = RuleBook(user, None)
    shown = handle_command("/permissions", ctx)
    assert isinstance(shown, Show) and f"1. allow  mcp__echo__*  {user}" in shown.text
    assert handle_command("/permissions remove 1", ctx) == RemoveRule("1")
    assert complete("/permissions remove mcp", ctx) == ["mcp__echo__*"]
    assert complete("/perm", ctx) == ["/permissions"]
    assert f"read from {user} (yours); no project settings file found" in shown.text


def test_permissions_names_only_the_settings_files_that_exist(tmp_path: Path) -> None:
    from cat_code.agent.permissions import RuleBook

    user, project = tmp_path / "home" / "settings.json", tmp_path / ".cat-code" / "settings.json"
    ctx = CommandContext(registry=ToolRegistry([]), rules=RuleBook(user, project))
    shown = handle_command("/permissions", ctx)
    assert isinstance(shown, Show)
    assert shown.text.startswith("permission rules: none\n")
    assert (
        f"your rules are saved to {user} (not created yet); no project settings file found"
        in shown.text
    )
    assert "read from" not in shown.text and str(project) not in shown.text
    project.parent.mkdir()
    project.write_text('{"permissions": {"deny": ["shell"]}}')
    shown = handle_command("/permissions", ctx)
    assert isinstance(shown, Show)
    assert (
        f"read from {project} (the project's); your rules are saved to {user} (not created yet)"
        in shown.text
    )


def test_without_a_model_tools_says_the_search_mode_and_that_auto_waits_for_one() -> None:
    assert status_without_model({}) == "tool search: auto (decided once a model is chosen)"
    assert status_without_model({"CAT_CODE_TOOL_SEARCH": "on"}) == (
        "tool search: on (CAT_CODE_TOOL_SEARCH=on)"
    )
    assert status_without_model({"CAT_CODE_TOOL_SEARCH": "OFF"}) == (
        "tool search: off (CAT_CODE_TOOL_SEARCH=off)"
    )


def test_model_with_a_name_switches_and_memory_lists_the_loaded_files(tmp_path: Path) -> None:
    from cat_code.agent.memory import MemoryFile
    from cat_code.repl.commands import SwitchModel

    ctx = CommandContext(registry=ToolRegistry())
    assert handle_command("/model openai:gpt-x", ctx) == SwitchModel("openai:gpt-x")
    assert shown(handle_command("/memory", ctx)).startswith("memory files: none")
    ctx.memory = [MemoryFile(tmp_path / "AGENTS.md", "be kind")]
    assert f"{tmp_path / 'AGENTS.md'}  7 characters" in shown(handle_command("/memory", ctx))


def test_tasks_shows_the_task_list_the_session_gives() -> None:
    ctx = CommandContext(registry=ToolRegistry(), tasks=lambda: "tasks: 1 of 2 done")
    assert handle_command("/tasks", ctx) == Show("tasks: 1 of 2 done")
    assert "/tasks" in help_text()
