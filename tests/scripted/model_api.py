"""A scripted model API on 127.0.0.1: the Anthropic Messages API and OpenAI chat completions.

Each POST takes the next step of the script: a dict is sent as a 200 JSON body, a
`Reply` sets the status and headers too, a `Streamed` is an answer told piece by piece,
and a callable gets the request body and returns any of these. The real SDKs talk to it
through ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``. Every request body is recorded;
``wait_for_requests`` blocks on a condition (never a sleep). A step that raises, or a
request past the end of the script, gets a 500 whose body says why, and the failure is
kept in ``errors`` for the test.

A request with ``"stream": true`` is answered with server-sent events in the format of
the API its path names (Messages events, or chat-completion chunks ending in ``[DONE]``),
chunked as the real APIs send them: a `Streamed` step as told, a whole-answer dict cut
into word-sized deltas. A `Hold` among the pieces stops the stream there until the test
releases it, so a test can see text arrive before the answer ends; a `StreamError`
sends the API's mid-stream error event, and `Cut` drops the connection mid-answer.

Several conversations can be scripted at once (a parent and its subagents, running
concurrently): `add_conversation` gives the requests whose first user message is a given
text (a subagent's prompt, exactly) a script of their own; every other request takes the
main script. ``conversation_requests`` holds each one's requests.

Connections are HTTP/1.1 kept alive, as the real APIs keep them: every answer that ends
properly (a sized body, or a stream with its last chunk) leaves the connection open for
the client's next request, and only a cut or broken answer closes it. Closing after an
answer whose headers did not say so races the client's connection pool.

With a ``token_budget``, the server counts each request's tokens (characters / 4 of its
system prompt, messages and tools) and refuses one over the budget as the real Messages
API does: 400, ``invalid_request_error``, "prompt is too long: N tokens > B maximum"
(recorded, but no step is taken). Answers it takes report that count as their
``input_tokens``, so a client sees how full its context is. Messages API usage carries
the cache fields (``cache_read_input_tokens``, ``cache_creation_input_tokens``).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: The longest a `Hold` keeps a stream waiting when the test never releases it.
HOLD_LIMIT_S = 30.0


@dataclass
class Reply:
    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


class Hold:
    """A point in a streamed answer where the server waits for `release` (bounded)."""

    def __init__(self) -> None:
        self.reached = threading.Event()  # everything before it has been sent
        self._released = threading.Event()

    def release(self) -> None:
        self._released.set()

    def wait_reached(self, timeout: float = 15.0) -> None:
        if not self.reached.wait(timeout):
            raise AssertionError("the stream never reached the hold")

    def _wait(self) -> None:
        self.reached.set()
        self._released.wait(HOLD_LIMIT_S)


@dataclass
class StreamError:
    """The API's error event, sent mid-stream; the stream ends after it."""

    kind: str = "overloaded_error"
    message: str = "Overloaded"


class Cut:
    """The connection is dropped here, the answer unfinished."""


Piece = str | Hold | StreamError | Cut


@dataclass
class Streamed:
    """An answer told piece by piece, in either API's stream format.

    ``tool_calls`` are (name, arguments, id) sent after the text; ``stop`` is our word
    for why it ended (end_turn, tool_use, max_tokens; by default from the tool calls);
    ``usage`` is (input, output) tokens, None to send none, as some local servers do;
    ``cache`` is (cache read, cache creation) input tokens (Messages API only);
    ``thinking`` are Messages content blocks (``thinking`` with its ``signature``, or
    ``redacted_thinking`` with ``data``) sent before the text, as the API sends them.
    """

    pieces: list[Piece]
    tool_calls: list[tuple[str, dict[str, Any] | str, str]] = field(default_factory=list)
    stop: str | None = None
    usage: tuple[int, int] | None = (10, 5)
    cache: tuple[int, int] = (0, 0)
    thinking: list[dict[str, Any]] = field(default_factory=list)


def streamed(*pieces: Piece, **options: Any) -> Streamed:
    return Streamed(list(pieces), **options)


Answer = dict[str, Any] | Reply | Streamed
Step = Answer | Callable[[dict[str, Any]], Answer]
_ids = itertools.count(1)


