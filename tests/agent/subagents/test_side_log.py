"""A subagent's conversation saved as a side conversation of its session file, read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cat_code.agent.history import SessionLog, load
from cat_code.agent.providers.base import AssistantMessage, UserMessage
from cat_code.agent.subagents.side_log import SideLog, side_conversations


def test_side_conversations_are_saved_in_the_session_file_and_the_main_one_loads_as_before(
    tmp_path: Path,
) -> None:
    log = SessionLog(tmp_path)
    main = [UserMessage(text="go")]
    log.sync(main)
    side = SideLog(log, "run1")
    side.event("start", name="counter", description="count")
    side.sync([UserMessage(text="count"), AssistantMessage(text="first try")])
    side.sync([UserMessage(text="count")])  # taken back
    side.sync([UserMessage(text="count"), AssistantMessage(text="42")])
    side.event("end", status="done")
    log.sync([*main, AssistantMessage(text="done")])
    log.close()

    (found,) = side_conversations(log.path).values()
    assert (found.id, found.name, found.description) == ("run1", "counter", "count")
    assert [m.text for m in found.messages] == ["count", "42"]
    assert found.end is not None and found.end["status"] == "done"
    assert [m.text for m in load(log.path).messages] == ["go", "done"]


def test_a_bad_side_record_loses_that_change_only(tmp_path: Path) -> None:
    class Sink:
        def __init__(self) -> None:
            self.records: list[dict[str, Any]] = []

        def append_records(self, records: list[dict[str, Any]]) -> bool:
            self.records += records
            return True

    sink = Sink()
    side = SideLog(sink, "r")
    side.sync([UserMessage(text="a"), AssistantMessage(text="b")])
    lines = [json.dumps(r) for r in sink.records]
    lines.insert(1, json.dumps({"type": "subagent", "id": "r", "event": "message", "message": 3}))
    lines.append("{torn")
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines))

    (found,) = side_conversations(path).values()
    assert [m.text for m in found.messages] == ["a", "b"]
