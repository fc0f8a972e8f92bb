"""One status panel: the REPL's bottom toolbar, and ``/status`` in full.

`Panel` reads the session once: the model, how full the context is, the MCP servers
connected of those configured, the background jobs running, the open tasks (through the
session's ``open_tasks``, read from its task list). `toolbar` is the one line
under the prompt (``model · context 12% · MCP 2/3 · 1 job running · 0 open tasks``);
`status_text` is ``/status``: the session, its file, the model, the context, the cost,
the servers, the tasks and the jobs. Reading it costs no request and no disk.
"""

from __future__ import annotations

from dataclasses import dataclass

from cat_code.agent.session import Session
from cat_code.host.servers.server import ServerState
from cat_code.repl.commands.jobs import jobs_text

#: Servers the panel does not count: switched off, or refused by the user.
_NOT_COUNTED = (ServerState.DISABLED, ServerState.REJECTED)


@dataclass(frozen=True, slots=True)
class Panel:
    model: str
    #: Percent of the context window the last request used (None before one; estimated).
    context_percent: int | None
    context_estimated: bool
    mcp_connected: int
    mcp_total: int
    jobs_running: int
    open_tasks: int


def read_panel(session: Session) -> Panel:
    """The panel's numbers for ``session``, now."""
    from cat_code.agent import compaction

    agent = session.agent
    percent: int | None = None
    estimated = False
    if agent is not None:
        window = max(1, agent.context_window)
        last = agent.last_usage
        if last is not None:
            percent = 100 * (last.prompt_tokens + last.output_tokens) // window
        elif agent.messages:
            percent, estimated = 100 * compaction.estimate(agent.messages) // window, True
        else:
            percent = 0
    statuses = session.pool.status() if session.pool is not None else []
    counted = [s for s in statuses if s.state not in _NOT_COUNTED]
    return Panel(
        model=session.provider.name if session.provider is not None else "no model",
        context_percent=percent,
        context_estimated=estimated,
        mcp_connected=sum(s.state is ServerState.CONNECTED for s in counted),
        mcp_total=len(counted),
        jobs_running=len(session.jobs.running()),
        open_tasks=session.open_tasks(),
    )


def toolbar(panel: Panel) -> str:
    """The bottom toolbar: one line, every part always present."""
    if panel.context_percent is None:
        context = "context –"
    else:
        context = f"context {'~' if panel.context_estimated else ''}{panel.context_percent}%"
    jobs = f"{panel.jobs_running} job{'' if panel.jobs_running == 1 else 's'} running"
    tasks = f"{panel.open_tasks} open task{'' if panel.open_tasks == 1 else 's'}"
    mcp = f"MCP {panel.mcp_connected}/{panel.mcp_total}"
    return " · ".join([panel.model, context, mcp, jobs, tasks])


def status_text(session: Session) -> str:
    """``/status``: everything the toolbar says, in full."""
    from cat_code.agent import compaction

    log = session.log
    saved = str(log.path) if log.saved else "not saved yet (nothing said)"
    panel = read_panel(session)
    lines = [
        f"session: {log.id}",
        f"  saved in: {saved}",
        f"  folder: {session.cwd}",
        f"  model: {session.provider.name if session.provider else 'none'}",
    ]
    agent = session.agent
    if agent is not None:
        window = agent.context_window
        last = agent.last_usage
        auto = "on" if agent.auto_compact else f"off ({compaction.AUTO_ENV})"
        if last is not None:
            used = last.prompt_tokens + last.output_tokens
            share = f"{used:,} of {window:,} tokens ({100 * used // max(1, window)}%)"
        else:
            share = f"~{compaction.estimate(agent.messages):,} tokens of {window:,} (estimated)"
        lines.append(f"  context: {share} in {len(agent.messages)} messages")
        lines.append(f"  auto-compact: {auto}, at {compaction.THRESHOLD_PERCENT}% of the window")
    lines.append("  " + session.meter.describe().replace("\n", "\n  "))
    lines.append(f"  MCP servers: {panel.mcp_connected} of {panel.mcp_total} connected (/mcp)")
    lines.append(f"  open tasks: {panel.open_tasks}")
    lines.append("  " + jobs_text(session.jobs).replace("\n", "\n  "))
    return "\n".join(lines)


__all__ = ["Panel", "read_panel", "status_text", "toolbar"]
