"""Tool search: which tool definitions go on each model request, and the `search_tools` tool.

With many MCP servers the tool definitions alone fill the context window. When the
registered MCP tools' definitions (name + description + JSON schema, estimated at one
token per 4 characters of their JSON) exceed a budget — 10% of the model's estimated
context window — or when ``CAT_CODE_TOOL_SEARCH=on``, those tools are *deferred*: the
model gets a built-in ``search_tools`` tool instead, and the tools a search returned are
sent on every following request of the conversation. Invariants:

- What is sent is a pure function of the registry, the mode and the conversation: the
  tools "found" are read back from the conversation (search results carry `FoundTools`
  in ``ToolResult.raw``; a deferred tool the model called by its exact name counts as
  found too), so ``/clear`` and the loop's repairs forget them with the messages.
  A compaction summarizes search results away: the tools they had found are ``kept``
  (and saved with the compaction point), until ``/clear``.
- Never deferred: built-in tools and the tools of servers whose entry has
  ``"alwaysLoad": true`` (``Tool.always_load``). Only deferrable tools count toward the
  budget: they are what search would save.
- The decision is re-made on every request, so servers that connect later or reload
  switch it; estimates and search indexes are cached per tool object, so 500+ tools
  cost a dictionary lookup each, not a JSON dump.
- A call to a deferred tool the model has not searched for still works when the name is
  exact: the registry, not the request, decides what can run (the model may know the
  name from an earlier search, a server's instructions or the user).

The module knows `Tool`, never MCP: a tool's server is read from its ``owner``.
"""

from __future__ import annotations

import enum
import json
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cat_code.agent import models
from cat_code.agent.models import UNKNOWN
from cat_code.agent.permissions import server_of
from cat_code.agent.providers.base import AssistantMessage, Message, UserMessage
from cat_code.tools.base import ProgressCallback, Tool, ToolResult
from cat_code.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

ENV_VAR = "CAT_CODE_TOOL_SEARCH"
SEARCH_TOOL_NAME = "search_tools"
#: Share of the context window the deferrable tool definitions may take before search is on.
BUDGET_PERCENT = 10
#: Characters per token: the usual rough estimate for English text and JSON.
CHARS_PER_TOKEN = 4
DEFAULT_LIMIT = 5
MAX_LIMIT = 50


class Mode(enum.StrEnum):
    AUTO = "auto"
    ON = "on"
    OFF = "off"


def mode_from_env(environ: Mapping[str, str] | None = None) -> Mode:
    """``CAT_CODE_TOOL_SEARCH`` as a mode; unset or empty is auto, a bad value warns once."""
    raw = (os.environ if environ is None else environ).get(ENV_VAR, "")
    value = raw.strip().lower()
    if not value:
        return Mode.AUTO
    try:
        return Mode(value)
    except ValueError:
        logger.warning("%s=%r is not auto, on or off; using auto", ENV_VAR, raw)
        return Mode.AUTO


# -- context windows -----------------------------------------------------------------------

#: Any model the catalogue does not know: the window of a typical local model, so search
#: errs on the side of on.
DEFAULT_WINDOW = UNKNOWN.context_window


def context_window(model: str) -> int:
    """The context window of ``provider:name`` as the catalogue and the user's
    ``$CAT_CODE_CONTEXT_WINDOW`` give it (`agent.models.context_window`)."""
    return models.context_window(model)


# -- estimates -------------------------------------------------------------------------------


def definition_json(tool: Tool) -> str:
    """A tool's definition as the model receives it (name, description, schema), as JSON."""
    definition = {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.input_schema,
    }
    return json.dumps(definition, ensure_ascii=False, separators=(",", ":"), default=str)


