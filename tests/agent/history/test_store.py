"""Session files: messages round-trip exactly, rewinds and compaction points replay, a torn
line is skipped, unfinished tool calls get a result, and an agent's turn is saved as it goes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from cat_code.agent.history import SessionLog, SessionNotFound, find, list_sessions, load, resolve
from cat_code.agent.history.codec import decode, encode
from cat_code.agent.history.store import ENDED_RESULT, folder_key
from cat_code.agent.loop import Agent
from cat_code.agent.providers.base import AssistantMessage, ToolCall, UserMessage
from cat_code.agent.providers.fake import ScriptedProvider, reply, use_tools
from cat_code.agent.tool_search import FoundTools
from cat_code.tools.base import Media, ToolResult
from cat_code.tools.registry import ToolRegistry


def test_every_field_a_model_sees_survives_encoding() -> None:
    messages = [
        UserMessage(text="hi"),
        AssistantMessage(
            text="calling",
            tool_calls=[
                ToolCall("t1", "search_tools", {"query": "x"}),
                ToolCall("t2", "bad", {}, error="arguments were not JSON"),
            ],
        ),
        UserMessage(
            tool_results=[
                ToolResult("found", tool_call_id="t1", raw=FoundTools(("mcp__a__b",))),
                ToolResult(
                    "img", is_error=True, tool_call_id="t2",
                    media=[Media("image", "image/png", "aGk=")],
                ),
            ]
        ),
        AssistantMessage(text="half an ans", interrupted="user"),
    ]  # fmt: skip
    again = [decode(json.loads(json.dumps(encode(m)))) for m in messages]
    assert again == messages


def test_a_log_appends_rewinds_and_compacts_and_load_replays_it(tmp_path: Path) -> None:
    log = SessionLog(tmp_path)
    assert not log.saved
    conversation: list[UserMessage | AssistantMessage] = [UserMessage(text="one")]
    log.sync(conversation)
    conversation.append(AssistantMessage(text="answer one"))
    conversation.append(UserMessage(text="two"))
    log.sync(conversation)
    del conversation[-1]  # the agent took an unanswered prompt back
    conversation.append(UserMessage(text="two again"))
    log.sync(conversation)
    log.compacted([UserMessage(text="summary")], ["mcp__a__b"], automatic=True)
    log.sync([UserMessage(text="summary"), AssistantMessage(text="after")])
    log.close()

    loaded = load(log.path)
    assert loaded.id == log.id
    assert loaded.messages == [UserMessage(text="summary"), AssistantMessage(text="after")]
    assert loaded.found_tools == ("mcp__a__b",)
    assert (loaded.turns, loaded.first_prompt) == (2, "one")  # "two" was taken back
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.path.parent.stat().st_mode) == 0o700
    types = [json.loads(line)["type"] for line in log.path.read_text().splitlines()]
    assert types == ["session", "message", "message", "message", "rewind", "message",
                     "compact", "message"]  # fmt: skip


def test_a_torn_line_is_skipped_with_a_warning_and_the_next_write_starts_a_new_line(
    tmp_path: Path,
) -> None:
    log = SessionLog(tmp_path)
    log.sync([UserMessage(text="kept")])
    log.close()
    with log.path.open("a") as file:
        file.write('{"type": "message", "mess')
    loaded = load(log.path)
    assert loaded.messages == [UserMessage(text="kept")]
    assert len(loaded.warnings) == 1 and "torn last line" in loaded.warnings[0]

    again = SessionLog(tmp_path)
    again.adopt(loaded)
    again.sync([UserMessage(text="kept"), AssistantMessage(text="more")])
    again.close()
    assert load(log.path).messages == [UserMessage(text="kept"), AssistantMessage(text="more")]


def test_a_resumed_session_file_left_open_by_an_old_version_is_made_private(
    tmp_path: Path,
) -> None:
    log = SessionLog(tmp_path)
    log.sync([UserMessage(text="kept")])
    log.close()
    log.path.chmod(0o644)

    again = SessionLog(tmp_path)
    again.adopt(load(log.path))
    again.sync([UserMessage(text="kept"), AssistantMessage(text="more")])
    again.close()
    assert stat.S_IMODE(log.path.stat().st_mode) == 0o600


def test_a_tool_call_left_without_its_result_gets_one_on_loading(tmp_path: Path) -> None:
    log = SessionLog(tmp_path)
    call = ToolCall("t1", "shell", {"command": "sleep 100"})
    log.sync([UserMessage(text="run it"), AssistantMessage(tool_calls=[call])])
    log.close()
    loaded = load(log.path)
    assert loaded.messages[-1] == UserMessage(
        tool_results=[ToolResult(ENDED_RESULT, is_error=True, tool_call_id="t1")]
    )


async def test_an_agent_saves_each_message_before_the_next_request(tmp_path: Path) -> None:
    log = SessionLog(tmp_path)
    seen_on_disk: list[int] = []

    def check(messages: object) -> object:
        seen_on_disk.append(len(load(log.path).messages))
        return reply("done")

    provider = ScriptedProvider([use_tools(("nope", {})), check])
    agent = Agent(provider, ToolRegistry(), log=log)
    outcome = await agent.run("go")
    assert outcome.status == "done"
    assert seen_on_disk == [3]  # prompt, the call, its result: all saved before the request
    assert load(log.path).messages == agent.messages


def test_find_takes_an_id_or_a_unique_prefix_and_resolve_the_newest(tmp_path: Path) -> None:
    ids = []
    for text in ("a", "b"):
        log = SessionLog(tmp_path)
        log.sync([UserMessage(text=text)])
        log.close()
        ids.append(log.id)
    assert find(tmp_path, ids[0]).id == ids[0]
    assert find(tmp_path, ids[1][:8]).id == ids[1] or ids[0][:8] == ids[1][:8]
    with pytest.raises(SessionNotFound, match="no saved session 'zzz'"):
        find(tmp_path, "zzz")
    with pytest.raises(SessionNotFound):
        find(tmp_path, "../../etc/passwd")
    newest = resolve(tmp_path, resume=None, continue_latest=True)
    assert newest is not None and newest.id == list_sessions(tmp_path)[0].id
    assert resolve(tmp_path, resume=None, continue_latest=False) is None
    with pytest.raises(SessionNotFound, match="no saved session to continue"):
        resolve(tmp_path / "elsewhere", resume=None, continue_latest=True)


def test_folder_keys_are_readable_and_keep_look_alike_paths_apart(tmp_path: Path) -> None:
    (tmp_path / "a-b").mkdir()
    (tmp_path / "a" / "b").mkdir(parents=True)
    one, two = folder_key(tmp_path / "a-b"), folder_key(tmp_path / "a" / "b")
    assert one != two and one.split("-")[-3:-1] == ["a", "b"]
