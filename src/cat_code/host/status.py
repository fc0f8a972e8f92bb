"""What the shell and the REPL say about servers, tools, resources, prompts and skills: one
text each.

Both front ends print these blocks (`cat-code mcp list` and ``/mcp``, `mcp tools` and
``/mcp tools``, ...), so their wording can never drift apart. Pure functions of status
snapshots and listings; nothing here connects or prints. Every field a server supplied
(names, descriptions, errors, stderr lines, URIs) is one line through `safe_line`: a
newline or an escape sequence in it can neither fake another line nor drive the terminal.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cat_code.base.safe_text import safe_line
from cat_code.host.config.load import McpConfig, approval_hint
from cat_code.host.config.trust import TrustDecision
from cat_code.host.mcp_tools.prompts import usage
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.server import McpServer, ServerState, ServerStatus
from cat_code.mcp.elicitation import is_url_request
from cat_code.mcp.skills import Skill
from cat_code.mcp.wire import Prompt, Resource, ResourceTemplate


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (runs of whitespace made one space), cut to ``limit``
    characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_status(
    statuses: Sequence[ServerStatus],
    files: Sequence[Path] = (),
    *,
    in_repl: bool = False,
    unreadable: Sequence[Path] = (),
) -> str:
    """The ``MCP servers:`` block, columns aligned, failures with their reason and stderr.

    ``files`` are the config files read: with no servers, the hint names them, unless some
    of them are ``unreadable`` (then "none configured" would be untrue: it names those).
    ``in_repl``: a server that gave up restarting says which command starts it (the shell
    has none: the next run starts it), and a project server waiting for approval or
    rejected names ``/mcp approve``, not the shell's command.
    """
    if not statuses and unreadable:
        bad = " and ".join(str(f) for f in unreadable)
        return f"MCP servers: none loaded — could not read {bad} (see the warning above)"
    if not statuses:
        where = " or ".join(str(f) for f in files) or "~/.cat-code/mcp.json or ./.mcp.json"
        return (
            "MCP servers: none configured\n"
            f'  (add servers to {where}, in the {{"mcpServers": {{...}}}} format)'
        )
    names = {id(s): safe_line(s.name) for s in statuses}
    name_width = max(len(n) for n in names.values())
    state_width = max(len(s.state) for s in statuses)
    connected = [s for s in statuses if s.state is ServerState.CONNECTED]
    count_width = max((len(f"{s.tools} tool(s)") for s in connected), default=0)
    lines = ["MCP servers:"]
    for s in statuses:
        head = f"  {names[id(s)].ljust(name_width)}  {s.state.ljust(state_width)}"
        # A broken entry may have no target to show: then no empty "(?: )".
        where = f"({s.transport}: {safe_line(s.target)})" if s.target else ""
        if s.reach:  # what approving it lets the entry send: before the user says yes
            where = f"{where} {safe_line(s.reach)}".lstrip()
        error = safe_line(s.error) if s.error else s.error
        if in_repl and s.state in (ServerState.NEEDS_APPROVAL, ServerState.REJECTED):
            rejected = s.state is ServerState.REJECTED
            error = approval_hint(names[id(s)], rejected=rejected, in_repl=True)
        if s.state is ServerState.CONNECTED:
            line = f"{head}  {f'{s.tools} tool(s)'.ljust(count_width)}  {where}".rstrip()
        elif error:
            line = f"{head}  {where} — {error}" if where else f"{head}  {error}"
        else:
            line = f"{head}  {where}".rstrip()
        if s.restarts:
            line += f"  restarted {s.restarts}×"
        if s.gave_up:
            line += (
                f" — /mcp restart {names[id(s)]} starts it"
                if in_repl
                else " — the next run starts it"
            )
        lines.append(line)
        if s.state is ServerState.FAILED and s.stderr_tail and "last stderr" not in (s.error or ""):
            indent = " " * (4 + name_width + state_width)
            lines.append(f"{indent}stderr (last lines):")
            lines.extend(f"{indent}  {safe_line(line)}" for line in s.stderr_tail[-5:])
    return "\n".join(lines)


def tools_registered(server: McpServer | int) -> str:
    """ "N tool(s) registered": the count every front end gives of a server's tools."""
    count = server if isinstance(server, int) else len(server.tools)
    return f"{count} tool(s) registered"


