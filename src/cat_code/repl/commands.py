"""REPL slash commands as one pure function: a line and a context in, an action out.

`handle_command` never prints and never awaits: it returns `Show` (text to print),
`CallTool` (the app runs the call, with spinner and progress), `Login` / `Logout` (the
app signs in or out and reconnects the server), `ReloadConfig` / `ManageServer` (the app
re-reads the config, or restarts, disables or enables one server), `DecideProject` (the
app records an approval or rejection of project servers and applies it), `AddDir` (a checked
folder for the roots), `RemoveRule` (the app removes a permission rule),
`ClearConversation`, `SwitchModel` (``/model NAME``), `Compact` (``/compact``: the app
asks the model for a summary), `ResumeSession` (``/resume``: the app lists the saved
sessions and goes on with one) or `Exit`. `complete`
is the same idea for tab completion. Both read the session through `CommandContext`, so
they are tested without a terminal, a model or a server.
"""

from __future__ import annotations

import difflib
import json
import logging
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from cat_code.host.config.load import Scope
from cat_code.host.server import ServerState
from cat_code.repl import prompt_commands
from cat_code.repl.prompt_commands import ListPrompts, ListResources, ListSkills, RunPrompt
from cat_code.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from pathlib import Path

    from cat_code.agent.memory import MemoryFile
    from cat_code.agent.permissions import RuleBook
    from cat_code.host.pool import McpPool
    from cat_code.host.server import ServerStatus

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Show:
    text: str
    kind: Literal["info", "error"] = "info"


@dataclass(frozen=True, slots=True)
class CallTool:
    name: str
    arguments: dict[str, object]


@dataclass(frozen=True, slots=True)
class Login:
    server: str


@dataclass(frozen=True, slots=True)
class Logout:
    server: str


@dataclass(frozen=True, slots=True)
class ReloadConfig:
    """``/mcp reload``: re-read the config files and apply what changed."""


@dataclass(frozen=True, slots=True)
class ManageServer:
    """``/mcp restart|disable|enable SERVER`` (disable and enable: this session only)."""

    verb: Literal["restart", "disable", "enable"]
    server: str


@dataclass(frozen=True, slots=True)
class DecideProject:
    """``/mcp approve|reject NAME...``: record the decision about project servers, then the
    app applies the config (an approved server starts, a rejected one stops)."""

    verb: Literal["approve", "reject"]
    servers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClearConversation:
    pass


@dataclass(frozen=True, slots=True)
class AddDir:
    path: Path


@dataclass(frozen=True, slots=True)
class RemoveRule:
    rule: str


@dataclass(frozen=True, slots=True)
class SwitchModel:
    """``/model NAME``: go on with another model, keeping the conversation."""

    spec: str


@dataclass(frozen=True, slots=True)
class Compact:
    """``/compact [what to keep]``: replace the conversation so far with a summary."""

    instructions: str = ""


@dataclass(frozen=True, slots=True)
class ResumeSession:
    """``/resume [ID|N]``: go on with a saved conversation of this folder (none given: the
    app lists them and asks which)."""

    choice: str = ""


@dataclass(frozen=True, slots=True)
class Exit:
    pass


Action = (
    Show
    | CallTool
    | Login
    | Logout
    | ReloadConfig
    | ManageServer
    | DecideProject
    | ClearConversation
    | Exit
    | ListResources
    | ListSkills
    | ListPrompts
    | RunPrompt
    | AddDir
    | RemoveRule
    | SwitchModel
    | Compact
    | ResumeSession
)


@dataclass(slots=True)
class CommandContext:
    """What the commands may look at."""

    registry: ToolRegistry
    pool: McpPool | None = None
    #: ``provider:model``, or None when no model is configured.
    model: str | None = None
    #: Why there is no model, as one line (shown by /model).
    model_problem: str | None = None
    #: True while the MCP servers are still connecting.
    mcp_connecting: bool = False
    #: Terminal columns; long lines are cut to fit.
    width: int = 100
    statuses: Callable[[], list[ServerStatus]] = field(default=lambda: [])
    #: The tool-search lines of /tools (mode and why), or None without an agent.
    tool_search: Callable[[], str | None] = field(default=lambda: None)
    #: The permission rules (/permissions), when the session has them.
    rules: RuleBook | None = None
    #: The memory files in the system prompt (/memory).
    memory: list[MemoryFile] = field(default_factory=list)
    #: The lines of /status (the session id and file, the model, how full the context is).
    status: Callable[[], str] = field(default=lambda: "no session")
    #: The lines of /cost (tokens and dollars so far).
    cost: Callable[[], str] = field(default=lambda: "no model requests yet")
    #: The subagent definitions and their sources (/agents).
    agents: Callable[[], str] = field(default=lambda: "no subagent definitions")


