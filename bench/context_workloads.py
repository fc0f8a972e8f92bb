"""``context.tool_tokens``: how many tokens of tool definitions one model request carries.

20 MCP servers of 25 tools each (500 in-memory tools with descriptions and schemas the
size of real servers': a paragraph of description, four to seven described parameters),
behind the real `Agent` with a provider that records what it is sent. Measured with tool
search off and on auto (a 200k-token Claude window): the first request, and the request
after one ``search_tools`` call that found five tools. Tokens are estimated as
characters / 4 of the definitions' JSON, the same estimate the auto decision uses. The
numbers are deterministic: one measurement is the measurement.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cat_code.agent.loop import Agent
from cat_code.agent.providers.base import (
    AssistantMessage,
    Message,
    ModelResponse,
    TextSink,
    ToolCall,
    ToolSpec,
)
from cat_code.agent.tool_search import Mode, ToolSearch, estimate_tokens
from cat_code.tools.base import ProgressCallback, Tool, ToolOwner, ToolResult
from cat_code.tools.builtin import builtin_tools
from cat_code.tools.registry import ToolRegistry

MODEL = "anthropic:claude-sonnet-5-5"

#: server → the five kinds of record its tools work on.
SERVERS: dict[str, tuple[str, ...]] = {
    "github": ("issue", "pull request", "repository", "workflow run", "release"),
    "gitlab": ("merge request", "pipeline", "project", "snippet", "environment"),
    "jira": ("issue", "sprint", "board", "epic", "worklog"),
    "linear": ("issue", "project", "cycle", "team", "comment"),
    "slack": ("message", "channel", "user", "reminder", "file"),
    "notion": ("page", "database", "block", "comment", "user"),
    "gdrive": ("file", "folder", "permission", "revision", "shared drive"),
    "gmail": ("message", "thread", "draft", "label", "filter"),
    "calendar": ("event", "calendar", "attendee", "reminder", "room"),
    "postgres": ("table", "query", "index", "schema", "role"),
    "sentry": ("issue", "event", "release", "project", "alert rule"),
    "datadog": ("monitor", "dashboard", "metric", "log query", "incident"),
    "pagerduty": ("incident", "service", "schedule", "escalation policy", "on-call"),
    "kubernetes": ("pod", "deployment", "service", "config map", "namespace"),
    "aws": ("instance", "bucket", "lambda function", "security group", "log group"),
    "stripe": ("customer", "invoice", "subscription", "payment intent", "refund"),
    "hubspot": ("contact", "company", "deal", "ticket", "note"),
    "figma": ("file", "component", "comment", "project", "style"),
    "confluence": ("page", "space", "attachment", "comment", "label"),
    "filesystem": ("file", "directory", "archive", "symlink", "search index"),
}
OPERATIONS = ("list", "get", "create", "update", "delete")


def _properties(operation: str, record: str, server: str) -> dict[str, Any]:
    described = {
        "owner": f"The {server} account or organisation that owns the {record}.",
        "id": f"The identifier of the {record}, as returned by list or create.",
    }
    if operation == "list":
        return {
            "owner": {"type": "string", "description": described["owner"]},
            "state": {"type": "string", "enum": ["open", "closed", "all"],
                      "description": f"Only {record}s in this state (default open)."},
            "since": {"type": "string", "format": "date-time",
                      "description": f"Only {record}s changed after this ISO 8601 time."},
            "sort": {"type": "string", "enum": ["created", "updated", "name"],
                     "description": "Order of the results, newest first."},
            "per_page": {"type": "integer", "minimum": 1, "maximum": 100,
                         "description": "Results per page (default 30, at most 100)."},
            "page": {"type": "integer", "minimum": 1,
                     "description": "Page number of the results to fetch (from 1)."},
        }  # fmt: skip
    properties: dict[str, Any] = {"owner": {"type": "string", "description": described["owner"]}}
    if operation != "create":
        properties["id"] = {"type": "string", "description": described["id"]}
    if operation in ("create", "update"):
        properties |= {
            "title": {"type": "string", "description": f"The {record}'s title or name."},
            "body": {"type": "string",
                     "description": f"The {record}'s description, in Markdown."},
            "labels": {"type": "array", "items": {"type": "string"},
                       "description": "Labels to set; replaces the current ones."},
            "assignees": {"type": "array", "items": {"type": "string"},
                          "description": "Usernames to assign; at most 10."},
        }  # fmt: skip
    if operation == "delete":
        properties["confirm"] = {
            "type": "boolean",
            "description": f"Must be true: deleting a {record} cannot be undone.",
        }
    return properties


def _description(operation: str, record: str, server: str) -> str:
    does = {
        "list": f"List {record}s in {server}, with filters for state and time and paging",
        "get": f"Get one {record} from {server} by its id, with every field and its history",
        "create": f"Create a new {record} in {server}",
        "update": f"Update fields of an existing {record} in {server}; fields left out stay",
        "delete": f"Delete a {record} from {server} permanently",
    }[operation]
    return (
        f"{does}. Use this when the user asks about {record}s in {server}, or when a task "
        f"needs {record} data that is not already in the conversation. Returns JSON with the "
        f"{record}'s id, title, state, author, timestamps and URL. Requires the {server} "
        "token to have access to the owner; a 404 means the id is wrong or not visible to "
        "it. Rate limits apply: on a 429, wait and call again instead of retrying at once."
    )


class BenchTool(Tool):
    """An MCP-like tool held in memory; it is never called here."""

    def __init__(self, server: str, operation: str, record: str) -> None:
        self.name = f"mcp__{server}__{operation}_{record.replace(' ', '_').replace('-', '_')}"
        self.description = _description(operation, record, server)
        properties = _properties(operation, record, server)
        required = [p for p in ("owner", "id", "title", "confirm") if p in properties]
        self.input_schema = {"type": "object", "properties": properties, "required": required}
        self.owner = ToolOwner(server)

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        return ToolResult(f"{self.name}: ok")


def bench_tools() -> list[Tool]:
    """20 servers × 25 tools."""
    return [
        BenchTool(server, operation, record)
        for server, records in SERVERS.items()
        for record in records
        for operation in OPERATIONS
    ]


class _Recorder:
    """A provider that notes the tokens of the tool definitions of every request."""

    name = MODEL

    def __init__(self, steps: list[ModelResponse]) -> None:
        self.steps = steps
        self.tokens: list[int] = []

    async def prepare(self) -> None:
        pass

    async def complete(
        self,
        system: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        on_text: TextSink | None = None,
    ) -> ModelResponse:
        self.tokens.append(sum(estimate_tokens(_spec_json(t)) for t in tools))
        return self.steps.pop(0)

    async def close(self) -> None:
        pass


def _spec_json(spec: ToolSpec) -> str:
    """As `tool_search.definition_json` words a `Tool`: the estimate the decision uses."""
    definition = {
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.input_schema,
    }
    return json.dumps(definition, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class ToolTokens:
    off: int
    auto: int
    #: The request after one search that found five tools (auto).
    auto_after_search: int
    tools: int


async def _requests(mode: Mode) -> list[int]:
    registry = ToolRegistry([*builtin_tools(), *bench_tools()])
    search = ToolCall("s1", "search_tools", {"query": "create github issue", "limit": 5})
    steps = [
        ModelResponse(AssistantMessage(tool_calls=[search]), stop_reason="tool_use"),
        ModelResponse(AssistantMessage(text="done")),
    ]
    provider = _Recorder(steps)
    agent = Agent(provider, registry, tool_search=ToolSearch(registry, MODEL, mode=mode))
    if mode is Mode.OFF:
        provider.steps = steps[1:]  # nothing to search: one request is the measurement
    outcome = await agent.run("file a bug about the login page")
    assert outcome.status == "done", outcome
    return provider.tokens


def tool_tokens() -> ToolTokens:
    """Tokens of tool definitions per request, search off vs auto."""
    off = asyncio.run(_requests(Mode.OFF))
    auto = asyncio.run(_requests(Mode.AUTO))
    return ToolTokens(off=off[0], auto=auto[0], auto_after_search=auto[1], tools=500)


if __name__ == "__main__":
    print(tool_tokens())
