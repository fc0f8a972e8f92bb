"""``/mcp`` (the servers' status), ``/mcp tools`` and ``/mcp call``.

The status block and the tool listing are the same text ``cat-code mcp list`` and
``cat-code mcp tools`` print (`cat_code.host.status`). ``/mcp call`` runs a tool as the
model would, with the spinner and progress, and shows its result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from cat_code.agent.providers.base import ToolCall
from cat_code.repl.commands.registry import (
    Cancelled,
    CommandContext,
    Outcome,
    ReplHost,
    Show,
    SlashCommand,
    names_starting,
    only_argument,
)
from cat_code.repl.render import error_line, note_line
from cat_code.tools.registry import ToolRegistry

CALL_USAGE = 'usage: /mcp call TOOL [JSON], e.g. /mcp call mcp__echo__echo {"text": "hi"}'


@dataclass(frozen=True, slots=True)
class CallTool:
    """Run one tool with these arguments, shown as a model's call is."""

    name: str
    arguments: dict[str, object]

    async def perform(self, repl: ReplHost) -> None:
        tool = repl.registry.get(self.name)
        if tool is None:
            repl.console.print(error_line(f"unknown tool {self.name!r}"))
            return
        call = ToolCall(id="user", name=self.name, arguments=dict(self.arguments))
        view = repl.view
        view.begin()
        try:
            view.tool_started(call)

            def progress(done: float, total: float | None, message: str | None) -> None:
                view.tool_progress(call, done, total, message)

            result = await repl.in_foreground(tool.execute(call.arguments, progress=progress))
            if isinstance(result, Cancelled):
                repl.console.print(note_line("⎿ cancelled"))
            else:
                view.tool_finished(call, result)
        finally:
            view.end()


def unknown_server(name: str, ctx: CommandContext) -> Show | None:
    """The error for a server name that is not configured (None when it is)."""
    names = ctx.pool.config.names if ctx.pool is not None else []
    if name in names:
        return None
    return Show(f"no MCP server named {name!r} (configured: {', '.join(names) or 'none'})", "error")


def server_names(ctx: CommandContext) -> list[str]:
    return list(ctx.pool.config.names) if ctx.pool is not None else []


def _status(rest: str, ctx: CommandContext) -> Outcome:
    from cat_code.host.status import format_status

    if rest:  # a subcommand no declaration knows
        assert ctx.commands is not None  # set by the registry that dispatched here
        subs = [f"/mcp {s}" for s in ctx.commands.subcommands("/mcp")]
        tried = ", ".join(["/mcp", *subs[:-1]]) + f" or {subs[-1]}"
        sub = rest.partition(" ")[0]
        return Show(f"unknown /mcp subcommand {sub!r} — try {tried}", "error")
    files = ctx.pool.config.files if ctx.pool else ()
    bad = ctx.pool.config.unreadable if ctx.pool else []
    return Show(format_status(ctx.statuses(), files, in_repl=True, unreadable=bad))


def _tools(rest: str, ctx: CommandContext) -> Outcome:
    from cat_code.host.status import format_tools

    if ctx.pool is None:
        return Show("MCP tools: none")
    if rest and (error := unknown_server(rest, ctx)) is not None:
        return error
    text = format_tools(ctx.pool, rest or None)
    if ctx.mcp_connecting:
        text += "\n  (servers are still connecting; more tools may follow)"
    return Show(text)


def _call(rest: str, ctx: CommandContext) -> Outcome:
    tool, _, raw = rest.partition(" ")
    if not tool:
        return Show(CALL_USAGE, "error")
    name = resolve_tool_name(tool, ctx.registry)
    if name is None:
        hint = " (servers are still connecting)" if ctx.mcp_connecting else ""
        return Show(f"unknown tool {tool!r}{hint} — /tools lists them", "error")
    raw = raw.strip() or "{}"
    try:
        arguments = json.loads(raw)
    except json.JSONDecodeError as exc:
        # "{msg}: column N", as json words it: some messages end in "at" already.
        return Show(
            f"JSON is not valid ({exc.msg}: column {exc.colno}): {raw}\n{CALL_USAGE}", "error"
        )
    if not isinstance(arguments, dict):
        return Show(f"the arguments must be a JSON object, got: {raw}\n{CALL_USAGE}", "error")
    return CallTool(name, arguments)


def _complete_call(words: list[str], ctx: CommandContext) -> list[str]:
    if len(words) != 1:
        return []
    return [n for n in names_starting(ctx.registry.names(), words[0]) if n.startswith("mcp__")]


def resolve_tool_name(name: str, registry: ToolRegistry) -> str | None:
    """``name`` as registered, or the one MCP tool it abbreviates (``echo``, ``echo__echo``)."""
    if name in registry:
        return name
    matches = [n for n in registry.names() if n.startswith("mcp__") and n.endswith("__" + name)]
    return matches[0] if len(matches) == 1 else None


COMMANDS = (
    SlashCommand("/mcp", "status of every MCP server (same as `cat-code mcp list`)", _status),
    SlashCommand("/mcp tools", "the tools of every MCP server, or of SERVER", _tools,
                 args="[SERVER]", complete=only_argument(server_names)),
    SlashCommand("/mcp call", "call an MCP tool yourself, e.g. /mcp call mcp__echo__echo "
                 '{"text": "hi"}', _call, args="TOOL [JSON]", complete=_complete_call),
)  # fmt: skip
