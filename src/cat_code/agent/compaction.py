"""Compaction: the conversation so far replaced by a summary the model writes of it.

`plan` splits the conversation into the older part, which is summarized, and the latest
exchange, kept as it is: from the latest prompt on, or, when that is too big (the middle
of a long tool loop), from the model's latest message on, the prompt then restated after
the summary. The cut is always where the APIs allow a conversation to start: every tool
call kept has its result, and no result is kept without its call. `summary_messages` is
what the model is asked (long tool results cut, the oldest messages dropped to fit), and
`rebuild` the conversation that goes on: one user message with the summary (and what
must outlive every compaction word for word: the open tasks), then the latest exchange.
The agent decides when (`Agent.compact`): on ``/compact``, when the last request used
`THRESHOLD_PERCENT` of the context window, and once when the API answered that the
prompt is too long. Sizes here are estimates (characters / 4), the same before and
after, so "saved" compares like with like. A summary that would not make the
conversation smaller is not applied (`Compaction.applied`), and one that did not help
holds the next automatic compaction back (`cat_code.agent.compaction_backoff`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from cat_code.agent import models
from cat_code.agent.history.codec import encode
from cat_code.agent.history.store import is_prompt
from cat_code.agent.providers.base import AssistantMessage, Message, UserMessage
from cat_code.agent.tool_search import estimate_tokens

logger = logging.getLogger(__name__)

WINDOW_ENV = models.WINDOW_ENV
AUTO_ENV = "CAT_CODE_AUTO_COMPACT"
#: A request that used this share of the context window triggers compaction before the next.
THRESHOLD_PERCENT = 80
#: The latest exchange is kept whole while it takes at most this share of the window.
KEEP_PERCENT = 30
#: The summary request's messages take at most this share of the window (oldest dropped).
SUMMARY_INPUT_PERCENT = 60
#: Tool results longer than this are cut in the summary request: their gist is enough.
RESULT_CHARS = 2_000

SUMMARY_SYSTEM = (
    "You summarize a conversation between a user and a coding agent, so that the agent can "
    "continue the work from your summary alone, without the messages it replaces."
)
SUMMARY_REQUEST = (
    "Summarize the conversation so far, to continue from it. Keep what the work needs: "
    "the user's requests and intent in their words where it matters, decisions made, files "
    "and code looked at or changed (paths, names), commands run and results that matter, "
    "errors and how they were fixed, what was being done last and what is left to do. Be "
    "complete but concise. Write only the summary."
)
SUMMARY_HEAD = (
    "This session was compacted: the earlier messages were replaced by this summary of them."
)
#: Where the head of a compacted conversation puts the user's latest prompt: a later
#: compaction takes the prompt from there instead of nesting the whole head (whose
#: summary and restated tasks are stale by then) inside the next one.
LATEST_PROMPT = "The user's latest request, still being worked on:"


def context_window(model: str, environ: Mapping[str, str] | None = None) -> int:
    """The context window of ``provider:name``: ``$CAT_CODE_CONTEXT_WINDOW``, else the
    model catalogue (`agent.models`)."""
    return models.context_window(model, environ)


def auto_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether compaction happens by itself (``CAT_CODE_AUTO_COMPACT=off`` turns it off)."""
    env = os.environ if environ is None else environ
    return env.get(AUTO_ENV, "").strip().lower() not in ("off", "0", "false", "no")


def threshold(window: int) -> int:
    return window * THRESHOLD_PERCENT // 100


def estimate(messages: Sequence[Message]) -> int:
    """Estimated tokens of ``messages`` (characters / 4 of their JSON)."""
    return sum(estimate_tokens(json.dumps(encode(m), ensure_ascii=False)) for m in messages)


@dataclass(slots=True)
class Plan:
    """Where the conversation is cut: ``older`` is summarized, ``tail`` kept as it is."""

    older: list[Message]
    tail: list[Message]
    #: The latest prompt, when it is not in the tail (restated after the summary).
    prompt: str | None = None


@dataclass(frozen=True, slots=True)
class Compaction:
    """What one compaction did (estimated tokens of the messages, before and after: after,
    the conversation it would have made when it was not applied)."""

    tokens_before: int
    tokens_after: int
    automatic: bool
    summarized: int  # how many messages the summary replaced
    #: False when the summary would not have made the conversation smaller: it was dropped.
    applied: bool = True
    #: The conversation's size automatic compaction now waits for (after one that did not
    #: help; `cat_code.agent.compaction_backoff`), None when there is no such wait.
    held_until: int | None = None

    @property
    def saved(self) -> int:
        return max(0, self.tokens_before - self.tokens_after) if self.applied else 0

    @property
    def tokens_now(self) -> int:
        """The conversation's size after this compaction, applied or not."""
        return self.tokens_after if self.applied else self.tokens_before

    def held(self, until: int) -> Compaction:
        return replace(self, held_until=until)

    def describe(self) -> str:
        how = "automatically " if self.automatic else ""
        if self.applied:
            text = (
                f"conversation {how}compacted: ~{self.tokens_before:,} → "
                f"~{self.tokens_after:,} tokens (saved ~{self.saved:,} tokens; "
                f"{self.summarized} messages summarized)"
            )
        else:
            text = (
                f"conversation not compacted: the summary would have made it ~"
                f"{self.tokens_after:,} tokens, not smaller than ~{self.tokens_before:,}"
            )
        if self.automatic and self.held_until is not None:
            text += (
                "; the rest of the context (system prompt, AGENTS.md, tools) cannot be "
                "summarized, so automatic compaction waits until the conversation grows to "
                f"~{self.held_until:,} tokens"
            )
        return text


