"""`safe_text`, `safe_line`, `safe_json`: control characters shown, never passed raw."""

from __future__ import annotations

import json

from cat_code.base.safe_text import safe_json, safe_line, safe_text


def test_escape_c1_del_and_a_lone_cr_are_shown_and_tab_newline_and_crlf_are_kept() -> None:
    text = "a\x1b[2Jb\x9bc\x7fd\x00e\rf\tg\nh\r\ni é"

    assert safe_text(text) == "a\\x1b[2Jb\\x9bc\\x7fd\\x00e\\rf\tg\nh\r\ni é"


def test_safe_text_twice_changes_nothing_more() -> None:
    once = safe_text("\x1b]0;title\x07\x9d")

    assert safe_text(once) == once


def test_a_one_line_field_shows_its_newlines_and_tabs_too() -> None:
    assert safe_line("name\n  other  CONNECTED\t\x1b") == "name\\n  other  CONNECTED\\t\\x1b"


def test_safe_json_is_the_same_json_with_no_raw_c1_or_del() -> None:
    value = {"text": "a\x1bb\x9bc\x7fd é"}

    shown = safe_json(value)

    assert json.loads(shown) == value
    assert not any(c == "\x1b" or "\x7f" <= c <= "\x9f" for c in shown)
    assert "é" in shown