#: name → (arguments, one-line help), in /help order.
COMMANDS: dict[str, tuple[str, str]] = {
    "/help": ("", "show this help"),
    "/mcp": ("", "status of every MCP server (same as `cat-code mcp list`)"),
    "/mcp tools": ("[SERVER]", "the tools of every MCP server, or of SERVER"),
    "/mcp call": ("TOOL [JSON]", "call an MCP tool yourself, e.g. /mcp call mcp__echo__echo "
                  '{"text": "hi"}'),
    "/mcp resources": ("[SERVER]", "the resources of every MCP server; @server:uri attaches one"),
    "/mcp prompts": ("[SERVER]", "the prompts of every MCP server, as /mcp__server__prompt"),
    "/mcp skills": ("[SERVER]", "the skills of every MCP server (the model loads them)"),
    "/mcp login": ("SERVER", "sign in to a remote MCP server (OAuth, in a browser)"),
    "/mcp logout": ("SERVER", "forget a remote MCP server's sign-in"),
    "/mcp reload": ("", "re-read the MCP config: new servers start, removed ones stop, "
                    "changed ones restart"),
    "/mcp restart": ("SERVER", "stop and start an MCP server again (also one that gave up "
                     "restarting)"),
    "/mcp disable": ("SERVER", "stop an MCP server and drop its tools (this session only)"),
    "/mcp enable": ("SERVER", "start a disabled MCP server (this session only)"),
    "/mcp approve": ("SERVER...", "let project servers (./.mcp.json) run in this folder; "
                     "they start at once"),
    "/mcp reject": ("SERVER...", "keep project servers (./.mcp.json) from running in this "
                    "folder"),
    "/add-dir": ("DIR", "let MCP servers work in DIR too (a root besides the working directory)"),
    "/permissions": ("[remove RULE|N]", "the allow/deny rules and their files; remove one "
                     "from your settings"),
    "/tools": ("", "every tool the model can use, built-in and MCP, and if tool search is on"),
    "/model": ("[NAME]", "the model in use; /model PROVIDER:NAME switches to another, "
               "keeping the conversation"),
    "/memory": ("", "the memory files (AGENTS.md) in the system prompt"),
    "/status": ("", "this session: its id and file, the model, how full the context is"),
    "/cost": ("", "the tokens this session used (input, output, cache) and what they cost"),
    "/agents": ("", "the subagent definitions the model can start, with their source"),
    "/compact": ("[WHAT TO KEEP]", "replace the conversation so far with a summary of it "
                 "(frees the context window)"),
    "/resume": ("[ID|N]", "go on with a saved conversation of this folder (lists them)"),
    "/clear": ("", "forget the conversation (and start a new saved session)"),
    "/exit": ("", "close every MCP server and quit (also /quit, Ctrl-D)"),
}  # fmt: skip

KEYS_HELP = """\
keys: Enter sends · Esc Enter (or a trailing \\) starts a new line · Ctrl-C cancels the \
running turn · Ctrl-D on an empty line quits · ↑/↓ history · Tab completes"""


def is_command(line: str) -> bool:
    return line.lstrip().startswith("/")


def handle_command(line: str, ctx: CommandContext) -> Action:
    """What a slash-command line means."""
    words = line.strip().split(maxsplit=1)
    name = words[0].lower() if words else "/"
    rest = words[1].strip() if len(words) > 1 else ""
    if name in ("/", "/help", "/?"):
        prompts = prompt_commands.help_lines(ctx)
        return Show(f"{help_text()}\n{prompts}" if prompts else help_text())
    if name in ("/exit", "/quit"):
        return Exit()
    if name == "/clear":
        return ClearConversation()
    if name == "/status":
        return Show(ctx.status())
    if name == "/cost":
        return Show(ctx.cost())
    if name == "/agents":
        return Show(ctx.agents())
    if name == "/compact":
        return Compact(rest)
    if name == "/resume":
        return ResumeSession(rest)
    if name == "/tools":
        return Show(tools_text(ctx.registry, ctx.width, ctx.tool_search()))
    if name == "/model":
        if rest:
            return SwitchModel(rest)
        return Show(model_text(ctx))
    if name == "/memory":
        from cat_code.agent.memory import describe_memory

        return Show(describe_memory(ctx.memory))
    if name == "/mcp":
        return _mcp(rest, ctx)
    if name == "/add-dir":
        return _add_dir(rest)
    if name == "/permissions":
        return _permissions(rest, ctx)
    if prompt_commands.is_prompt_command(words[0]):
        run = prompt_commands.prompt_command(words[0], rest, ctx)
        return Show(run, "error") if isinstance(run, str) else run
    guess = difflib.get_close_matches(name, _COMMAND_NAMES, n=1, cutoff=0.6)
    hint = f"did you mean {guess[0]}? " if guess else ""
    return Show(f"unknown command {words[0]} — {hint}/help lists the commands", "error")


