"""`ChatStream`: chat-completion chunks as servers really send them, edge cases included."""

from __future__ import annotations

from typing import Any

from cat_code.agent.providers.chat_stream import ChatStream


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"choices": [choice] if delta is not None else [], **extra}


def test_text_refusal_and_usage_are_collected_and_the_shown_text_returned() -> None:
    stream = ChatStream()
    assert stream.add(chunk({"role": "assistant", "content": ""})) == ""
    assert stream.add(chunk({"content": "Hel"})) == "Hel"
    assert stream.add(chunk({"content": "lo", "refusal": None})) == "lo"
    assert stream.add(chunk({}, "stop")) == ""
    stream.add(chunk(None, usage={"prompt_tokens": 7, "completion_tokens": 2}))
    assert (stream.text, stream.finish_reason) == ("Hello", "stop")
    assert (stream.prompt_tokens, stream.completion_tokens) == (7, 2)


def test_calls_are_keyed_by_index_and_a_repeated_name_is_not_doubled() -> None:
    stream = ChatStream()
    stream.add(chunk({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "echo"}}]}))
    stream.add(chunk({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "rev"}}]}))
    stream.add(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"x"'}}]}))
    stream.add(
        chunk({"tool_calls": [{"index": 1, "function": {"name": "rev", "arguments": "{}"}}]})
    )
    stream.add(chunk({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}))
    assert [(c.id, c.name, c.arguments) for c in stream.calls] == [
        ("a", "echo", '{"x": 1}'),
        ("b", "rev", "{}"),
    ]


def test_calls_without_an_index_follow_their_id_and_a_new_id_at_one_index_is_a_new_call() -> None:
    stream = ChatStream()
    stream.add(chunk({"tool_calls": [{"id": "a", "function": {"name": "one", "arguments": "{"}}]}))
    stream.add(chunk({"tool_calls": [{"function": {"arguments": "}"}}]}))
    stream.add(chunk({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "two"}}]}))
    stream.add(chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "three"}}]}))
    assert [(c.id, c.name, c.arguments) for c in stream.calls] == [
        ("a", "one", "{}"),
        ("b", "two", ""),
        ("c", "three", ""),
    ]
