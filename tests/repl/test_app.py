"""The REPL's pure parts: the MCP summary line and the permission answer."""

from __future__ import annotations

import pytest

from cat_code.agent.permissions import Answer
from cat_code.host.servers.server import ServerState, ServerStatus
from cat_code.repl.app import mcp_summary, parse_permission


def status(name: str, state: str, tools: int = 0) -> ServerStatus:
    return ServerStatus(
        name=name, state=ServerState(state), tools=tools, transport="stdio", target="x"
    )


def test_the_summary_counts_connected_servers_and_their_tools() -> None:
    line = mcp_summary([status("a", "CONNECTED", 2), status("b", "CONNECTED", 3)])
    assert line == "MCP: 2 server(s), 5 tool(s) registered"


def test_the_summary_points_at_mcp_when_a_server_failed() -> None:
    line = mcp_summary(
        [status("a", "CONNECTED", 2), status("b", "FAILED"), status("c", "DISABLED")]
    )
    assert line == "MCP: 1 server(s), 2 tool(s) registered, 1 failed — see /mcp"


def test_the_summary_counts_servers_that_need_a_sign_in_and_says_how() -> None:
    line = mcp_summary([status("a", "CONNECTED", 2), status("linear", "NEEDS_LOGIN")])
    assert line == "MCP: 1 server(s), 2 tool(s) registered, 1 needs login — /mcp login linear"
    two = mcp_summary(
        [status("b", "FAILED"), status("x", "NEEDS_LOGIN"), status("y", "NEEDS_LOGIN")]
    )
    assert two == (
        "MCP: 0 server(s), 0 tool(s) registered, 1 failed — see /mcp, "
        "2 need login — /mcp login NAME (x, y)"
    )


def test_the_summary_counts_project_servers_waiting_for_approval_and_not_rejected_ones() -> None:
    line = mcp_summary([status("docs", "NEEDS_APPROVAL"), status("old", "REJECTED")])
    assert line == (
        "MCP: 0 server(s), 0 tool(s) registered, 1 waits for approval — /mcp approve docs"
    )
    two = mcp_summary([status("a", "NEEDS_APPROVAL"), status("b", "NEEDS_APPROVAL")])
    assert two is not None and two.endswith("2 wait for approval — /mcp approve NAME (a, b)")


def test_no_summary_without_servers() -> None:
    assert mcp_summary([]) is None


@pytest.mark.parametrize(
    ("typed", "answer"),
    [("y", Answer.YES), ("", Answer.NO), ("n", Answer.NO), ("a", Answer.ALWAYS_TOOL),
     ("s", Answer.ALWAYS_SERVER), ("what", None)],
)  # fmt: skip
def test_permission_answers(typed: str, answer: Answer | None) -> None:
    assert parse_permission(typed, has_server=True) is answer


def test_always_for_server_is_not_an_answer_for_a_built_in_tool() -> None:
    assert parse_permission("s", has_server=False) is None
