"""The ⏺ line shared by the REPL and one-shot stderr."""

from __future__ import annotations

from cat_code.agent.transcript import compact_json, result_lines, tool_line


def test_a_call_reads_as_tool_compact_input_arrow_result() -> None:
    assert tool_line("mcp__echo__echo", {"text": "你好"}, "你好") == (
        '⏺ mcp__echo__echo {"text":"你好"} → 你好'
    )


def test_a_long_result_shows_its_first_lines_and_how_many_were_cut() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 11))
    assert tool_line("shell", {"command": "seq"}, text) == (
        '⏺ shell {"command":"seq"} → line 1\n  line 2\n  line 3\n  … +7 lines'
    )


def test_an_empty_result_says_so() -> None:
    assert tool_line("t", {}, "  \n") == "⏺ t {} → (no output)"


def test_long_inputs_and_lines_are_cut_with_an_ellipsis() -> None:
    assert compact_json({"text": "x" * 500}, limit=20) == '{"text":"xxxxxxxxxx…'
    assert result_lines("y" * 50, width=10) == ["yyyyyyyyy…"]
    line = tool_line("t", {}, "z" * 300, width=60)
    assert len(line) <= 60 and line.endswith("…")
