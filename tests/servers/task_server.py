#!/usr/bin/env python3
"""A scripted stdio MCP server that runs tools as tasks: ``python task_server.py MODE``.

MODE ``extension``: 2026-07-28 with the ``io.modelcontextprotocol/tasks`` extension
(SEP-2663, as the conformance suite's server scenarios check it): a task tool answers
``resultType: "task"`` with the task flat (``ttlMs``, ``pollIntervalMs``); ``tasks/get``
inlines ``result`` / ``error`` / ``inputRequests``; ``tasks/update`` and ``tasks/cancel``
answer an empty ``{resultType: "complete"}``. MODE ``experimental``: a 2025-11-25 handshake
server with experimental tasks (``tasks.requests.tools.call``, tools with
``execution.taskSupport: "required"``; a call without ``task`` gets -32601): a nested
``task`` object (``ttl``, ``pollInterval``), ``tasks/result`` for the outcome, which sends
its ``elicitation/create`` while input is required.

Tools (each task moves on only when polled, so tests never depend on time):
- ``count_to {n}``: ``working`` ("step k of n") for n polls, then ``hello after n``;
- ``ping_back``: a 60 s poll interval, and at once a status notification saying it is done
  (only a client that listens to notifications finishes it promptly);
- ``forever {ttl_ms?, poll_ms?}``: never ends (asking for polls ``poll_ms`` apart);
  ``tasks/cancel`` makes it ``cancelled``;
- ``confirm``: waits for a yes/no elicitation, then ``confirmed <action> <content>``;
- ``broken``: fails with a protocol error (-32603 "disk on fire");
- ``seen`` (not a task): the methods received so far, comma-separated.
Standard library only; single-threaded (every step answers a message).
"""

from __future__ import annotations

import json
import sys
from typing import Any

MODERN = "2026-07-28"
STAMP = "2026-01-01T00:00:00Z"
TASK_TOOLS = ("count_to", "ping_back", "forever", "confirm", "broken")


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def reply(request_id: Any, **body: Any) -> None:
    send({"jsonrpc": "2.0", "id": request_id, **body})


