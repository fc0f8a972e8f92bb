"""A scripted stdio MCP server for the era tests: ``python era_server.py MODE``.

MODE ``modern``: 2026-07-28 only — ``initialize`` is refused (naming the versions it
speaks), the first request of all is refused with -32022 once, ``ask`` asks for input over
two rounds (requestState echoed). MODE ``silent``: a handshake server that never answers
a method it does not know (the era probe must time out). MODE ``env``: the mode named by
``$ERA_SERVER_MODE``, so one command line can speak either era (an upgrade or a
downgrade between two runs). Every request is logged to stderr as ``seen METHOD``.
"""

from __future__ import annotations

import json
import os
import sys

MODERN = "2026-07-28"


def reply(message: dict, **body: object) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **body}) + "\n")
    sys.stdout.flush()


def main(mode: str) -> None:
    refused_version = False
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method")
        sys.stderr.write(f"seen {method}\n")
        sys.stderr.flush()
        if "id" not in message:
            continue
        params = message.get("params") or {}
        if mode == "silent":
            if method == "initialize":
                reply(
                    message,
                    result={
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "silent", "version": "1"},
                    },
                )
            elif method == "tools/list":
                reply(message, result={"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
            continue
        meta = params.get("_meta") or {}
        if method == "initialize":
            reply(
                message,
                error={"code": -32022, "message": "modern only", "data": {"supported": [MODERN]}},
            )
            continue
        if meta.get("io.modelcontextprotocol/protocolVersion") != MODERN:
            reply(message, error={"code": -32602, "message": "missing _meta"})
            continue
        if not refused_version and method != "server/discover":
            refused_version = True
            reply(
                message,
                error={
                    "code": -32022,
                    "message": "Unsupported protocol version",
                    "data": {"supported": [MODERN], "requested": MODERN},
                },
            )
            continue
        info = {"io.modelcontextprotocol/serverInfo": {"name": "era-modern", "version": "2"}}
        if method == "server/discover":
            reply(
                message,
                result={
                    "supportedVersions": [MODERN],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "era-modern", "version": "1"},
                    "ttlMs": 0,
                    "cacheScope": "public",
                },
            )
        elif method == "tools/list":
            reply(
                message,
                result={
                    "tools": [{"name": "ask", "inputSchema": {"type": "object"}}],
                    "ttlMs": 60000,
                    "cacheScope": "public",
                    "_meta": info,
                },
            )
        elif method == "tools/call":
            state = params.get("requestState")
            answers = params.get("inputResponses") or {}
            if state is None:
                reply(
                    message,
                    result={
                        "resultType": "input_required",
                        "requestState": "r1",
                        "inputRequests": {
                            "who": {
                                "method": "elicitation/create",
                                "params": {"message": "Who?", "requestedSchema": {}},
                            }
                        },
                    },
                )
            elif state == "r1":
                who = answers["who"]
                reply(
                    message,
                    result={
                        "resultType": "input_required",
                        "requestState": json.dumps({"who": who}),
                        "inputRequests": {"roots": {"method": "roots/list"}},
                    },
                )
            else:
                who = json.loads(state)["who"]
                roots = answers["roots"]["roots"]
                text = f"{who.get('action')} {who.get('content')} {roots[0]['uri']}"
                reply(message, result={"content": [{"type": "text", "text": text}]})
        else:
            reply(message, error={"code": -32601, "message": f"Method not found: {method}"})


if __name__ == "__main__":
    main(os.environ["ERA_SERVER_MODE"] if sys.argv[1] == "env" else sys.argv[1])
