"""The system prompt names the working directory and carries server instructions, capped."""

from __future__ import annotations

from pathlib import Path

from cat_code.agent.system_prompt import MAX_INSTRUCTIONS_CHARS, build_system_prompt


def test_the_prompt_names_the_working_directory_and_the_mcp_naming() -> None:
    text = build_system_prompt(Path("/some/project"))
    assert "/some/project" in text and "mcp__<server>__<tool>" in text


def test_server_instructions_are_appended_and_cut_when_huge() -> None:
    text = build_system_prompt(Path("/p"), {"docs": "Use search first.", "big": "x" * 10_000})
    assert "Instructions from MCP server 'docs':\nUse search first." in text
    assert "x" * MAX_INSTRUCTIONS_CHARS + " …[cut]" in text
    assert "x" * (MAX_INSTRUCTIONS_CHARS + 1) not in text
