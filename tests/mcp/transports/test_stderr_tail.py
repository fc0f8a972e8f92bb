"""`StderrTail`: a child's last stderr lines, bounded in count and in length."""

from __future__ import annotations

from cat_code.mcp.transports.stderr_tail import STDERR_LINE_MAX, STDERR_TAIL_LINES, StderrTail


def test_lines_split_across_chunks_arrive_whole_and_blank_ones_are_not_kept() -> None:
    tail = StderrTail("srv")
    tail.feed(b"star")
    tail.feed(b"ting\r\n\n   \nready\n")

    assert list(tail.lines) == ["starting", "ready"]


def test_only_the_last_lines_are_kept() -> None:
    tail = StderrTail("srv")
    tail.feed(b"".join(b"line %d\n" % i for i in range(STDERR_TAIL_LINES + 5)))

    assert len(tail.lines) == STDERR_TAIL_LINES
    assert tail.lines[-1] == f"line {STDERR_TAIL_LINES + 4}"
    assert tail.last(2) == [f"line {STDERR_TAIL_LINES + 3}", f"line {STDERR_TAIL_LINES + 4}"]


def test_an_over_long_line_is_kept_once_by_its_start_and_the_next_line_still_counts() -> None:
    tail = StderrTail("srv")
    for _ in range(50):
        tail.feed(b"L" * 1000)  # one line of 50 kB, in many chunks
    tail.feed(b"LLL\nafter\n")

    assert list(tail.lines) == ["L" * STDERR_LINE_MAX, "after"]


def test_flush_takes_a_last_line_without_a_newline_once() -> None:
    tail = StderrTail("srv")
    tail.feed(b"fatal: no config")
    assert list(tail.lines) == []

    tail.flush()
    tail.flush()

    assert list(tail.lines) == ["fatal: no config"]