def estimate_tokens(text: str) -> int:
    """Characters / 4, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def deferrable(tool: Tool) -> bool:
    """Whether search may keep this tool off a request: an MCP tool not marked alwaysLoad."""
    return server_of(tool) is not None and not tool.always_load


# -- the decision ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchDecision:
    """Whether search is on for the current tools, and why."""

    mode: Mode
    on: bool
    #: Estimated tokens of the deferrable tools' definitions.
    tokens: int
    #: How many tools are deferrable.
    count: int
    window: int
    budget: int

    @property
    def reason(self) -> str:
        if self.mode is not Mode.AUTO:
            return f"{ENV_VAR}={self.mode}"
        relation = ">" if self.on else "≤"
        return (
            f"auto: MCP tool definitions ≈ {self.tokens:,} tokens {relation} "
            f"{BUDGET_PERCENT}% of {self.window:,}"
        )

    def __str__(self) -> str:
        return f"tool search: {'on' if self.on else 'off'} ({self.reason})"


def status_without_model(environ: Mapping[str, str] | None = None) -> str:
    """The ``/tools`` search line before a model is chosen: auto needs the model's window."""
    mode = mode_from_env(environ)
    if mode is Mode.AUTO:
        return f"tool search: {mode} (decided once a model is chosen)"
    return f"tool search: {mode} ({ENV_VAR}={mode})"


# -- search ----------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
#: Words that say nothing about which tool is meant.
_STOPWORDS = frozenset(
    "a an and any are as at be by for from i in into is it me my of on or please some "
    "that the this to tool tools use using want with".split()
)


def _words(text: str) -> list[str]:
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def _stem(word: str) -> str:
    """A crude stem, the same for a word's plural and tenses (issues, issue → issu;
    created, creating, create → creat), so they match each other."""
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + replacement
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


#: (suffix, replacement), the first that fits is taken off.
_SUFFIXES = (
    ("ies", "y"), ("sses", "ss"), ("xes", "x"), ("ches", "ch"), ("shes", "sh"),
    ("ss", "ss"), ("s", ""), ("ing", ""), ("ed", ""),
)  # fmt: skip


def _overlaps(word: str, term: str) -> bool:
    """One is a prefix of the other (repo / repository), both long enough to mean it."""
    return len(word) >= 3 and (word.startswith(term) or term.startswith(word))


@dataclass(frozen=True, slots=True)
class _Entry:
    """What search looks at in one tool, computed once per tool object."""

    tool: Tool
    name: str
    server: frozenset[str]
    name_words: tuple[str, ...]
    name_stems: frozenset[str]
    description: str
    description_stems: frozenset[str]

    @classmethod
    def of(cls, tool: Tool) -> _Entry:
        server = server_of(tool) or ""
        own_name = tool.name
        prefix = f"mcp__{server}__"
        if own_name.startswith(prefix):  # the server's part is scored apart, lower
            own_name = own_name[len(prefix) :]
        name_words = tuple(_words(own_name))
        description = " ".join(tool.description.split()).lower()
        return cls(
            tool=tool,
            name=tool.name.lower(),
            server=frozenset(_words(server)),
            name_words=name_words,
            name_stems=frozenset(_stem(w) for w in name_words),
            description=description,
            description_stems=frozenset(_stem(w) for w in _words(description)),
        )

    def term_score(self, term: str) -> int:
        """How well one query word fits this tool (0: not at all)."""
        if term in self.name_words:
            return 10
        stem = _stem(term)
        if stem in self.name_stems:
            return 8
        if len(term) >= 3 and any(_overlaps(w, term) for w in self.name_words):
            return 6
        if term in self.server:
            return 5
        if stem in self.description_stems:
            return 3
        if len(term) >= 4 and term in self.description:
            return 1
        return 0


@dataclass(frozen=True, slots=True)
class FoundTools:
    """The ``raw`` of a `search_tools` result: the registered names it made available."""

    names: tuple[str, ...]


def parse_query(query: str) -> tuple[list[str], list[str]]:
    """(required words, other words) of a keyword query; ``+word`` is required."""
    required: list[str] = []
    optional: list[str] = []
    for token in query.split():
        target = required if token.startswith("+") else optional
        for word in _words(token):
            if word not in _STOPWORDS and word not in required and word not in optional:
                target.append(word)
    return required, optional


