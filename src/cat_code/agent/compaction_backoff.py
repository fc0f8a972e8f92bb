"""When automatic compaction may run again: not before the conversation has grown after
one that did not help.

Automatic compaction goes by how full the last request was, and that counts what no
summary can shrink (the system prompt with a large ``AGENTS.md``, the tool definitions).
With only the 80% rule, a compaction that could not help ran before every request (99
summaries for a 4-call prompt). So the outcome of each compaction is remembered: one that
was not applied (its summary no smaller than what it replaced) or that saved less than
`LITTLE_PERCENT` of the window holds the next automatic one back until the conversation
has grown by that share of the window again. A compaction that helped lifts the hold;
so does forgetting the conversation. Sizes are `compaction.estimate`'s, of the messages.

A compaction that failed (its summary request answered an error) holds the next one back
the same way (`failed`): without that, a model that refuses summaries was asked for one
before every request. Only the first failure since the last compaction that helped is
told (one notice, not one per request).
"""

from __future__ import annotations

from dataclasses import dataclass

from cat_code.agent.compaction import Compaction

#: A compaction that saved less than this share of the context window "saved little".
LITTLE_PERCENT = 10


@dataclass(slots=True)
class CompactionBackoff:
    """The hold on automatic compaction after one that did not help."""

    #: The conversation's estimated tokens automatic compaction waits for (None: no hold).
    wait_until: int | None = None
    #: Whether a failed compaction was told since the last one that helped.
    failure_told: bool = False

    def allows(self, conversation_tokens: int) -> bool:
        """Whether an automatic compaction may run with the conversation at this size."""
        return self.wait_until is None or conversation_tokens >= self.wait_until

    def record(self, result: Compaction, window: int) -> Compaction:
        """Remember how ``result`` went; returns it with the hold it set (`Compaction.
        held_until`), so that its one notice says so."""
        little = window * LITTLE_PERCENT // 100
        if result.applied and result.saved >= little:
            self.wait_until, self.failure_told = None, False
            return result
        self.wait_until = result.tokens_now + max(little, 1)
        return result.held(self.wait_until)

    def failed(self, conversation_tokens: int, window: int) -> bool:
        """Hold automatic compaction back after one that failed, until the conversation
        (now ``conversation_tokens``) has grown; whether to tell the user (the first time)."""
        self.wait_until = conversation_tokens + max(window * LITTLE_PERCENT // 100, 1)
        tell, self.failure_told = not self.failure_told, True
        return tell

    def reset(self) -> None:
        self.wait_until, self.failure_told = None, False


__all__ = ["LITTLE_PERCENT", "CompactionBackoff"]