class ScriptedModelApi:
    """A loopback HTTP server that plays a script of model answers."""

    def __init__(self, steps: Iterable[Step] = (), *, token_budget: int | None = None) -> None:
        self.steps: list[Step] = list(steps)
        #: Requests over this many tokens are refused ("prompt is too long"); None: no limit.
        self.token_budget = token_budget
        #: The token count of every request (``request_tokens``), and how many were refused.
        self.token_counts: list[int] = []
        self.refused = 0
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.errors: list[str] = []
        #: First user message → the script of that conversation, and its requests.
        self.conversations: dict[str, list[Step]] = {}
        self.conversation_requests: dict[str, list[dict[str, Any]]] = {}
        self._cond = threading.Condition()
        self._holds: list[Hold] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def add(self, *steps: Step) -> None:
        with self._cond:
            self.steps.extend(steps)

    def __enter__(self) -> ScriptedModelApi:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for hold in self._holds:
            hold.release()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def add_conversation(self, first_message: str, *steps: Step) -> None:
        """Script the conversation whose first user message is ``first_message`` exactly."""
        with self._cond:
            self.conversations.setdefault(first_message, []).extend(steps)
            self.conversation_requests.setdefault(first_message, [])

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= count, timeout):
                raise AssertionError(f"expected {count} request(s), got {len(self.requests)}")

    def _next(self, body: dict[str, Any], path: str, headers: dict[str, str]) -> Reply | Streamed:
        tokens = request_tokens(body)
        with self._cond:
            self.requests.append(body)
            self.paths.append(path)
            self.headers.append(headers)
            self.token_counts.append(tokens)
            self._cond.notify_all()
            if self.token_budget is not None and tokens > self.token_budget:
                self.refused += 1
                return anthropic_error(
                    400,
                    "invalid_request_error",
                    f"prompt is too long: {tokens} tokens > {self.token_budget} maximum",
                )
            first = first_user_text(body)
            script = self.steps
            if first is not None and first in self.conversations:
                script = self.conversations[first]
                self.conversation_requests[first].append(body)
            step = script.pop(0) if script else None
        if step is None:
            which = "" if script is self.steps else f" of the conversation {first!r}"
            self.errors.append(f"request {len(self.requests)} past the end of the script{which}")
            return Reply({"error": {"type": "api_error", "message": "script exhausted"}}, 500)
        try:
            outcome = step(body) if callable(step) else step
        except Exception as exc:  # a failed check inside a step must reach the test
            self.errors.append(f"step for request {len(self.requests)} failed: {exc!r}")
            return Reply({"error": {"type": "api_error", "message": f"step failed: {exc}"}}, 500)
        if self.token_budget is not None:
            outcome = _with_input_tokens(outcome, tokens)
        if isinstance(outcome, Streamed):
            self._holds.extend(p for p in outcome.pieces if isinstance(p, Hold))
            return outcome
        if isinstance(outcome, Reply):
            return outcome
        if body.get("stream") is True:
            return as_streamed(outcome)
        return Reply(outcome)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_unparsed": raw.decode(errors="replace")}
                headers = {k.lower(): v for k, v in self.headers.items()}
                reply = api._next(body, self.path, headers)
                if isinstance(reply, Streamed):
                    self._stream(sse_frames(reply, self.path, body))
                    return
                data = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, frames: Iterator[bytes | Hold | Cut]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                try:
                    for frame in frames:
                        if isinstance(frame, Hold):
                            frame._wait()
                        elif isinstance(frame, Cut):
                            # No last chunk, then close: the client sees the body end early.
                            self.close_connection = True
                            return
                        else:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
                            self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except OSError:
                    # The client went away mid-answer (cancelled): nothing to tell it.
                    self.close_connection = True
                # A finished stream keeps the connection, as the real APIs do: the
                # response said nothing of closing, so the client's pool reuses it, and
                # closing it here would race that reuse ("Server disconnected without
                # sending a response" on the next request).

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        return Handler


def first_user_text(body: dict[str, Any]) -> str | None:
    """The text of a request's first user message (either API), None when there is none."""
    for message in body.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [b.get("text", "") for b in content if isinstance(b, dict)]
            return "".join(t for t in texts if isinstance(t, str))
        return None
    return None