def not_connected_line(server: McpServer) -> str:
    """A server that did not come up after a command: its name, its state and why."""
    why = f": {server.error}" if server.error else ""
    return f"{server.name} is {server.state}{why}"


def unavailable_line(status: ServerStatus, *, in_repl: bool = False) -> str | None:
    """Why a server's tools cannot be used, naming its state and the way out (a shell
    command, or in the REPL a slash command); None when they can. One wording for
    ``cat-code mcp``, the REPL and ``-p``."""
    name = status.name
    run = "/mcp" if in_repl else "cat-code mcp"
    if status.state is ServerState.DISABLED:
        return f"MCP server '{name}' is disabled ({run} enable {name})"
    if status.state is ServerState.FAILED:
        return f"MCP server '{name}' failed: {status.error}"
    if status.state is ServerState.NEEDS_LOGIN:
        return f"MCP server '{name}' needs a sign-in ({run} login {name})"
    if status.state is ServerState.NEEDS_APPROVAL:
        return waiting_line(status)
    if status.state is ServerState.REJECTED:
        return f"MCP server '{name}' is a project server you rejected ({run} approve {name})"
    return None


def unusable_line(name: str, error: str) -> str:
    """A configured server whose entry cannot be used at all (REPL, shell and sign-in)."""
    return f"MCP server '{name}' cannot be used: {error}"


def mcp_summary(statuses: Iterable[ServerStatus]) -> str | None:
    """The one line the REPL shows when the servers are done connecting or reloaded (None
    when none are configured)."""
    statuses = [s for s in statuses if s.state not in (ServerState.DISABLED, ServerState.REJECTED)]
    if not statuses:
        return None
    connected = [s for s in statuses if s.state is ServerState.CONNECTED]
    failed = [s for s in statuses if s.state is ServerState.FAILED]
    login = [s.name for s in statuses if s.state is ServerState.NEEDS_LOGIN]
    line = f"MCP: {len(connected)} server(s), {tools_registered(sum(s.tools for s in connected))}"
    if failed:
        line += f", {len(failed)} failed — see /mcp"
    if len(login) == 1:
        line += f", 1 needs login — /mcp login {login[0]}"
    elif login:
        line += f", {len(login)} need login — /mcp login NAME ({', '.join(login)})"
    waiting = [s.name for s in statuses if s.state is ServerState.NEEDS_APPROVAL]
    if len(waiting) == 1:
        line += f", 1 waits for approval — /mcp approve {waiting[0]}"
    elif waiting:
        line += f", {len(waiting)} wait for approval — /mcp approve NAME ({', '.join(waiting)})"
    return line


def decision_line(name: str, target: str, decision: TrustDecision) -> str:
    """What approving or rejecting one project server says (``mcp approve``, ``/mcp approve``)."""
    where = f" ({target})" if target else ""
    if decision is TrustDecision.APPROVED:
        return f"Approved project server '{name}'{where} for this folder."
    return f"Rejected project server '{name}'{where}: it will not run in this folder."


def waiting_lines(config: McpConfig) -> list[str]:
    """The project servers waiting for approval, one line each: name, transport, target."""
    waiting = config.needs_approval
    width = max((len(w.name) for w in waiting), default=0)
    return [f"  {w.name.ljust(width)}  {w.type}: {w.target}  {w.reach}".rstrip() for w in waiting]


def waiting_line(status: ServerStatus) -> str:
    """What a command that lists a server's offer says of a project server waiting for
    approval: its offer is unknown, not absent (its error is the ``cat-code mcp approve``
    hint)."""
    return f"MCP server '{status.name}' is a project server not approved yet ({status.error})"