class Server:
    def __init__(self, mode: str) -> None:
        self.extension = mode == "extension"
        self.seen: list[str] = []
        self.tasks: dict[str, dict[str, Any]] = {}
        #: tasks/result waiting for the answer to our elicitation: our id → (their id, task)
        self.asking: dict[str, tuple[Any, str]] = {}

    # -- the task's wire shape -----------------------------------------------------------

    def envelope(self, task: dict[str, Any]) -> dict[str, Any]:
        ttl, poll = task["ttl"], task["poll"]
        body: dict[str, Any] = {
            "taskId": task["id"],
            "status": task["status"],
            "createdAt": STAMP,
            "lastUpdatedAt": STAMP,
        }
        if task.get("message"):
            body["statusMessage"] = task["message"]
        if self.extension:
            body.update(ttlMs=ttl, pollIntervalMs=poll)
        else:
            body.update(ttl=ttl, pollInterval=poll)
        return body

    def notify(self, task: dict[str, Any], **extra: Any) -> None:
        method = "notifications/tasks" if self.extension else "notifications/tasks/status"
        send({"jsonrpc": "2.0", "method": method, "params": {**self.envelope(task), **extra}})

    # -- tools ---------------------------------------------------------------------------

    def start(self, request_id: Any, params: dict[str, Any]) -> None:
        name, arguments = params["name"], params.get("arguments") or {}
        if not self.extension and "task" not in params:
            reply(request_id, error={"code": -32601, "message": f"{name} needs a task"})
            return
        task = {"id": f"task-{len(self.tasks) + 1}", "tool": name, "status": "working",
                "ttl": arguments.get("ttl_ms"), "poll": arguments.get("poll_ms", 50), "polls": 0,
                "n": int(arguments.get("n", 1))}  # fmt: skip
        if name == "ping_back":
            task["poll"] = 60_000
        self.tasks[task["id"]] = task
        if self.extension:
            reply(request_id, result={"resultType": "task", **self.envelope(task)})
        else:
            reply(request_id, result={"task": self.envelope(task)})
        if name == "ping_back":
            task.update(status="completed", result=text("pinged back"))
            self.notify(task, **({"result": task["result"]} if self.extension else {}))

    def advance(self, task: dict[str, Any]) -> None:
        """One poll's worth of work."""
        if task["status"] != "working":
            return
        task["polls"] += 1
        tool = task["tool"]
        if tool == "count_to":
            if task["polls"] >= task["n"]:
                task.update(
                    status="completed", message=None, result=text(f"hello after {task['n']}")
                )
            else:
                task["message"] = f"step {task['polls']} of {task['n']}"
        elif tool == "confirm":
            task["status"] = "input_required"
        elif tool == "broken":
            task.update(status="failed", error={"code": -32603, "message": "disk on fire"})

    def get(self, request_id: Any, task: dict[str, Any]) -> None:
        self.advance(task)
        body = {**self.envelope(task), "resultType": "complete"}
        if self.extension:
            if task["status"] == "completed":
                body["result"] = task["result"]
            elif task["status"] == "failed":
                body["error"] = task["error"]
            elif task["status"] == "input_required":
                body["inputRequests"] = {"ok": ELICIT}
        reply(request_id, result=body)

    def result(self, request_id: Any, task: dict[str, Any]) -> None:
        """2025-11-25 ``tasks/result``: the outcome, asking first if input is required."""
        if task["status"] == "input_required":
            ours = f"ask-{task['id']}"
            self.asking[ours] = (request_id, task["id"])
            related = {"io.modelcontextprotocol/related-task": {"taskId": task["id"]}}
            params = {**ELICIT["params"], "_meta": related}
            send({"jsonrpc": "2.0", "id": ours, **ELICIT, "params": params})
        elif task["status"] == "completed":
            reply(request_id, result=task["result"])
        elif task["status"] == "failed":
            reply(request_id, error=task["error"])
        else:
            reply(request_id, error={"code": -32602, "message": f"task is {task['status']}"})

    def answered(self, task: dict[str, Any], answer: dict[str, Any]) -> None:
        content = json.dumps(answer.get("content"), sort_keys=True)
        task.update(status="completed", result=text(f"confirmed {answer.get('action')} {content}"))

    # -- the loop ------------------------------------------------------------------------

    def handle(self, message: dict[str, Any]) -> None:
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method is None:
            if request_id in self.asking:
                theirs, task_id = self.asking.pop(request_id)
                task = self.tasks[task_id]
                self.answered(task, message.get("result") or {})
                reply(theirs, result=task["result"])
            return
        self.seen.append(method)
        if request_id is None:
            return
        task = self.tasks.get(params.get("taskId", ""))
        if method == "server/discover" and self.extension:
            found = {"supportedVersions": [MODERN], "capabilities": CAPS, "serverInfo": INFO}
            reply(request_id, result={**found, "ttlMs": 0, "cacheScope": "public"})
        elif method == "initialize" and not self.extension:
            reply(request_id, result={"protocolVersion": "2025-11-25", "capabilities": CAPS_V1,
                                      "serverInfo": INFO})  # fmt: skip
        elif method == "tools/list":
            reply(request_id, result={"tools": TOOLS, "ttlMs": 0, "cacheScope": "public"})
        elif method == "tools/call" and params.get("name") in TASK_TOOLS:
            self.start(request_id, params)
        elif method == "tools/call" and params.get("name") == "seen":
            reply(request_id, result=text(",".join(self.seen)))
        elif method in ("tasks/get", "tasks/update", "tasks/cancel", "tasks/result") and not task:
            reply(request_id, error={"code": -32602, "message": "unknown task"})
        elif method == "tasks/get":
            self.get(request_id, task)  # type: ignore[arg-type]
        elif method == "tasks/result" and not self.extension:
            self.result(request_id, task)  # type: ignore[arg-type]
        elif method == "tasks/update" and self.extension:
            self.answered(task, (params.get("inputResponses") or {}).get("ok") or {})  # type: ignore[arg-type]
            reply(request_id, result={"resultType": "complete"})
        elif method == "tasks/cancel":
            assert task is not None
            if task["status"] in ("working", "input_required"):
                task["status"] = "cancelled"
            ack = {"resultType": "complete"} if self.extension else self.envelope(task)
            reply(request_id, result=ack)
        else:
            reply(request_id, error={"code": -32601, "message": f"Method not found: {method}"})


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


INFO = {"name": "tasks", "version": "1"}
CAPS = {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
CAPS_V1 = {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}, "cancel": {}}}
ELICIT = {
    "method": "elicitation/create",
    "params": {
        "message": "Go ahead?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
    },
}
_INTEGER = {"type": "integer"}
_OBJECT = {"type": "object", "properties": {"n": _INTEGER, "ttl_ms": _INTEGER, "poll_ms": _INTEGER}}
TOOLS = [
    {"name": name, "inputSchema": _OBJECT, "execution": {"taskSupport": "required"}}
    for name in TASK_TOOLS
] + [{"name": "seen", "inputSchema": {"type": "object"}}]


if __name__ == "__main__":
    server = Server(sys.argv[1])
    for line in sys.stdin:
        server.handle(json.loads(line))