def _pure_prompt(message: Message) -> bool:
    return is_prompt(message) and not message.tool_results  # type: ignore[union-attr]


def plan(messages: Sequence[Message], window: int) -> Plan | None:
    """Where to cut ``messages`` (None: nothing older than the latest exchange to summarize)."""
    messages = list(messages)
    prompt_at = next((i for i in range(len(messages) - 1, -1, -1) if is_prompt(messages[i])), None)
    keep = window * KEEP_PERCENT // 100
    if prompt_at is not None and prompt_at > 0 and _pure_prompt(messages[prompt_at]):
        if estimate(messages[prompt_at:]) <= keep:
            return Plan(messages[:prompt_at], messages[prompt_at:])
    last_answer = next(
        (i for i in range(len(messages) - 1, 0, -1) if isinstance(messages[i], AssistantMessage)),
        None,
    )
    if last_answer is not None and (prompt_at is None or last_answer > prompt_at):
        prompt = _prompt_text(messages[prompt_at].text) if prompt_at is not None else None
        return Plan(messages[:last_answer], messages[last_answer:], prompt)
    if prompt_at is not None and prompt_at > 0 and _pure_prompt(messages[prompt_at]):
        return Plan(messages[:prompt_at], messages[prompt_at:])
    return None


def _prompt_text(text: str) -> str | None:
    """The prompt in ``text``: a compaction's head gives the prompt it restated (None if
    it had none); any other message is the prompt itself."""
    if not text.startswith(SUMMARY_HEAD):
        return text
    _, marker, prompt = text.partition(f"\n\n{LATEST_PROMPT}\n")
    return prompt if marker else None


def summary_messages(older: Sequence[Message], window: int, instructions: str) -> list[Message]:
    """What the model is asked to summarize: ``older`` with long tool results cut and the
    oldest messages dropped to fit, then the request (and the user's ``instructions``)."""
    trimmed = [_cut_results(m) for m in older]
    budget = window * SUMMARY_INPUT_PERCENT // 100
    sizes = [estimate([m]) for m in trimmed]
    start = 0
    while start < len(trimmed) - 1 and sum(sizes[start:]) > budget:
        start += 1
    kept = trimmed[start:]
    if start:
        # The first message kept may be results of calls that were dropped, or an answer.
        first = kept[0]
        if isinstance(first, UserMessage):
            kept[0] = UserMessage(text=first.text or "(earlier messages omitted)")
        else:
            kept.insert(0, UserMessage(text="(earlier messages omitted)"))
    request = SUMMARY_REQUEST
    if instructions.strip():
        request += f"\n\nThe user asks you to keep in particular: {instructions.strip()}"
    last = kept[-1] if kept else None
    if isinstance(last, UserMessage):  # roles must alternate: the request joins it
        kept[-1] = replace(last, text=f"{last.text}\n\n{request}".strip())
    else:
        kept.append(UserMessage(text=request))
    return kept


def _cut_results(message: Message) -> Message:
    if not isinstance(message, UserMessage) or not message.tool_results:
        return message
    results = []
    for result in message.tool_results:
        if len(result.content) > RESULT_CHARS:
            head = result.content[: RESULT_CHARS // 2]
            tail = result.content[-RESULT_CHARS // 4 :]
            cut = len(result.content) - len(head) - len(tail)
            result = replace(result, content=f"{head}\n[… {cut:,} characters cut …]\n{tail}")
        results.append(replace(result, media=[]))
    return replace(message, tool_results=results)


def rebuild(summary: str, cut: Plan, *, restated: str = "") -> list[Message]:
    """The conversation that goes on: the summary, what the agent restates after every
    compaction (``restated``: the open tasks), the latest prompt when it is not in the
    tail, then the tail as it was."""
    head = f"{SUMMARY_HEAD}\n\n<summary>\n{summary.strip()}\n</summary>"
    if restated.strip():
        head += f"\n\n{restated.strip()}"
    if cut.prompt:
        head += f"\n\n{LATEST_PROMPT}\n{cut.prompt}"
    tail = list(cut.tail)
    if tail and _pure_prompt(tail[0]):
        return [UserMessage(text=f"{head}\n\n{LATEST_PROMPT}\n{tail[0].text}"), *tail[1:]]
    return [UserMessage(text=head), *tail]


def outline(older: Sequence[Message]) -> str:
    """A summary made without the model, when it wrote none: the prompts and tools used."""
    prompts = [m.text.strip() for m in older if is_prompt(m)]
    calls: dict[str, int] = {}
    for message in older:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                calls[call.name] = calls.get(call.name, 0) + 1
    lines = ["(The model wrote no summary; this outline was made from the messages.)"]
    lines += [f"- the user asked: {p[:500]}" for p in prompts[-20:]]
    if calls:
        lines.append("- tools called: " + ", ".join(f"{n} ×{c}" for n, c in calls.items()))
    return "\n".join(lines)


__all__ = [
    "AUTO_ENV",
    "LATEST_PROMPT",
    "WINDOW_ENV",
    "Compaction",
    "Plan",
    "auto_enabled",
    "context_window",
    "estimate",
    "plan",
    "rebuild",
    "summary_messages",
    "threshold",
]
