"""`ChatStream`: one streamed chat-completions answer, put back together chunk by chunk.

The OpenAI wire format sends the text as ``delta.content`` pieces and each tool call as
pieces keyed by ``index``: the first names the call (``id``, ``function.name``), the
others carry slices of the ``arguments`` JSON. The finish reason comes in the last chunk
with choices, the usage (only when asked, and not from every local server) in a chunk
with no choices at all. Servers differ at the edges, so: a piece without an ``index``
continues the call with its ``id`` (or the last call), a new ``id`` at a known index
starts a new call, and a missing usage is zero. Only the first choice is read. Chunks
are the decoded JSON of each event, as sent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class PartialCall:
    """A tool call as assembled so far; ``arguments`` is JSON text, maybe incomplete."""

    id: str | None = None
    name: str = ""
    arguments: str = ""


@dataclass(slots=True)
class ChatStream:
    """The answer assembled from the chunks given to `add`."""

    text: str = ""
    refusal: str = ""
    calls: list[PartialCall] = field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Whether any chunk arrived (a failure after that is a failure mid-answer).
    started: bool = False
    _by_index: dict[int, PartialCall] = field(default_factory=dict)

    def add(self, chunk: dict[str, Any]) -> str:
        """Take one chunk in; return the text it adds for the user (maybe empty)."""
        self.started = True
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.prompt_tokens = usage.get("prompt_tokens") or 0
            self.completion_tokens = usage.get("completion_tokens") or 0
        choices = chunk.get("choices") or []
        if not choices or not isinstance(choices[0], dict):
            return ""
        choice = choices[0]
        if choice.get("finish_reason"):
            self.finish_reason = choice["finish_reason"]
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return ""
        for piece in delta.get("tool_calls") or []:
            if isinstance(piece, dict):
                self._add_call_piece(piece)
        shown = ""
        content = delta.get("content")
        if content:
            self.text += content
            shown += content
        refusal = delta.get("refusal")
        if refusal:
            self.refusal += refusal
            shown += refusal
        return shown

    def _add_call_piece(self, piece: dict[str, Any]) -> None:
        index = piece.get("index")
        call_id = piece.get("id") or None
        function = piece.get("function") or {}
        name = function.get("name") or ""
        arguments = function.get("arguments") or ""
        call = self._call_for(index, call_id)
        if call_id is not None and call.id is None:
            call.id = call_id
        # Names come whole, once or repeated in every piece; a differing piece is a
        # continuation, for a server that splits them.
        if name and name != call.name:
            call.name += name
        call.arguments += arguments

    def _call_for(self, index: int | None, call_id: str | None) -> PartialCall:
        if index is not None:
            call = self._by_index.get(index)
            if call is not None and (call_id is None or call.id in (None, call_id)):
                return call
        elif call_id is None and self.calls:
            return self.calls[-1]
        elif call_id is not None:
            for call in self.calls:
                if call.id == call_id:
                    return call
        call = PartialCall()
        self.calls.append(call)
        if index is not None:
            self._by_index[index] = call
        return call


__all__ = ["ChatStream", "PartialCall"]