def rank(entries: Iterable[_Entry], query: str) -> list[Tool]:
    """Tools matching ``query``, best first (ties by name); empty when nothing matches."""
    required, optional = parse_query(query)
    terms = required + optional
    if not terms:
        return []
    phrase = " ".join(_words(query))
    scored: list[tuple[int, str, Tool]] = []
    for entry in entries:
        scores = [entry.term_score(term) for term in terms]
        if not all(scores[: len(required)]):
            continue
        matched = sum(1 for s in scores if s)
        if not matched:
            continue
        # Tools that match more of the words beat tools that match one word very well.
        total = sum(scores) + 6 * (matched - 1)
        if len(terms) > 1 and (phrase in entry.description or phrase in " ".join(entry.name_words)):
            total += 4
        scored.append((-total, entry.name, entry.tool))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [tool for _, _, tool in scored]


# -- the search_tools tool -------------------------------------------------------------------

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": (
                "Keywords matched against tool names and descriptions, e.g. 'create issue' "
                "('+word' makes a word required); or 'select:NAME,NAME' to load tools by "
                "exact name."
            ),
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "description": f"How many tools to return at most (default {DEFAULT_LIMIT}).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


class SearchTool(Tool):
    """``search_tools``: finds deferred tools and hands back their full definitions."""

    name = SEARCH_TOOL_NAME
    read_only = True

    def __init__(self, search: ToolSearch) -> None:
        self._search = search
        self.description = "Search the tools of the connected MCP servers."
        self.input_schema = _SCHEMA

    def describe(self, deferred: Sequence[Tool]) -> None:
        """Name the servers whose tools are waiting to be found, so the model knows to ask."""
        counts: dict[str, int] = {}
        for tool in deferred:
            server = server_of(tool) or str(tool.owner)
            counts[server] = counts.get(server, 0) + 1
        servers = ", ".join(f"{name} ({n})" for name, n in list(counts.items())[:30])
        if len(counts) > 30:
            servers += f", and {len(counts) - 30} more servers"
        self.description = (
            f"Find tools you do not see yet. {len(deferred)} more tools of MCP servers are "
            f"available but not loaded — by server: {servers}. Search them by keywords "
            "(matched against tool names and descriptions); the best matches come back with "
            "their full definitions, and from then on you can call them like any other tool. "
            "'select:NAME,NAME' loads tools by exact name. Search before saying a tool you "
            "need does not exist."
        )

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult.error("Error: search_tools needs a non-empty 'query' string.")
        limit = arguments.get("limit", DEFAULT_LIMIT)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            return ToolResult.error(f"Error: 'limit' must be a whole number from 1 to {MAX_LIMIT}.")
        return self._search.run_query(query.strip(), min(limit, MAX_LIMIT))


