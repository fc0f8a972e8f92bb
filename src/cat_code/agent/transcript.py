"""How a tool call reads in a transcript, the same in the REPL and on one-shot stderr.

``⏺ <tool> <compact JSON input> → <result>``: the input on one line (cut when long), the
result's first line after the arrow and at most a few more indented under it, then a
count of what was cut. Pure text functions only: colour is the REPL's business.
"""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger(__name__)

BULLET = "⏺"
ARROW = "→"
#: Result lines shown under a call; the full result went to the model, this is a glimpse.
RESULT_LINES = 3
#: Longest input JSON shown before it is cut.
INPUT_CHARS = 160
#: Longest result line shown when no terminal width is known.
LINE_CHARS = 200
INDENT = "  "


def compact_json(value: Any, limit: int = INPUT_CHARS) -> str:
    """``value`` as one line of JSON, non-ASCII kept readable, cut at ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return cut(text, limit)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(1, limit - 1)] + "…"


def call_head(name: str, arguments: Any) -> str:
    """``⏺ name {json}``: a call before its result is known."""
    return f"{BULLET} {name} {compact_json(arguments)}"


def result_lines(text: str, *, max_lines: int = RESULT_LINES, width: int = LINE_CHARS) -> list[str]:
    """The first lines of a result, each cut to ``width``, plus a "… +N lines" marker."""
    lines = text.rstrip().splitlines() or ["(no output)"]
    shown = [cut(line.rstrip(), width) for line in lines[:max_lines]]
    if len(lines) > max_lines:
        shown.append(f"… +{len(lines) - max_lines} lines")
    return shown


def tool_line(
    name: str,
    arguments: Any,
    result_text: str,
    *,
    max_lines: int = RESULT_LINES,
    width: int | None = None,
) -> str:
    """The whole transcript entry for a finished call; continuation lines are indented."""
    head = f"{call_head(name, arguments)} {ARROW} "
    room = LINE_CHARS if width is None else max(20, width - len(INDENT))
    lines = result_lines(result_text, max_lines=max_lines, width=room)
    first = cut(lines[0], max(20, room - len(head))) if width is not None else lines[0]
    return "\n".join([head + first, *(INDENT + line for line in lines[1:])])
