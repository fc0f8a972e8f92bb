#!/usr/bin/env python3
"""An MCP stdio server for cat-code's tests, standard library only, misbehaving on request.

Tools: ``echo {text}``; ``big {size}`` (a text of exactly ``size`` characters, ending in
``END``); ``crash {code, message}`` (writes ``message`` to stderr and exits at once, mid-call);
``spew {bytes}`` (writes that much to stderr, then answers); ``environ`` (the environment this
process was started with, as JSON); ``cwd``; ``add_tool {name}`` / ``remove_tool {name}``
(change the tool list and send ``notifications/tools/list_changed`` before answering);
``block`` (never answers); ``flood {bytes}`` (writes that many bytes to stdout with no
newline, then hangs).

Misbehaviour comes from the flags below. The server exits when stdin closes unless told not to.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
NOISE = [
    "this line is not JSON",
    "{broken json",
    "[1, 2, 3]",
    '"a string"',
    "   ",
    "\x00\xff",
    '{"jsonrpc": "2.0", "id": "nobody-asked", "result": {}}',
    '{"jsonrpc": "2.0", "id": [1], "result": {}}',
    '{"jsonrpc": "2.0", "id": {"a": 1}, "error": {"code": 1, "message": "x"}}',
    "[" * 100_000,
]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--noise", action="store_true", help="write non-JSON lines around answers")
    parser.add_argument(
        "--reverse-batch", type=int, default=0, metavar="N",
        help="hold tools/call answers until N are waiting, then answer them newest first",
    )  # fmt: skip
    parser.add_argument("--ignore-eof", action="store_true", help="keep running after stdin EOF")
    parser.add_argument(
        "--ignore-term", action="store_true",
        help="ignore SIGTERM (with --log-requests, noting a SIGTERM line there)",
    )  # fmt: skip
    parser.add_argument("--pid-file", help="write our pid here before serving")
    parser.add_argument("--grandchild-pid-file", help="start a sleeping grandchild, write its pid")
    parser.add_argument("--exit-at-start", type=int, help="write to stderr and exit with this code")
    parser.add_argument("--hang-initialize", action="store_true", help="never answer initialize")
    parser.add_argument("--hang-tools-list", action="store_true", help="never answer tools/list")
    parser.add_argument(
        "--log-requests", metavar="FILE",
        help="append a line to FILE for each request: its method (and tool name)",
    )  # fmt: skip
    parser.add_argument(
        "--gate", nargs=2, metavar=("DIR", "N"),
        help="create a file in DIR, then wait until DIR holds N files before serving",
    )  # fmt: skip
    parser.add_argument("--version", default=None, help="answer initialize with this version")
    parser.add_argument("--tools", default="echo", help="comma-separated initial tool names")
    return parser.parse_args()


ARGS = parse_args()
_write_lock = threading.Lock()
_tools: list[str] = [t for t in ARGS.tools.split(",") if t]
_held: list[tuple[Any, dict[str, Any]]] = []


def write_lines(*lines: str) -> None:
    """One write, so the client reads the lines in one chunk."""
    with _write_lock:
        sys.stdout.write("".join(line + "\n" for line in lines))
        sys.stdout.flush()


def send(message: dict[str, Any]) -> None:
    line = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    if ARGS.noise:
        write_lines(*NOISE, line, "noise after the answer")
    else:
        write_lines(line)


def tool_list() -> list[dict[str, Any]]:
    return [
        {"name": name, "description": f"test tool {name}", "inputSchema": {"type": "object"}}
        for name in _tools
    ]


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def initial_environment() -> dict[str, str]:
    """The environment we were started with (Python may add LC_CTYPE to os.environ itself)."""
    try:
        raw = Path("/proc/self/environ").read_bytes()
    except OSError:
        return dict(os.environ)
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def call_tool(name: str, args: dict[str, Any]) -> dict[str, Any]:
    if name == "echo":
        return text(str(args.get("text", "")))
    if name == "big":
        size = int(args["size"])
        return text("x" * (size - 3) + "END")
    if name == "crash":
        sys.stderr.write(str(args.get("message", "crashing")) + "\n")
        sys.stderr.flush()
        os._exit(int(args.get("code", 3)))
    if name == "spew":
        line = "e" * 99 + "\n"
        lines = -(-int(args["bytes"]) // len(line))  # whole lines, at least ``bytes``
        while lines > 0:
            sys.stderr.write(line * min(lines, 1000))
            lines -= 1000
        # A line far longer than anyone should keep, then a recognisable last line.
        sys.stderr.write("L" * 100_000 + "\nlast stderr line\n")
        sys.stderr.flush()
        return text("spewed")
    if name == "flood":
        sys.stdout.write("x" * int(args["bytes"]))
        sys.stdout.flush()
        threading.Event().wait()
    if name == "environ":
        return text(json.dumps(initial_environment()))
    if name == "cwd":
        return text(os.getcwd())
    if name == "add_tool":
        _tools.append(str(args["name"]))
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return text("added")
    if name == "remove_tool":
        _tools.remove(str(args["name"]))
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return text("removed")
    raise LookupError(name)


def handle(message: dict[str, Any]) -> None:
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if request_id is None or method is None:
        return  # a notification, or an answer to something we never ask
    log(f"{method} {params.get('name', '')}".rstrip())
    if method == "tools/call" and params.get("name") == "block":
        return
    if method == "initialize":
        if ARGS.hang_initialize:
            return
        asked = params.get("protocolVersion")
        version = ARGS.version or (asked if asked in VERSIONS else VERSIONS[0])
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "misbehaving", "version": "0"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        if ARGS.hang_tools_list:
            return
        result = {"tools": tool_list()}
    elif method == "tools/call":
        try:
            result = call_tool(str(params.get("name")), params.get("arguments") or {})
        except LookupError:
            error = {"code": -32602, "message": f"Unknown tool: {params.get('name')}"}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})
            return
        if ARGS.reverse_batch:
            _held.append((request_id, result))
            if len(_held) >= ARGS.reverse_batch:
                for held_id, held_result in reversed(_held):
                    send({"jsonrpc": "2.0", "id": held_id, "result": held_result})
                _held.clear()
            return
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        send({"jsonrpc": "2.0", "id": request_id, "error": error})
        return
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def log(line: str) -> None:
    if ARGS.log_requests:
        with open(ARGS.log_requests, "a") as file:
            file.write(line + "\n")


def wait_for_gate(directory: str, count: int) -> None:
    Path(directory, str(os.getpid())).touch()
    deadline = time.monotonic() + 30
    while len(os.listdir(directory)) < count:
        if time.monotonic() > deadline:
            sys.stderr.write("gate: the other servers never started\n")
            sys.exit(4)
        time.sleep(0.01)


def main() -> None:
    if ARGS.ignore_term:
        ignore = (lambda *_: log("SIGTERM")) if ARGS.log_requests else signal.SIG_IGN
        signal.signal(signal.SIGTERM, ignore)
    if ARGS.pid_file:
        Path(ARGS.pid_file).write_text(str(os.getpid()))
    if ARGS.grandchild_pid_file:
        # Inherits our stdout and stderr: the nasty case, it keeps the pipes open.
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)"], stdin=subprocess.DEVNULL
        )
        Path(ARGS.grandchild_pid_file).write_text(str(child.pid))
    if ARGS.exit_at_start is not None:
        sys.stderr.write(f"fatal: cannot start (exit {ARGS.exit_at_start})\n")
        sys.exit(ARGS.exit_at_start)
    if ARGS.gate:
        wait_for_gate(ARGS.gate[0], int(ARGS.gate[1]))
    sys.stderr.write("misbehaving server ready\n")
    sys.stderr.flush()
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))
    if ARGS.ignore_eof:
        threading.Event().wait()


if __name__ == "__main__":
    main()
