"""The sentences every front end says about a server come from one place, host/status."""

from __future__ import annotations

import pytest

from cat_code.host.servers.server import ServerState, ServerStatus
from cat_code.host.status import tools_registered, unavailable_line, unusable_line


def status(state: ServerState, error: str | None = None) -> ServerStatus:
    return ServerStatus(
        name="docs", state=state, tools=0, transport="http", target="x", error=error
    )


@pytest.mark.parametrize(
    ("state", "shell", "repl"),
    [
        (ServerState.DISABLED, "is disabled (cat-code mcp enable docs)",
         "is disabled (/mcp enable docs)"),
        (ServerState.NEEDS_LOGIN, "needs a sign-in (cat-code mcp login docs)",
         "needs a sign-in (/mcp login docs)"),
        (ServerState.REJECTED, "is a project server you rejected (cat-code mcp approve docs)",
         "is a project server you rejected (/mcp approve docs)"),
    ],
)  # fmt: skip
def test_an_unavailable_server_is_named_with_the_way_out_of_the_front_end_asking(
    state: ServerState, shell: str, repl: str
) -> None:
    assert unavailable_line(status(state)) == f"MCP server 'docs' {shell}"
    assert unavailable_line(status(state), in_repl=True) == f"MCP server 'docs' {repl}"


def test_a_failed_server_says_why_and_a_connected_one_says_nothing() -> None:
    assert unavailable_line(status(ServerState.FAILED, "boom")) == "MCP server 'docs' failed: boom"
    assert unavailable_line(status(ServerState.CONNECTED)) is None


def test_the_tool_count_and_an_unusable_entry_have_one_wording() -> None:
    assert tools_registered(3) == "3 tool(s) registered"
    assert unusable_line("docs", "bad url") == "MCP server 'docs' cannot be used: bad url"