def declined_line(server: str, params: dict[str, Any], where: str) -> str:
    """What a front end that cannot ask says when it declines an elicitation: the server,
    its message and (a URL request) the whole URL, never opened."""
    message = safe_line(" ".join(str(params.get("message", "")).split()))[:120]
    if is_url_request(params):
        url = safe_line(str(params.get("url", "")))
        return (
            f"MCP server '{safe_line(server)}' asked you to open {url} ({message}); "
            f"declined {where}, not opened"
        )
    return f"MCP server '{safe_line(server)}' asked for input ({message}); declined {where}"


def format_tools(pool: McpPool, server: str | None = None) -> str:
    tools = pool.tools(server)
    if not tools:
        return "MCP tools: none"
    names = [safe_line(t.name) for t in tools]
    width = max(len(n) for n in names)
    lines = ["MCP tools:"]
    for name, tool in zip(names, tools, strict=True):
        summary = one_line(tool.description, 100)
        lines.append(f"  {name.ljust(width)}  {safe_line(summary)}".rstrip())
    return "\n".join(lines)


def tool_json(pool: McpPool, server: str | None = None) -> list[dict[str, Any]]:
    return [
        {
            "name": t.name,
            "server": t.server,
            "tool": t.tool_name,
            "description": t.description,
            "inputSchema": t.input_schema,
            "readOnly": t.read_only,
        }
        for t in pool.tools(server)
    ]


def format_resources(
    resources: list[tuple[str, Resource]], templates: list[tuple[str, ResourceTemplate]]
) -> str:
    """The ``MCP resources:`` block (server, URI, name, type), templates after it."""
    if not resources and not templates:
        return "MCP resources: none"
    lines = []
    rows = [_row(s, r["uri"], r["name"], r.get("mimeType", "")) for s, r in resources]
    if rows:
        lines.append("MCP resources:")
        lines += _rows(rows)
    rows = [_row(s, t["uriTemplate"], t["name"], t.get("mimeType", "")) for s, t in templates]
    if rows:
        lines.append("MCP resource templates:")
        lines += _rows(rows)
    return "\n".join(lines)


def _row(*fields: object) -> tuple[str, str, str, str]:
    server, uri, name, mime = (safe_line(str(f)) for f in fields)
    return server, uri, name, mime


def _rows(rows: list[tuple[str, str, str, str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    out = []
    for server, uri, name, mime in rows:
        # The name only when it says more than the URI does.
        name = "" if name == uri else name
        line = f"  {server.ljust(widths[0])}  {uri.ljust(widths[1])}  {name.ljust(widths[2])}"
        out.append(f"{line}  {mime}".rstrip())
    return out


def format_skills(skills: list[tuple[str, Skill]]) -> str:
    """The ``MCP skills:`` block: server, name, how many files, what the skill is for (a
    listing only: no skill's file is read for it)."""
    if not skills:
        return "MCP skills: none"
    rows = []
    for server, skill in skills:
        files = "dynamic" if skill.files is None else f"{len(skill.files)} files"
        about = one_line(skill.description, 90)
        rows.append((safe_line(server), safe_line(skill.name), files, safe_line(about)))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["MCP skills (the model loads one with load_mcp_skill when a task needs it):"]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append(f"  {'  '.join(cells)}  {row[3]}".rstrip())
    return "\n".join(lines)


def format_prompts(prompts: list[tuple[str, Prompt]]) -> str:
    """The ``MCP prompts:`` block: each prompt's REPL command with its arguments, and what
    it does."""
    if not prompts:
        return "MCP prompts: none"
    usages = [safe_line(usage(command, prompt)) for command, prompt in prompts]
    width = max(len(u) for u in usages)
    lines = ["MCP prompts (run them in the REPL; [optional] arguments):"]
    for text, (_, prompt) in zip(usages, prompts, strict=True):
        about = one_line(str(prompt.get("description") or prompt.get("title") or ""), 90)
        lines.append(f"  {text.ljust(width)}  {safe_line(about)}".rstrip())
    return "\n".join(lines)