def request_tokens(body: dict[str, Any]) -> int:
    """A request's size in tokens as the budget counts it: characters / 4 of what fills the
    context (system prompt, messages, tool definitions)."""
    sized = {k: body.get(k) for k in ("system", "messages", "tools")}
    return len(json.dumps(sized, ensure_ascii=False)) // 4


def _with_input_tokens(outcome: Answer, tokens: int) -> Answer:
    """``outcome`` reporting ``tokens`` input tokens, as the real API counts them."""
    if isinstance(outcome, Streamed):
        if outcome.usage is not None:
            outcome.usage = (tokens, outcome.usage[1])
        return outcome
    if isinstance(outcome, dict) and isinstance(outcome.get("usage"), dict):
        usage = dict(outcome["usage"])
        usage["input_tokens" if "input_tokens" in usage else "prompt_tokens"] = tokens
        return {**outcome, "usage": usage}
    return outcome


# -- Anthropic Messages API answers ------------------------------------------------------


def anthropic_message(content: list[dict[str, Any]], stop_reason: str) -> dict[str, Any]:
    return {
        "id": f"msg_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def anthropic_text(text: str) -> dict[str, Any]:
    return anthropic_message([{"type": "text", "text": text}], "end_turn")


def anthropic_tool_use(
    name: str, arguments: dict[str, Any], *, text: str = "", call_id: str | None = None
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.append(
        {
            "type": "tool_use",
            "id": call_id or f"toolu_{next(_ids)}",
            "name": name,
            "input": arguments,
        }
    )
    return anthropic_message(content, "tool_use")


def anthropic_error(status: int, kind: str, message: str, **headers: str) -> Reply:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return Reply(body, status, {k.replace("_", "-"): v for k, v in headers.items()})


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of the last user turn of a Messages API request."""
    last = request["messages"][-1]
    assert last["role"] == "user", last
    content = last["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


# -- OpenAI chat-completions answers -------------------------------------------------------


def openai_message(message: dict[str, Any], finish_reason: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def openai_text(text: str) -> dict[str, Any]:
    return openai_message({"role": "assistant", "content": text}, "stop")


def openai_tool_call(name: str, arguments: str, *, call_id: str | None = None) -> dict[str, Any]:
    call = {
        "id": call_id or f"call_{next(_ids)}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    return openai_message(
        {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
    )


# -- streaming -------------------------------------------------------------------------


def as_streamed(answer: dict[str, Any]) -> Streamed:
    """A whole answer (either API's shape) as a stream of word-sized text deltas."""
    if answer.get("type") == "message":
        text = "".join(b["text"] for b in answer["content"] if b["type"] == "text")
        calls = [
            (b["name"], b["input"], b["id"]) for b in answer["content"] if b["type"] == "tool_use"
        ]
        stop = answer["stop_reason"]
        usage = answer["usage"]["input_tokens"], answer["usage"]["output_tokens"]
        cache = (
            answer["usage"].get("cache_read_input_tokens") or 0,
            answer["usage"].get("cache_creation_input_tokens") or 0,
        )
        thinking = [b for b in answer["content"] if b["type"] in ("thinking", "redacted_thinking")]
        return Streamed(
            _words(text), tool_calls=calls, stop=stop, usage=usage, cache=cache, thinking=thinking
        )
    else:
        choice = answer["choices"][0]
        message = choice["message"]
        text = message.get("content") or ""
        calls = [
            (c["function"]["name"], c["function"]["arguments"], c["id"])
            for c in message.get("tool_calls") or []
        ]
        stop = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}.get(
            choice["finish_reason"], choice["finish_reason"]
        )
        usage = answer["usage"]["prompt_tokens"], answer["usage"]["completion_tokens"]
    return Streamed(_words(text), tool_calls=calls, stop=stop, usage=usage)


def _words(text: str) -> list[Piece]:
    return list(re.findall(r"\s*\S+\s*", text)) or ([text] if text else [])


def sse_frames(
    answer: Streamed, path: str, request: dict[str, Any]
) -> Iterator[bytes | Hold | Cut]:
    """The answer as the events of the API ``path`` names."""
    if path.endswith("/chat/completions"):
        options = request.get("stream_options") or {}
        return _openai_frames(answer, bool(options.get("include_usage")))
    return _anthropic_frames(answer)


def _event(name: str | None, data: Any) -> bytes:
    line = f"data: {json.dumps(data, ensure_ascii=False)}\n\n"
    return (f"event: {name}\n{line}" if name else line).encode()


def _stop_of(answer: Streamed) -> str:
    return answer.stop or ("tool_use" if answer.tool_calls else "end_turn")


def _anthropic_frames(answer: Streamed) -> Iterator[bytes | Hold | Cut]:
    tokens_in, tokens_out = answer.usage or (0, 0)
    message = anthropic_message([], "end_turn")
    usage = {
        "input_tokens": tokens_in,
        "output_tokens": 1,
        "cache_read_input_tokens": answer.cache[0],
        "cache_creation_input_tokens": answer.cache[1],
    }
    message.update(stop_reason=None, usage=usage)
    yield _event("message_start", {"type": "message_start", "message": message})
    yield _event("ping", {"type": "ping"})
    index = 0
    for block in answer.thinking:
        yield from _thinking_frames(index, block)
        index += 1
    text_open = False
    for piece in answer.pieces:
        if isinstance(piece, str):
            if not text_open:
                block = {"type": "text", "text": ""}
                yield _event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": block},
                )
                text_open = True
            delta = {"type": "text_delta", "text": piece}
            yield _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        elif isinstance(piece, StreamError):
            error = {"type": piece.kind, "message": piece.message}
            yield _event("error", {"type": "error", "error": error})
            return
        else:
            yield piece
            if isinstance(piece, Cut):
                return
    if text_open:
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    for name, arguments, call_id in answer.tool_calls:
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        yield _event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        for part in (raw[: len(raw) // 2], raw[len(raw) // 2 :]):
            delta = {"type": "input_json_delta", "partial_json": part}
            yield _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
        index += 1
    delta = {"stop_reason": _stop_of(answer), "stop_sequence": None}
    yield _event(
        "message_delta",
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": tokens_out}},
    )
    yield _event("message_stop", {"type": "message_stop"})


def _thinking_frames(index: int, block: dict[str, Any]) -> Iterator[bytes]:
    """A thinking block as the API streams it: empty start, thinking deltas, signature."""

    def frame(kind: str, **data: Any) -> bytes:
        return _event(kind, {"type": kind, "index": index, **data})

    if block["type"] == "redacted_thinking":
        yield frame("content_block_start", content_block=block)
    else:
        yield frame("content_block_start", content_block={"type": "thinking", "thinking": ""})
        for piece in _words(block.get("thinking", "")):
            yield frame("content_block_delta", delta={"type": "thinking_delta", "thinking": piece})
        signature = {"type": "signature_delta", "signature": block.get("signature", "")}
        yield frame("content_block_delta", delta=signature)
    yield frame("content_block_stop")


def _openai_frames(answer: Streamed, include_usage: bool) -> Iterator[bytes | Hold | Cut]:
    head = {"id": f"chatcmpl-{next(_ids)}", "object": "chat.completion.chunk", "created": 0}
    head["model"] = "gpt-test"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return _event(None, {**head, "choices": [choice]})

    yield chunk({"role": "assistant", "content": ""})
    for piece in answer.pieces:
        if isinstance(piece, str):
            yield chunk({"content": piece})
        elif isinstance(piece, StreamError):
            yield _event(None, {"error": {"message": piece.message, "type": piece.kind}})
            return
        else:
            yield piece
            if isinstance(piece, Cut):
                return
    for index, (name, arguments, call_id) in enumerate(answer.tool_calls):
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        first = {"index": index, "id": call_id, "type": "function"}
        first["function"] = {"name": name, "arguments": ""}
        yield chunk({"tool_calls": [first]})
        for part in (raw[: len(raw) // 2], raw[len(raw) // 2 :]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
    finish = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}
    yield chunk({}, finish.get(_stop_of(answer), "stop"))
    if include_usage and answer.usage is not None:
        usage = {
            "prompt_tokens": answer.usage[0],
            "completion_tokens": answer.usage[1],
            "total_tokens": sum(answer.usage),
        }
        yield _event(None, {**head, "choices": [], "usage": usage})
    yield b"data: [DONE]\n\n"
