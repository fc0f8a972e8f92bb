#!/usr/bin/env python3
"""A stdio MCP server with many generated tools, for tool search: ``catalog_server.py FIRST COUNT``.

`catalog()` is a deterministic list of 500 business and operations tools (10 verbs × 50
nouns, e.g. ``refund_payment``, ``rollback_deployment``) with realistic descriptions and
schemas; the server offers ``catalog()[FIRST:FIRST + COUNT]``. ``tools/call`` answers
``<tool> done: <arguments as JSON>``. Standard library only; newline-delimited JSON-RPC
on stdin/stdout; exits when stdin closes. Tests import `catalog` for in-memory tools too.
"""

from __future__ import annotations

import json
import sys
from typing import Any

#: (noun, what it is) — the first 25 are business records, the last 25 operations objects.
NOUNS = [
    ("invoice", "a bill sent to a customer, with line items, taxes and a due date"),
    ("customer", "a person or company that buys from us, with contacts and billing details"),
    ("subscription", "a recurring plan a customer pays for, renewed every period"),
    ("payment", "money received from a customer by card or bank transfer"),
    ("coupon", "a discount code that lowers the price of an order or a plan"),
    ("product", "an item in the catalogue, with its price, stock and description"),
    ("order", "a customer's purchase of one or more products"),
    ("shipment", "a parcel on its way to a customer, with carrier and tracking number"),
    ("warehouse", "a storage site holding stock of products"),
    ("supplier", "a company we buy products or services from"),
    ("employee", "a member of staff with role, team and manager"),
    ("timesheet", "the hours an employee worked per day and project"),
    ("expense", "a cost an employee paid and wants reimbursed, with its receipt"),
    ("budget", "the money planned for a team or project over a period"),
    ("ledger", "the accounting journal of debits and credits"),
    ("contract", "a signed agreement with a customer or supplier"),
    ("lead", "a prospective customer found by sales or marketing"),
    ("campaign", "a marketing campaign sent by email or ads to an audience"),
    ("ticket", "a customer support request with its conversation and status"),
    ("survey", "a questionnaire sent to customers, with its answers"),
    ("calendar_event", "a meeting or appointment on a shared calendar"),
    ("document", "a text document in the shared drive"),
    ("spreadsheet", "a sheet of rows and formulas in the shared drive"),
    ("contact", "a person's name, email address and phone number"),
    ("report", "a scheduled summary of sales, finance or support figures"),
    ("repository", "a git repository with its branches, commits and settings"),
    ("branch", "a line of development in a git repository"),
    ("pull_request", "a proposed change to a repository, with review comments"),
    ("issue", "a bug report or feature request in the issue tracker"),
    ("release", "a tagged version of the software with its release notes"),
    ("pipeline", "a CI pipeline that builds and tests a commit"),
    ("deployment", "a rollout of a release to an environment such as staging or production"),
    ("container", "a running container with its image, logs and resource usage"),
    ("cluster", "a Kubernetes cluster with its nodes and namespaces"),
    ("secret", "an encrypted value such as a password or token stored in the vault"),
    ("dns_record", "a DNS record of one of our domains"),
    ("certificate", "a TLS certificate and its expiry date"),
    ("alert", "a monitoring alert that fired, with its severity and owner"),
    ("dashboard", "a monitoring dashboard of charts"),
    ("log_stream", "a stream of application log lines, searchable by time and text"),
    ("metric", "a time series such as latency, error rate or CPU usage"),
    ("incident", "an outage or degradation being handled by the on-call team"),
    ("runbook", "step-by-step instructions for handling an operational task"),
    ("backup", "a snapshot of a database or volume that can be restored"),
    ("database", "a managed SQL database instance"),
    ("queue", "a message queue with its consumers and backlog"),
    ("bucket", "an object storage bucket with its files and access policy"),
    ("feature_flag", "a switch that turns a feature on for some users"),
    ("api_key", "a credential that lets a program call our API"),
    ("webhook", "an HTTP callback fired when an event happens"),
]

#: (verb, what it does, the arguments it takes beyond the record's id)
VERBS = [
    ("create", "Create a new {n}", "fields"),
    ("get", "Get one {n} by its id, with all its details", "id"),
    ("list", "List {n} records, newest first, with filters and paging", "filter"),
    ("update", "Update some fields of an existing {n}", "id+fields"),
    ("delete", "Delete a {n} permanently (this cannot be undone)", "id"),
    ("search", "Search {n} records by free text", "query"),
    ("archive", "Archive a {n} so it is hidden from lists but kept", "id"),
    ("restore", "Restore an archived or deleted {n}", "id"),
    ("export", "Export {n} records as CSV or JSON to a file", "filter+format"),
    ("validate", "Check a {n} for missing or inconsistent data and report problems", "id"),
]


def _schema(noun: str, kind: str) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    if "id" in kind:
        properties["id"] = {"type": "string", "description": f"The id of the {noun}"}
        required.append("id")
    if "fields" in kind:
        properties["fields"] = {
            "type": "object",
            "description": f"The {noun}'s fields to set, by name",
            "additionalProperties": True,
        }
        required.append("fields")
    if "query" in kind:
        properties["query"] = {"type": "string", "description": "Words to look for"}
        required.append("query")
    if "filter" in kind:
        properties["created_after"] = {"type": "string", "format": "date-time"}
        properties["status"] = {"type": "string", "enum": ["active", "archived", "all"]}
        properties["limit"] = {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}
        properties["cursor"] = {"type": "string", "description": "From the previous page"}
    if "format" in kind:
        properties["format"] = {"type": "string", "enum": ["csv", "json"]}
    return {"type": "object", "properties": properties, "required": required}


def catalog() -> list[dict[str, Any]]:
    """500 tool definitions (wire shape), nouns outer, verbs inner."""
    tools = []
    for noun, what in NOUNS:
        label = noun.replace("_", " ")
        for verb, does, kind in VERBS:
            tools.append(
                {
                    "name": f"{verb}_{noun}",
                    "description": f"{does.format(n=label)}. A {label} is {what}.",
                    "inputSchema": _schema(label, kind),
                }
            )
    return tools


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def main(first: int, count: int) -> None:
    tools = catalog()[first : first + count]
    names = {t["name"] for t in tools}
    for line in sys.stdin:
        message = json.loads(line)
        request_id = message.get("id")
        if request_id is None:
            continue
        method = message.get("method")
        params = message.get("params") or {}
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "catalog", "version": "1"},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call" and params.get("name") in names:
            arguments = json.dumps(params.get("arguments") or {}, sort_keys=True)
            text = f"{params['name']} done: {arguments}"
            result = {"content": [{"type": "text", "text": text}]}
        elif method == "tools/call":
            error = {"code": -32602, "message": f"Unknown tool: {params.get('name')}"}
            _send({"jsonrpc": "2.0", "id": request_id, "error": error})
            continue
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            _send({"jsonrpc": "2.0", "id": request_id, "error": error})
            continue
        _send({"jsonrpc": "2.0", "id": request_id, "result": result})


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
