"""Glob matching in linear time (`_glob_match`) and the grep/glob tools' caps on work:
finding 14 of issue 24, and the matcher's own rules."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from cat_code.tools.base import Tool, ToolResult
from cat_code.tools.builtin import builtin_tools, grep
from cat_code.tools.builtin._glob_match import GlobError, compile_glob, git_glob_filter

STARS = "*a*a*a*a*a*a*b"


def tools(cwd: Path) -> dict[str, Tool]:
    return {t.name: t for t in builtin_tools(cwd, ripgrep=False)}


async def call(tool: Tool, **arguments: Any) -> ToolResult:
    async with asyncio.timeout(20):
        return await tool.execute(arguments)


@pytest.mark.timeout(10)  # a backtracking matcher takes ~18 s on the first name
async def test_finding_14_glob_with_many_stars_on_a_90_character_name_answers_promptly(
    tmp_path: Path,
) -> None:
    (tmp_path / ("a" * 90)).write_text("")
    (tmp_path / ("a" * 89 + "b")).write_text("")
    result = await call(tools(tmp_path)["glob"], pattern=STARS)
    assert not result.is_error
    assert result.content == "a" * 89 + "b"


@pytest.mark.timeout(10)
async def test_finding_14_grep_filtering_by_a_glob_with_many_stars_answers_promptly(
    tmp_path: Path,
) -> None:
    (tmp_path / ("a" * 90)).write_text("needle\n")
    (tmp_path / ("a" * 89 + "b")).write_text("needle\n")
    result = await call(tools(tmp_path)["grep"], pattern="needle", glob=STARS)
    assert result.content == "a" * 89 + "b"


async def test_finding_14_grep_context_beyond_the_cap_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("needle\n")
    result = await call(
        tools(tmp_path)["grep"], pattern="needle", output="content", context=1_000_000_000
    )
    assert result.is_error
    assert result.content == (
        f"Error: 'context' is at most {grep.MAX_CONTEXT} lines; read_file shows more"
    )
    at_cap = await call(
        tools(tmp_path)["grep"], pattern="needle", output="content", context=grep.MAX_CONTEXT
    )
    assert at_cap.content == "f.txt:1:needle"


@pytest.mark.parametrize(
    ("tool", "arguments", "said"),
    [
        ("glob", {"pattern": "[z-a]"}, "the range z-a in [z-a] is reversed"),
        ("grep", {"pattern": "x", "glob": "[z-a]"}, "the range z-a in [z-a] is reversed"),
        ("grep", {"pattern": "[z-a]"}, "the pattern is not a valid regex"),
        ("grep", {"pattern": "(unclosed"}, "the pattern is not a valid regex"),
        ("glob", {"pattern": "{a,b}" * 9}, "more than 256 {…} alternatives"),
    ],
)
async def test_finding_14_a_bad_pattern_is_a_tool_error_saying_what_is_wrong(
    tmp_path: Path, tool: str, arguments: dict[str, Any], said: str
) -> None:
    (tmp_path / "x.txt").write_text("x\n")
    result = await call(tools(tmp_path)[tool], **arguments)
    assert result.is_error and said in result.content
    assert "Traceback" not in result.content and "internal error" not in result.content


async def test_finding_14_the_python_search_stops_after_keeping_its_cap_of_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep, "MAX_KEPT_LINES", 10)
    for n in range(5):
        (tmp_path / f"f{n}.txt").write_text("hit\n" * 6)
    result = await call(tools(tmp_path)["grep"], pattern="hit", output="count")
    assert result.content.splitlines() == [
        "f0.txt:6",
        "f1.txt:6",
        "[The search stopped early: too many files or matching lines under this folder.]",
    ]


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/deep/a.py", True),
        ("**/*.py", "srca.py/x", False),
        ("*.py", "src/a.py", False),
        ("src/*.{py,txt}", "src/a.txt", True),
        ("src/*.{py,txt}", "src/a.md", False),
        ("{x,*}*", "/", False),  # an option's * and the next * never make a **
        ("a?c", "a/c", False),
        ("[!a]b", "/b", False),
        ("[a-c]x", "bx", True),
        ("**", "any/thing/at/all", True),
        ("src/**/x", "src/x", True),
        ("{unclosed", "{unclosed", True),
        ("[unclosed", "[unclosed", True),
    ],
)
def test_a_glob_matches_the_whole_path_by_its_rules(pattern: str, path: str, matches: bool) -> None:
    assert compile_glob(pattern).match(path) is matches


@pytest.mark.parametrize(
    ("glob", "path", "wanted"),
    [
        ("*.py", "deep/down/a.py", True),  # no "/": a name at any depth
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "lib/src/a.py", False),  # a "/": anchored at the folder searched
        ("/a.py", "a.py", True),
        ("build", "build/out/x.o", True),  # a folder above the file matches
        ("build/", "build", False),  # folders only
        ("build/", "build/x.o", True),
    ],
)
def test_grep_globs_follow_gits_rules(glob: str, path: str, wanted: bool) -> None:
    assert git_glob_filter(glob)(path) is wanted


def test_a_long_pattern_is_refused_not_matched() -> None:
    with pytest.raises(GlobError, match="longer than 1,000 characters"):
        compile_glob("*" * 1001)


@pytest.mark.timeout(10)  # pathspec's regex took 109 s on this one name
async def test_finding_14_a_gitignore_pattern_with_many_stars_is_skipped_not_matched_for_minutes(
    tmp_path: Path,
) -> None:
    (tmp_path / ".gitignore").write_text(STARS + "\n*.log\n")
    (tmp_path / ("a" * 90)).write_text("needle\n")
    (tmp_path / "x.log").write_text("needle\n")
    result = await call(tools(tmp_path)["grep"], pattern="needle")
    assert result.content == "a" * 90  # the runaway pattern skipped, the others applied
