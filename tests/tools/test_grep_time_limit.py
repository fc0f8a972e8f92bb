"""Red-team finding 9 (review of issue 24): the Python grep search has a time limit, so a
pattern that backtracks catastrophically is a tool error, not a search that never ends."""

from __future__ import annotations

import asyncio
from pathlib import Path

from cat_code.tools.builtin import FileLedger, builtin_tools
from cat_code.tools.builtin.grep import GrepTool


def python_grep(root: Path, seconds: float) -> GrepTool:
    [grep] = [t for t in builtin_tools(root, ledger=FileLedger(), ripgrep=None) if t.name == "grep"]
    assert isinstance(grep, GrepTool)
    grep.search_seconds = seconds
    return grep


async def test_finding_9_a_catastrophically_backtracking_pattern_stops_with_a_tool_error(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("a" * 40 + "!\n")
    grep = python_grep(tmp_path, seconds=0.2)
    async with asyncio.timeout(30):  # unbounded before: (a|a)+$ on 40 a's runs for years
        result = await grep.execute({"pattern": "(a|a)+$"})
    assert result.is_error and "took too long" in result.content


async def test_finding_9_ordinary_patterns_still_match_under_the_time_limit(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("a" * 34 + "!\nneedle here\n")
    grep = python_grep(tmp_path, seconds=20)
    async with asyncio.timeout(60):
        nested = await grep.execute({"pattern": "(a+)+$"})
        found = await grep.execute({"pattern": r"ne+dle\b", "output": "content"})
        bad = await grep.execute({"pattern": "(unclosed"})
    assert not nested.is_error and "a.txt" not in nested.content
    assert not found.is_error and "a.txt:2:needle here" in found.content
    assert bad.is_error and "not a valid regex" in bad.content