_COMMAND_NAMES = (
    "/help", "/exit", "/quit", "/clear", "/tools", "/model", "/mcp", "/add-dir", "/permissions",
    "/memory", "/status", "/cost", "/compact", "/resume", "/agents",
)  # fmt: skip
_MANAGE_VERBS: dict[str, Literal["restart", "disable", "enable"]] = {
    "restart": "restart",
    "disable": "disable",
    "enable": "enable",
}
_MCP_SUBCOMMANDS = (
    "tools", "resources", "prompts", "skills", "call", "login", "logout", "reload", "restart",
    "disable", "enable", "approve", "reject",
)  # fmt: skip


def _add_dir(text: str) -> Action:
    from cat_code.mcp.roots import RootError, check_dir

    try:
        # A shell word, as a path is written on the command line: "/tmp/my dir" works.
        words = shlex.split(text)
    except ValueError as exc:
        message = str(exc)
        return Show(f"/add-dir: {message[:1].lower()}{message[1:]} in {text}", "error")
    if not words:
        return Show("usage: /add-dir DIR", "error")
    if len(words) > 1:
        return Show(f"/add-dir takes one directory ({len(words)} given); quote a path with "
                    'spaces: /add-dir "my dir"', "error")  # fmt: skip
    try:
        return AddDir(check_dir(words[0]))
    except RootError as exc:
        return Show(f"/add-dir: {exc}", "error")


def _permissions(text: str, ctx: CommandContext) -> Action:
    sub, _, tail = text.partition(" ")
    if ctx.rules is None:
        return Show("no permission rules in this session", "error")
    if not sub:
        return Show(ctx.rules.describe())
    if sub == "remove":
        if not tail.strip():
            return Show(
                "usage: /permissions remove RULE (or its number from /permissions)", "error"
            )
        return RemoveRule(tail.strip())
    return Show(f"unknown /permissions subcommand {sub!r} — try /permissions or "
                "/permissions remove RULE", "error")  # fmt: skip


def _mcp(rest: str, ctx: CommandContext) -> Action:
    from cat_code.host.status import format_status, format_tools

    sub, _, tail = rest.partition(" ")
    tail = tail.strip()
    if not sub:
        files = ctx.pool.config.files if ctx.pool else ()
        bad = ctx.pool.config.unreadable if ctx.pool else []
        return Show(format_status(ctx.statuses(), files, in_repl=True, unreadable=bad))
    if sub == "tools":
        if ctx.pool is None:
            return Show("MCP tools: none")
        if tail and tail not in ctx.pool.config.names:
            known = ", ".join(ctx.pool.config.names) or "none"
            return Show(f"no MCP server named {tail!r} (configured: {known})", "error")
        text = format_tools(ctx.pool, tail or None)
        if ctx.mcp_connecting:
            text += "\n  (servers are still connecting; more tools may follow)"
        return Show(text)
    if sub in ("resources", "prompts", "skills"):
        if tail and (ctx.pool is None or tail not in ctx.pool.config.names):
            known = ", ".join(ctx.pool.config.names) if ctx.pool else "none"
            return Show(f"no MCP server named {tail!r} (configured: {known or 'none'})", "error")
        if sub == "skills":
            return ListSkills(tail or None)
        return ListResources(tail or None) if sub == "resources" else ListPrompts(tail or None)
    if sub == "call":
        return _mcp_call(tail, ctx)
    if sub in ("login", "logout"):
        return _mcp_sign(sub, tail, ctx)
    if sub == "reload":
        if tail:
            return Show("usage: /mcp reload (it re-reads every config file)", "error")
        return ReloadConfig()
    if (verb := _MANAGE_VERBS.get(sub)) is not None:
        return _mcp_manage(verb, tail, ctx)
    if sub in ("approve", "reject"):
        return _mcp_decide("approve" if sub == "approve" else "reject", tail, ctx)
    return Show(
        f"unknown /mcp subcommand {sub!r} — try /mcp, /mcp tools, /mcp resources, /mcp prompts, "
        "/mcp skills, /mcp call, /mcp login, /mcp logout, /mcp reload, /mcp restart, /mcp disable, "
        "/mcp enable, /mcp approve or /mcp reject",
        "error",
    )


