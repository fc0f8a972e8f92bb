"""Which hooks a matcher covers: names, ``A|B``, regular expressions, Claude Code's names."""

from __future__ import annotations

import pytest

from cat_code.agent.hooks import matches


@pytest.mark.parametrize("matcher", ["", "*", "  "])
def test_an_empty_or_star_matcher_covers_every_tool(matcher: str) -> None:
    assert matches(matcher, "shell")
    assert matches(matcher, "mcp__echo__echo")


def test_a_name_matches_exactly_and_not_as_a_prefix() -> None:
    assert matches("read_file", "read_file")
    assert not matches("read", "read_file")
    assert not matches("mcp__echo", "mcp__echo__echo")


def test_names_joined_by_a_bar_match_any_of_them() -> None:
    assert matches("write_file|edit_file", "edit_file")
    assert not matches("write_file|edit_file", "shell")


def test_a_regular_expression_must_match_the_whole_mcp_tool_name() -> None:
    assert matches("mcp__echo__.*", "mcp__echo__echo")
    assert matches("mcp__.*__ec.o", "mcp__echo__echo")
    assert not matches("mcp__echo__.*", "mcp__echoes__echo")
    assert not matches("ec.o", "mcp__echo__echo")


def test_claude_code_names_cover_the_matching_built_in_tools() -> None:
    assert matches("Bash", "shell")
    assert matches("Edit|Write", "write_file")
    assert matches("Edit|MultiEdit", "edit_file")
    assert not matches("Bash", "mcp__x__Bash2")


def test_an_invalid_expression_matches_nothing() -> None:
    assert not matches("(unclosed", "shell")


def test_an_event_without_a_subject_runs_every_hook_whatever_the_matcher() -> None:
    assert matches("shell", None)