class ToolSearch:
    """The tool-search state of one agent: its mode, its model's budget, the tool caches."""

    def __init__(self, registry: ToolRegistry, model: str, *, mode: Mode | None = None) -> None:
        self.registry = registry
        self.mode = mode_from_env() if mode is None else mode
        self.window = context_window(model)
        self.budget = self.window * BUDGET_PERCENT // 100
        self.search_tool = SearchTool(self)
        # Per tool object: id → (tool, estimated tokens, search entry). The tool is kept so
        # its id cannot be reused by another object while the entry is alive.
        self._cache: dict[int, tuple[Tool, int, _Entry]] = {}
        self._last: SearchDecision | None = None
        #: Tools found in the part of the conversation a compaction summarized.
        self.kept: set[str] = set()

    def _cached(self, tool: Tool) -> tuple[Tool, int, _Entry]:
        hit = self._cache.get(id(tool))
        if hit is None or hit[0] is not tool:
            hit = (tool, estimate_tokens(definition_json(tool)), _Entry.of(tool))
            self._cache[id(tool)] = hit
        return hit

    def _deferrable(self) -> list[Tool]:
        tools = [t for t in self.registry.list() if deferrable(t)]
        if len(self._cache) > 2 * len(tools) + 64:  # tools came and went: drop the dead
            alive = {id(t) for t in tools}
            self._cache = {k: v for k, v in self._cache.items() if k in alive}
        return tools

    def decide(self) -> SearchDecision:
        """Whether search is on for the tools registered now."""
        tools = self._deferrable()
        tokens = sum(self._cached(t)[1] for t in tools)
        if self.mode is Mode.AUTO:
            on = tokens > self.budget
        else:
            on = self.mode is Mode.ON
        decision = SearchDecision(self.mode, on, tokens, len(tools), self.window, self.budget)
        if self._last is None or (self._last.on, self._last.count) != (on, len(tools)):
            logger.info("%s; %d deferrable tool(s)", decision, len(tools))
        self._last = decision
        return decision

    def found(self, messages: Sequence[Message]) -> set[str]:
        """Names of the tools this conversation has found (by search or by calling them)."""
        names: set[str] = set(self.kept)
        for message in messages:
            if isinstance(message, UserMessage):
                for result in message.tool_results:
                    if isinstance(result.raw, FoundTools):
                        names.update(result.raw.names)
            elif isinstance(message, AssistantMessage):
                names.update(call.name for call in message.tool_calls)
        return names

    def tools_for_request(self, messages: Sequence[Message]) -> list[Tool]:
        """The tools whose definitions go on the next request, in a stable order."""
        tools = self.registry.list()
        decision = self.decide()
        if not decision.on:
            return tools
        found = self.found(messages)
        always = [t for t in tools if not deferrable(t)]
        loaded = [t for t in tools if deferrable(t) and t.name in found]
        waiting = [t for t in tools if deferrable(t) and t.name not in found]
        if not waiting:  # nothing left to search (servers still connecting, or all found)
            return [*always, *loaded]
        self.search_tool.describe(waiting)
        return [*always, self.search_tool, *loaded]

    def tool(self, name: str) -> Tool | None:
        """The search tool under ``name`` while search is on (the registry has the rest)."""
        if name == SEARCH_TOOL_NAME and self.decide().on:
            return self.search_tool
        return None

    def run_query(self, query: str, limit: int) -> ToolResult:
        """What ``search_tools`` answers: matching definitions as JSON, best first."""
        tools = self._deferrable()
        if query.lower().startswith("select:"):
            return self._select(query[len("select:") :], tools)
        matches = rank((self._cached(t)[2] for t in tools), query)
        total = len(matches)
        matches = matches[:limit]
        if not matches:
            return ToolResult(
                f"No tool matched {query!r} among {len(tools)} tools. Try other or fewer "
                "keywords (a verb and a noun, e.g. 'create issue'), or a server's name.",
                raw=FoundTools(()),
            )
        more = f" (showing the best {len(matches)} of {total})" if total > len(matches) else ""
        return self._answer(f"{len(matches)} tool(s) matched {query!r}{more}", matches)

    def _select(self, names_text: str, tools: Sequence[Tool]) -> ToolResult:
        by_name = {t.name: t for t in tools}
        chosen: list[Tool] = []
        missing: list[str] = []
        for wanted in filter(None, (n.strip() for n in names_text.split(","))):
            tool = by_name.get(wanted)
            if tool is None:  # the tool's own name, when only one server has it
                suffix = [t for t in tools if t.name.endswith(f"__{wanted}")]
                tool = suffix[0] if len(suffix) == 1 else None
            if tool is None:
                missing.append(wanted)
            elif tool not in chosen:
                chosen.append(tool)
        note = f"; no tool named {', '.join(missing)}" if missing else ""
        if not chosen:
            text = f"No tool selected{note}. Search by keywords instead."
            return ToolResult(text, raw=FoundTools(()))
        return self._answer(f"{len(chosen)} tool(s) selected{note}", chosen)

    def _answer(self, headline: str, tools: Sequence[Tool]) -> ToolResult:
        # The definitions as sent on a request, one JSON array: compact, the model parses it.
        definitions = ",".join(definition_json(t) for t in tools)
        text = f"{headline}. You can call them now; their definitions:\n[{definitions}]"
        return ToolResult(text, raw=FoundTools(tuple(t.name for t in tools)))

    def status(self, messages: Sequence[Message]) -> str:
        """The lines ``/tools`` shows about search: the mode, why, and what is loaded."""
        decision = self.decide()
        lines = [str(decision)]
        if decision.on and decision.count:
            found = self.found(messages)
            loaded = sum(1 for t in self._deferrable() if t.name in found)
            lines.append(
                f"  {decision.count} MCP tool(s) are sent only once {SEARCH_TOOL_NAME} finds "
                f"them; {loaded} found in this conversation (/clear forgets them)"
            )
        elif decision.on:
            lines.append("  no MCP tools to defer yet: every tool is sent")
        return "\n".join(lines)