def _mcp_manage(
    verb: Literal["restart", "disable", "enable"], name: str, ctx: CommandContext
) -> Action:
    if not name:
        return Show(f"usage: /mcp {verb} SERVER", "error")
    if ctx.pool is None:
        return Show("no MCP servers are configured", "error")
    broken = next((b for b in ctx.pool.broken if b.name == name), None)
    if broken is not None:
        return Show(
            f"MCP server '{name}' cannot be used: {broken.error} — fix its entry, then /mcp reload",
            "error",
        )
    server = ctx.pool.server(name)
    if server is None:
        known = ", ".join(ctx.pool.config.names) or "none"
        return Show(f"no MCP server named {name!r} (configured: {known})", "error")
    disabled = server.state is ServerState.DISABLED
    if verb == "restart" and disabled:
        return Show(f"MCP server '{name}' is disabled — /mcp enable {name} starts it", "error")
    if verb == "disable" and disabled:
        return Show(f"MCP server '{name}' is already disabled")
    if verb == "enable" and not disabled:
        hint = (
            f" — /mcp restart {name} starts it again" if server.state is ServerState.FAILED else ""
        )
        return Show(f"MCP server '{name}' is already enabled ({server.state}){hint}")
    return ManageServer(verb, name)


def _mcp_decide(verb: Literal["approve", "reject"], text: str, ctx: CommandContext) -> Action:
    names = tuple(dict.fromkeys(text.split()))
    if not names:
        return Show(f"usage: /mcp {verb} SERVER... (a server of ./.mcp.json)", "error")
    project = _project_servers(ctx)
    for name in names:
        if name not in project:
            known = ", ".join(project) or "none"
            return Show(
                f"no project server named {name!r} (project servers, from ./.mcp.json: {known})",
                "error",
            )
    return DecideProject(verb, names)


def _project_servers(ctx: CommandContext) -> list[str]:
    """The names of the project's servers: waiting for approval, rejected, or approved."""
    if ctx.pool is None:
        return []
    config = ctx.pool.config
    approved = [s.name for s in config.servers if s.scope is Scope.PROJECT]
    return [n for n in config.order if n in approved or n in {w.name for w in config.waiting}]


def _mcp_sign(sub: str, name: str, ctx: CommandContext) -> Action:
    from cat_code.host.signin import SignInTarget, sign_in_entry

    if not name:
        return Show(f"usage: /mcp {sub} SERVER", "error")
    if ctx.pool is None:
        return Show("no MCP servers are configured", "error")
    try:
        sign_in_entry(ctx.pool.config, name)
    except SignInTarget as exc:
        return Show(str(exc), "error")
    return Login(name) if sub == "login" else Logout(name)


def _mcp_call(text: str, ctx: CommandContext) -> Action:
    usage = 'usage: /mcp call TOOL [JSON], e.g. /mcp call mcp__echo__echo {"text": "hi"}'
    tool, _, raw = text.partition(" ")
    if not tool:
        return Show(usage, "error")
    name = resolve_tool_name(tool, ctx.registry)
    if name is None:
        hint = " (servers are still connecting)" if ctx.mcp_connecting else ""
        return Show(f"unknown tool {tool!r}{hint} — /tools lists them", "error")
    raw = raw.strip() or "{}"
    try:
        arguments = json.loads(raw)
    except json.JSONDecodeError as exc:
        # "{msg}: column N", as json words it: some messages end in "at" already.
        return Show(f"JSON is not valid ({exc.msg}: column {exc.colno}): {raw}\n{usage}", "error")
    if not isinstance(arguments, dict):
        return Show(f"the arguments must be a JSON object, got: {raw}\n{usage}", "error")
    return CallTool(name, arguments)


