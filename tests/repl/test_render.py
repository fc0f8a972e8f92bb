"""The REPL's drawing: ⏺ entries, Markdown answers, the spinner text."""

from __future__ import annotations

import io

from rich.console import Console

from cat_code.agent.providers.base import ModelError, ToolCall
from cat_code.repl.render import TurnView, tool_entry
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
