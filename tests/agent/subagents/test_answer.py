"""A subagent's answer is capped for its parent: head and tail, with a note between."""

from __future__ import annotations

from cat_code.agent.subagents.answer import cap_answer


def test_an_answer_that_fits_is_returned_unchanged() -> None:
    text = "x" * 16_000
    assert cap_answer(text, 4_000) is text


def test_a_long_answer_keeps_its_head_and_tail_and_says_how_much_was_left_out() -> None:
    text = "A" * 10_000 + "B" * 10_000

    capped = cap_answer(text, 1_000)

    head, note, tail = capped.split("\n\n")
    assert head == "A" * 2_400 and tail == "B" * 1_600
    assert note == (
        "[… 16,000 characters of the subagent's answer left out (about 4,000 tokens): "
        "it was over 1,000 tokens …]"
    )
