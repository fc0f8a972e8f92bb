"""`MarkdownStream`: where a streamed answer's complete Markdown blocks end."""

from __future__ import annotations

import pytest

from cat_code.repl.markdown_stream import MarkdownStream

TEXT = (
    "Intro para\nline two\n\n"
    "- a\n- b\n\n- c\n  more\n\n    still the list\n\n"
    "Text then\n"
    "```py\nx = 1\n\n y\n```\n"
    "after\n\n"
    "~~~\n```\nnot a close\n~~~~\n"
    "end"
)
BLOCKS = [
    "Intro para\nline two\n\n",
    "- a\n- b\n\n- c\n  more\n\n    still the list\n\n",
    "Text then\n",
    "```py\nx = 1\n\n y\n```\n",
    "after\n\n",
    "~~~\n```\nnot a close\n~~~~\n",
]


@pytest.mark.parametrize("size", [1, 2, 7, len(TEXT)])
def test_blocks_complete_at_the_same_places_whatever_the_pieces(size: int) -> None:
    stream = MarkdownStream()
    boundaries = []
    for i in range(0, len(TEXT), size):
        if stream.feed(TEXT[i : i + size]):
            boundaries.append(stream.done)
    ends = [sum(map(len, BLOCKS[: n + 1])) for n in range(len(BLOCKS))]
    assert stream.complete == "".join(BLOCKS) and stream.pending == "end"
    if size == 1:
        assert boundaries == ends
    stream.finish()
    assert stream.complete == TEXT and stream.pending == ""


def test_a_block_is_not_complete_until_a_line_that_cannot_continue_it_starts() -> None:
    stream = MarkdownStream()
    assert not stream.feed("para\n\n")
    assert not stream.feed("  indented continuation\n\n")
    assert stream.feed("n")  # at the margin: a new block
    assert stream.complete == "para\n\n  indented continuation\n\n"


def test_after_a_list_a_line_that_may_be_an_item_is_waited_for() -> None:
    stream = MarkdownStream()
    stream.feed("- one\n\n1")
    assert stream.done == 0
    assert not stream.feed("0. ten\n\n")  # an item: the list goes on
    assert not stream.feed("1")  # may begin another item
    assert stream.feed("0 is a number\n")  # it did not: the list is done
    assert stream.complete == "- one\n\n10. ten\n\n"
