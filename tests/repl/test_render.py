"""The REPL's drawing: ⏺ entries, Markdown answers, the spinner text."""

from __future__ import annotations

import io

from rich.console import Console

from cat_code.agent.providers.base import AssistantMessage, ModelError, ThinkingBlock, ToolCall
from cat_code.repl.render import TurnView, thinking_line, tool_entry
from cat_code.tools.base import ToolResult


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=80, color_system=None, force_terminal=False), out


def test_a_tool_entry_reads_as_the_transcript_line() -> None:
    entry = tool_entry("mcp__echo__echo", {"text": "你好"}, ToolResult("你好"), 80)
    assert entry.plain == '⏺ mcp__echo__echo {"text":"你好"} → 你好'
    failed = tool_entry("mcp__echo__fail", {}, ToolResult("nope", is_error=True), 80)
    assert failed.plain == "⏺ mcp__echo__fail {} → nope"
    assert any("red" in str(span.style) for span in failed.spans)


def test_the_view_prints_text_as_markdown_and_finished_calls_as_entries() -> None:
    con, out = console()
    view = TurnView(con)
    view.begin()
    call = ToolCall("t1", "mcp__echo__sleep", {"seconds": 2})
    view.model_started()
    view.model_finished()
    view.assistant_text("Sleeping **now**:\n\n- one", final=False)
    view.tool_started(call)
    view.tool_progress(call, 1, 2, "slept 1 s")
    assert "slept 1 s (1/2)" in view._text().plain
    assert view.running_calls() == ["mcp__echo__sleep"]
    view.tool_finished(call, ToolResult("slept 2 s"))
    view.retrying(ModelError("overloaded", "overloaded (529)"), 1.5, 1)
    view.end()
    text = out.getvalue()
    assert "Sleeping now:" in text and "• one" in text
    assert '⏺ mcp__echo__sleep {"seconds":2} → slept 2 s' in text
    assert "overloaded (529) — retrying in 1.5 s (attempt 1)" in text


def test_the_spinner_names_every_running_tool() -> None:
    con, _ = console()
    view = TurnView(con)
    view.begin("waiting for the MCP servers to connect…")
    assert view._text().plain.startswith("waiting for the MCP servers")
    view.model_started()
    assert view._text().plain.startswith("thinking…")
    view.tool_started(ToolCall("a", "one", {}))
    view.tool_started(ToolCall("b", "two", {}))
    assert view._text().plain.startswith("2 tools running: one, two")
    view.end()


ANSWER = (
    "Here is the plan:\n\n- read the file\n- fix the bug\n\n```python\nx = 1\n\ny = 2\n```\n"
    "Then **run** the tests.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nDone."
)


def test_a_streamed_answer_ends_on_screen_exactly_as_the_whole_answer_rendered_at_once() -> None:
    whole, whole_out = console()
    TurnView(whole).assistant_text(ANSWER, final=True)
    for size in (1, 5, 40):
        con, out = console()
        view = TurnView(con)
        view.begin()
        view.model_started()
        for i in range(0, len(ANSWER), size):
            view.assistant_delta(ANSWER[i : i + size])
        view.model_finished()
        view.assistant_text(ANSWER, final=True)
        view.end()
        assert out.getvalue() == whole_out.getvalue(), size


def test_complete_blocks_print_while_the_answer_streams_and_the_rest_shows_raw() -> None:
    con, out = console()
    view = TurnView(con)
    view.begin()
    view.model_started()
    view.assistant_delta("First **paragraph**.\n\n")
    assert out.getvalue() == ""  # an indented line could still continue it
    view.assistant_delta("Second one, still **going")
    assert out.getvalue().strip() == "First paragraph."
    pending = view.pending_text(80)
    assert pending is not None and pending.plain == "Second one, still **going"
    view.end()


def test_text_that_arrived_before_the_turn_was_cut_stays_on_screen() -> None:
    con, out = console()
    view = TurnView(con)
    view.begin()
    view.model_started()
    view.assistant_delta("Partial *answer*, cut")
    view.end()  # Ctrl-C: no assistant_text follows
    assert out.getvalue().strip() == "Partial answer, cut"
    assert view.pending_text(80) is None


def test_only_the_last_lines_of_a_long_block_show_in_the_live_area() -> None:
    con, _ = console()
    view = TurnView(con)
    view.model_started()
    view.assistant_delta("```\n" + "".join(f"line {n}\n" for n in range(100)))
    pending = view.pending_text(80)
    assert pending is not None
    assert pending.plain.splitlines()[-1] == "line 99" and "line 50" not in pending.plain


def test_thinking_shows_after_the_answer_as_one_dim_collapsed_line() -> None:
    con, out = console()
    view = TurnView(con)
    view.begin()
    thought = "First I add two and two. " * 20
    message = AssistantMessage(
        "It is **4**.",
        thinking=[ThinkingBlock("thinking", thought, "sig"), ThinkingBlock("redacted_thinking")],
    )
    view.assistant_message(message)
    view.assistant_text(message.text, final=True)
    view.end()
    lines = out.getvalue().splitlines()
    answer = next(i for i, line in enumerate(lines) if "It is 4." in line)
    [collapsed] = [line for line in lines if line.startswith("✻ thought")]
    assert lines.index(collapsed) > answer
    assert "(120 words, 1 redacted): First I add two and two." in collapsed
    assert len(collapsed) < 120  # collapsed: not the whole thought
    line = thinking_line(message.thinking)
    assert line is not None and "dim" in str(line.style)
