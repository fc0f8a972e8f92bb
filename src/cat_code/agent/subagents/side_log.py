"""A subagent's conversation, saved in its session's file as a side conversation.

Each record is ``{"type": "subagent", "id": RUN, "event": ...}`` appended to the parent's
session file (`SessionLog.append_records`): ``start`` (name, description, model, depth),
``message`` and ``rewind`` as the subagent's conversation changes (the same diffing as the
main conversation's), ``compact``, and ``end`` (how it ended, turns, tokens). The main
conversation's reader skips these records, so a session with subagents resumes as any
other, and ``--resume`` appends to the same file: the side conversations stay in it.
`side_conversations` reads them back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cat_code.agent.history.codec import BadRecord, decode, encode
from cat_code.agent.history.store import unchanged_prefix
from cat_code.agent.providers.base import Message

RECORD_TYPE = "subagent"


class RecordSink(Protocol):
    """Where the records go (`cat_code.agent.history.SessionLog`)."""

    def append_records(self, records: list[dict[str, Any]]) -> bool: ...


class SideLog:
    """The `ConversationLog` of one subagent run."""

    def __init__(self, sink: RecordSink, run_id: str) -> None:
        self.sink = sink
        self.run_id = run_id
        self._written: list[dict[str, Any]] = []

    def event(self, event: str, **fields: Any) -> None:
        self.sink.append_records([self._record(event, **fields)])

    def _record(self, event: str, **fields: Any) -> dict[str, Any]:
        return {"type": RECORD_TYPE, "id": self.run_id, "event": event, **fields}

    def sync(self, messages: Sequence[Message]) -> None:
        encoded = [encode(m) for m in messages]
        same = unchanged_prefix(self._written, encoded)
        if same == len(self._written) == len(encoded):
            return
        records = []
        if same < len(self._written):
            records.append(self._record("rewind", to=same))
        records += [self._record("message", message=m) for m in encoded[same:]]
        if self.sink.append_records(records):
            self._written = encoded

    def compacted(
        self, messages: Sequence[Message], found_tools: Sequence[str], **details: object
    ) -> None:
        encoded = [encode(m) for m in messages]
        if self.sink.append_records([self._record("compact", messages=encoded)]):
            self._written = encoded


@dataclass(slots=True)
class SideConversation:
    """One subagent's run as its session file has it."""

    id: str
    name: str = ""
    description: str = ""
    messages: list[Message] = field(default_factory=list)
    #: The ``end`` record (how it ended, turns, tokens); None if the session ended first.
    end: dict[str, Any] | None = None


def side_conversations(path: Path) -> dict[str, SideConversation]:
    """The side conversations of the session file ``path``, by run id, in start order."""
    found: dict[str, SideConversation] = {}
    for raw in path.read_bytes().split(b"\n"):
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(record, dict) or record.get("type") != RECORD_TYPE:
            continue
        run_id = str(record.get("id"))
        side = found.setdefault(run_id, SideConversation(run_id))
        event = record.get("event")
        try:
            if event == "start":
                side.name = str(record.get("name") or "")
                side.description = str(record.get("description") or "")
            elif event == "message":
                side.messages.append(decode(record.get("message")))
            elif event == "rewind":
                del side.messages[int(record["to"]) :]
            elif event == "compact":
                side.messages = [decode(m) for m in record.get("messages") or []]
            elif event == "end":
                side.end = record
        except (BadRecord, KeyError, ValueError, TypeError):
            continue  # one bad record loses that change, never the file
    return found


__all__ = ["RECORD_TYPE", "SideConversation", "SideLog", "side_conversations"]
