"""A subagent's answer as its parent reads it: capped, then one usage line.

The parent's context must not overflow with a child's result (claude-code #18240): past
`MAX_ANSWER_TOKENS` (estimated as characters / 4) the answer keeps its head and its tail
(conclusions come last) with a note in between saying how much was left out.
"""

from __future__ import annotations

#: The most of a subagent's answer the parent reads, in tokens (characters / 4).
MAX_ANSWER_TOKENS = 4_000
_CHARS_PER_TOKEN = 4
#: Of the characters kept, the share that comes from the head; the rest is the tail.
_HEAD_SHARE = 0.6


def cap_answer(text: str, max_tokens: int = MAX_ANSWER_TOKENS) -> str:
    """``text`` whole when it fits ``max_tokens``, else its head and tail with a note."""
    limit = max_tokens * _CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    head = int(limit * _HEAD_SHARE)
    tail = limit - head
    left_out = len(text) - head - tail
    note = (
        f"\n\n[… {left_out:,} characters of the subagent's answer left out (about "
        f"{left_out // _CHARS_PER_TOKEN:,} tokens): it was over {max_tokens:,} tokens …]\n\n"
    )
    return text[:head] + note + text[-tail:]


__all__ = ["MAX_ANSWER_TOKENS", "cap_answer"]