def resolve_tool_name(name: str, registry: ToolRegistry) -> str | None:
    """``name`` as registered, or the one MCP tool it abbreviates (``echo``, ``echo__echo``)."""
    if name in registry:
        return name
    matches = [n for n in registry.names() if n.startswith("mcp__") and n.endswith("__" + name)]
    return matches[0] if len(matches) == 1 else None


def help_text() -> str:
    width = max(len(f"{n} {a}".strip()) for n, (a, _) in COMMANDS.items())
    lines = ["commands:"]
    for name, (args, text) in COMMANDS.items():
        lines.append(f"  {f'{name} {args}'.strip().ljust(width)}  {text}")
    lines.append("anything else is sent to the model.")
    lines.append(KEYS_HELP)
    return "\n".join(lines)


def tools_text(registry: ToolRegistry, width: int = 100, search: str | None = None) -> str:
    tools = registry.list()
    if not tools:
        return "tools: none" + (f"\n{search}" if search else "")
    name_width = max(len(t.name) for t in tools)
    owner_width = max(len(str(t.owner)) for t in tools)
    lines = [f"tools ({len(tools)}; ro = read-only, runs without asking):"]
    room = max(20, width - (2 + name_width + 2 + owner_width + 2 + 2 + 2))
    for tool in tools:
        summary = " ".join(tool.description.split())
        if len(summary) > room:
            summary = summary[: room - 1] + "…"
        flag = "ro" if tool.read_only else "  "
        owner = str(tool.owner).ljust(owner_width)
        lines.append(f"  {tool.name.ljust(name_width)}  {owner}  {flag}  {summary}")
    if search:
        lines.append(search)
    return "\n".join(line.rstrip() for line in lines)


def model_text(ctx: CommandContext) -> str:
    from cat_code.agent.providers import DEFAULT_MODEL

    lines = [f"model: {ctx.model}" if ctx.model else "model: none"]
    if ctx.model is None and ctx.model_problem:
        lines.append(f"  {ctx.model_problem}")
    lines += [
        f"  choose with /model PROVIDER:NAME, --model PROVIDER:NAME or $CAT_CODE_MODEL "
        f"(default {DEFAULT_MODEL})",
        "  anthropic:<model>  needs ANTHROPIC_API_KEY (ANTHROPIC_BASE_URL for a proxy)",
        "  openai:<model>     needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local server "
        "(Ollama, llama.cpp, vLLM)",
    ]
    return "\n".join(lines)


def complete(text: str, ctx: CommandContext) -> list[str]:
    """Completions for the line typed so far (the whole word being typed, replaced)."""
    if not text.startswith("/"):
        return []
    words = text.split(" ")
    if len(words) == 1:
        names = sorted({n.split(" ")[0] for n in COMMANDS} | {"/quit"})
        found = [n for n in names if n.startswith(words[0].lower())]
        return found + prompt_commands.complete_command(words[0], ctx)
    if words[0] == "/permissions" and len(words) == 2:
        return ["remove"] if "remove".startswith(words[1]) else []
    if words[:2] == ["/permissions", "remove"] and len(words) == 3 and ctx.rules is not None:
        mine = [r.pattern for r in ctx.rules.rules if r.source != "project"]
        return [p for p in dict.fromkeys(mine) if p.startswith(words[2])]
    if words[0] == "/mcp" and len(words) == 2:
        return [s for s in _MCP_SUBCOMMANDS if s.startswith(words[1])]
    if words[0] == "/mcp" and words[1] in ("approve", "reject") and len(words) >= 3:
        return [n for n in _project_servers(ctx) if n.startswith(words[-1])]
    if words[0] == "/mcp" and words[1] in ("restart", "disable", "enable") and len(words) == 3:
        if ctx.pool is None:
            return []
        return [s.name for s in ctx.pool.servers if s.name.startswith(words[2])]
    if words[:2] in (["/mcp", "login"], ["/mcp", "logout"]) and len(words) == 3:
        if ctx.pool is None:
            return []
        remote = [s.name for s in ctx.pool.config.servers if s.type in ("http", "sse")]
        return [n for n in remote if n.startswith(words[2])]
    listings = ("tools", "resources", "prompts", "skills")
    if words[0] == "/mcp" and len(words) == 3 and words[1] in listings and ctx.pool is not None:
        return [n for n in ctx.pool.config.names if n.startswith(words[2])]
    if words[:2] == ["/mcp", "call"] and len(words) == 3:
        return [n for n in ctx.registry.names() if n.startswith(words[2]) and n.startswith("mcp__")]
    return []
