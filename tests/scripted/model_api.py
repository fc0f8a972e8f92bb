"""A scripted model API on 127.0.0.1: the Anthropic Messages API and OpenAI chat completions.

Each POST takes the next step of the script: a dict is sent as a 200 JSON body, a
`Reply` sets the status and headers too, and a callable gets the request body and
returns either. The real SDKs talk to it through ``ANTHROPIC_BASE_URL`` /
``OPENAI_BASE_URL``. Every request body is recorded; ``wait_for_requests`` blocks on a
condition (never a sleep). A step that raises, or a request past the end of the script,
gets a 500 whose body says why, and the failure is kept in ``errors`` for the test.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    body: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


Step = dict[str, Any] | Reply | Callable[[dict[str, Any]], "dict[str, Any] | Reply"]
_ids = itertools.count(1)


class ScriptedModelApi:
    """A loopback HTTP server that plays a script of model answers."""

    def __init__(self, steps: Iterable[Step] = ()) -> None:
        self.steps: list[Step] = list(steps)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.errors: list[str] = []
        self._cond = threading.Condition()
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
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.requests) >= count, timeout):
                raise AssertionError(f"expected {count} request(s), got {len(self.requests)}")

    def _next(self, body: dict[str, Any], path: str, headers: dict[str, str]) -> Reply:
        with self._cond:
            self.requests.append(body)
            self.paths.append(path)
            self.headers.append(headers)
            self._cond.notify_all()
            step = self.steps.pop(0) if self.steps else None
        if step is None:
            self.errors.append(f"request {len(self.requests)} past the end of the script")
            return Reply({"error": {"type": "api_error", "message": "script exhausted"}}, 500)
        try:
            outcome = step(body) if callable(step) else step
        except Exception as exc:  # a failed check inside a step must reach the test
            self.errors.append(f"step for request {len(self.requests)} failed: {exc!r}")
            return Reply({"error": {"type": "api_error", "message": f"step failed: {exc}"}}, 500)
        return outcome if isinstance(outcome, Reply) else Reply(outcome)

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
                data = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        return Handler


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
        "usage": {"input_tokens": 10, "output_tokens": 5},
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
