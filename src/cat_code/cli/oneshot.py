"""``cat-code -p PROMPT``: run the agent once, for scripts.

stdout carries the model's text, written (and flushed) as it is generated, each message
ending with a newline; everything else a human watching wants (tool calls as ``⏺``
lines, progress, retries, MCP failures, errors) goes to stderr. Text the model writes
before asking for tools is on stdout too: while it streams, nobody knows yet whether
tool calls follow. A message that did not stream is written whole when complete. Nothing
can ask: tools that would need approval are refused unless ``--yes`` or
``--allow-tool`` approves them, elicitation requests are declined, and a server that
needs a sign-in is named on stderr, never signed in (no browser). Exit 0 when the model
gave its answer, 1 otherwise. SIGINT, SIGTERM and SIGHUP end the run through the
same cleanup as success (`cat_code.host.servers.shutdown`): every MCP server is closed before the
process exits, with 128 + N. Everything printed, the answer included, goes through
`safe_text`: no server and no model output can drive the terminal.

``--output-format json`` prints nothing on stdout but one result object at the end;
``stream-json`` prints one JSON object per line as things happen: a ``system``/``init``
line first, an ``assistant`` line per model message (text and ``tool_use`` blocks), a
``user`` line per set of tool results (``tool_result`` blocks), and the same result
object last (Claude Code's shapes), and a ``system``/``tasks`` line with the whole task
list each time it changes. In both, stdout holds nothing else; stderr is as in
text mode. A run that fails before it starts (no model, an empty prompt) still ends with
a result object.

The conversation is saved (`cat_code.agent.history`); ``session_id`` is its id, which
``--resume ID`` takes. ``--continue`` / ``--resume`` go on with a saved one (exit 2 when
there is none). ``usage`` adds up every request of the run (a compaction's summary too),
and ``total_cost_usd`` prices it (null for a model whose price is unknown); both count the
subagents' requests, and ``subagents`` lists each run (`cat_code.agent.subagents.runs`).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from cat_code.agent.compaction import Compaction
from cat_code.agent.cost import UsageMeter
from cat_code.agent.history import LoadedSession, SessionNotFound, resolve
from cat_code.agent.loop import AgentEvents, Outcome
from cat_code.agent.providers.base import AssistantMessage, ModelError, ToolCall
from cat_code.agent.session import Session
from cat_code.agent.subagents import RunBook
from cat_code.agent.transcript import tool_line
from cat_code.base.safe_text import safe_json, safe_text
from cat_code.cli.oneshot_notes import NotePrinter
from cat_code.cli.options import Options
from cat_code.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from cat_code.host.config.load import McpConfig
from cat_code.host.jobs.manager import Job
from cat_code.host.jobs.shutdown import ended_lines
from cat_code.host.notifications import NoteKind, server_note
from cat_code.host.servers.prestart import Prestarted
from cat_code.host.servers.server import ServerState
from cat_code.host.servers.shutdown import run_until_signal
from cat_code.host.status import declined_line, unavailable_line
from cat_code.host.tasks import Task
from cat_code.tools.base import ToolResult

logger = logging.getLogger(__name__)


def run_oneshot(
    args: Options,
    *,
    runner: asyncio.Runner | None = None,
    config: McpConfig | None = None,
    prestarted: Prestarted | None = None,
) -> int:
    """Entry point for ``cat-code -p``; `cat_code.cli.early` gives the loop (``runner``)
    its stdio servers were spawned on, with their ``config``, as ``prestarted``."""
    report = _Report(args.output_format, args.model)
    try:
        resumed = resolve(Path.cwd(), resume=args.resume, continue_latest=args.continue_session)
    except SessionNotFound as exc:
        report.failed(str(exc))
        return EXIT_USAGE
    prompt = args.prompt or ""
    if prompt == "-":
        prompt = sys.stdin.read()
    if not prompt.strip():
        report.failed("the prompt is empty")
        return EXIT_FAILED
    run = _run(args, prompt, report, resumed, config, prestarted)
    return runner.run(run) if runner is not None else asyncio.run(run)


def _emit(record: dict[str, Any]) -> None:
    # safe_json: a server's or the model's C1 controls (CSI) stay escaped in the JSON too.
    sys.stdout.write(safe_json(record, indent=None) + "\n")
    sys.stdout.flush()


class _Report:
    """What a run prints on stdout in ``json`` and ``stream-json`` mode (nothing in text)."""

    def __init__(self, output_format: str, model: str | None = None) -> None:
        self.format = output_format
        #: The model as asked for (``--model``), for an init line of a run that never started.
        self.model = model or ""
        self._init_sent = False
        #: The saved session's id once there is a session (a run that never started: any).
        self.session_id = str(uuid.uuid4())
        self.started = time.monotonic()
        #: Every request's tokens, once the session exists.
        self.meter: UsageMeter | None = None
        #: The subagents' runs (their tokens are in ``meter`` too), for ``subagents``.
        self.subagents: RunBook | None = None

    @property
    def structured(self) -> bool:
        return self.format in ("json", "stream-json")

    @property
    def streaming(self) -> bool:
        return self.format == "stream-json"

    def line(self, record: dict[str, Any]) -> None:
        """One ``stream-json`` line (nothing in the other formats)."""
        if self.streaming:
            _emit({**record, "session_id": self.session_id})

    def init(self, model: str, tools: list[str], servers: list[dict[str, str]]) -> None:
        self._init_sent = True
        self.line(
            {
                "type": "system",
                "subtype": "init",
                "cwd": str(Path.cwd()),
                "model": model,
                "tools": tools,
                "mcp_servers": servers,
            }
        )

    def tasks(self, tasks: list[Task]) -> None:
        """The task list, whole, each time it changed (stream-json)."""
        self.line({"type": "system", "subtype": "tasks", "tasks": [t.to_json() for t in tasks]})

    def result(self, outcome: Outcome | None, error: str | None = None) -> None:
        """The result object, last (json and stream-json)."""
        if not self.structured:
            return
        if outcome is not None and outcome.status == "done":
            subtype = "success"
        elif outcome is not None and outcome.status == "max_turns":
            subtype = "error_max_turns"
            error = error or outcome.turn_limit_note
        else:
            subtype = "error"
        usage = outcome.usage if outcome is not None else None
        cost: float | None = 0.0
        if self.meter is not None and self.meter.requests:
            usage = self.meter.total  # the compaction summaries' requests too
            cost = self.meter.cost_usd()
        record: dict[str, Any] = {
            "type": "result",
            "subtype": subtype,
            "is_error": subtype != "success",
            "result": outcome.text if outcome is not None else "",
            "num_turns": outcome.model_turns if outcome is not None else 0,
            "duration_ms": round((time.monotonic() - self.started) * 1000),
            "session_id": self.session_id,
            "total_cost_usd": round(cost, 6) if cost is not None else None,
            "usage": {
                "input_tokens": usage.input_tokens if usage else 0,
                "output_tokens": usage.output_tokens if usage else 0,
                "cache_read_input_tokens": usage.cache_read_input_tokens if usage else 0,
                "cache_creation_input_tokens": usage.cache_creation_input_tokens if usage else 0,
            },
        }
        record["subagents"] = self.subagents.to_json() if self.subagents is not None else []
        if error is not None:
            record["error"] = error
        _emit(record)

    def failed(self, error: str) -> None:
        """A run that could not start: said on stderr, and as a result object (stream-json:
        after its init line, which always comes first)."""
        _say(f"cat-code: {error}")
        if not self._init_sent:
            self.init(self.model, [], [])
        self.result(None, error)


def _say(text: str) -> None:
    sys.stderr.write(safe_text(text) + "\n")
    sys.stderr.flush()


class _OneShotEvents(AgentEvents):
    """The model's text on stdout as it comes (text mode), or the ``stream-json`` lines;
    tool calls and progress on stderr."""

    def __init__(self, report: _Report) -> None:
        self.report = report
        self._last_progress: dict[str, str] = {}
        self._streamed = False  # the current message's text is on stdout already
        self._line_open = False  # stdout's last line has no newline yet
        self._refused: set[str] = set()
        #: The session's notes, shown between outputs (set once the session exists).
        self.notes: NotePrinter | None = None

    def show_notes(self) -> None:
        if self.notes is not None:
            self.notes.drain()

    def retrying(self, error: ModelError, delay: float, attempt: int) -> None:
        _say(f"cat-code: {error}; retrying in {delay:.1f} s (attempt {attempt})")

    def model_started(self) -> None:
        self.end_line()
        self.show_notes()
        self._streamed = False

    def assistant_delta(self, text: str) -> None:
        self._streamed = True
        self._write(text)

    def assistant_text(self, text: str, *, final: bool) -> None:
        if not self._streamed:
            self._write(text)
        self.end_line()

    def end_line(self) -> None:
        """End the text on stdout with a newline (also when a stream was cut)."""
        if self._line_open:
            self._write("\n")

    def _write(self, text: str) -> None:
        if not text or self.report.structured:
            return
        # The answer too: a prompt-injected model could write escape sequences.
        sys.stdout.write(safe_text(text))
        sys.stdout.flush()
        self._line_open = not text.endswith("\n")

    def assistant_message(self, message: AssistantMessage) -> None:
        # Thinking as the Messages API shapes it, never in the text or the result.
        content: list[dict[str, Any]] = [block.content_block() for block in message.thinking]
        if message.text:
            content.append({"type": "text", "text": message.text})
        for call in message.tool_calls:
            block = {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
            content.append(block)
        body = {"type": "message", "role": "assistant", "content": content}
        self.report.line({"type": "assistant", "message": body, "parent_tool_use_id": None})

    def tool_results(self, results: list[ToolResult]) -> None:
        content = [
            {
                "type": "tool_result",
                "tool_use_id": result.tool_call_id,
                "content": result.content,
                "is_error": result.is_error,
            }
            for result in results
        ]
        body = {"role": "user", "content": content}
        self.report.line({"type": "user", "message": body, "parent_tool_use_id": None})
        self.show_notes()

    def tool_progress(
        self, call: ToolCall, progress: float, total: float | None, message: str | None
    ) -> None:
        amount = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        text = f"  … {call.name}: {message or amount}"
        if self._last_progress.get(call.id) != text:
            self._last_progress[call.id] = text
            _say(text)

    def tool_refused(self, call: ToolCall, notice: str) -> None:
        self._refused.add(call.id)
        _say(f"cat-code: {notice}")

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        if call.id in self._refused:
            self._refused.discard(call.id)
            return
        _say(tool_line(call.name, call.arguments, result.content))

    def compacted(self, result: Compaction) -> None:
        self.show_notes()  # the compaction's note among them
        if not result.applied:
            return  # the conversation is as it was: no boundary
        metadata = {
            "trigger": "auto" if result.automatic else "manual",
            "pre_tokens": result.tokens_before,
            "post_tokens": result.tokens_after,
        }
        self.report.line(
            {"type": "system", "subtype": "compact_boundary", "compact_metadata": metadata}
        )

    def compaction_failed(self, error: ModelError) -> None:
        _say(f"cat-code: could not compact the conversation: {error}")


async def _decline(server: str, params: dict[str, Any]) -> dict[str, Any]:
    _say(f"cat-code: {declined_line(server, params, 'in -p mode')}")
    return {"action": "decline"}


def _server_state(state: ServerState) -> str:
    """A server's state as stream-json's ``mcp_servers`` names it (Claude Code's words)."""
    if state is ServerState.NEEDS_LOGIN:
        return "needs-auth"
    return str(state).lower().replace("_", "-")


async def _run(
    args: Options,
    prompt: str,
    report: _Report,
    resumed: LoadedSession | None,
    config: McpConfig | None = None,
    prestarted: Prestarted | None = None,
) -> int:
    session = Session(
        model=args.model,
        approve_all=args.yes,
        allow_patterns=args.allow_tool,
        add_dirs=args.add_dir,
        max_turns=args.max_turns,
        events=(events := _OneShotEvents(report)),
        append_system_prompt=args.append_system_prompt,
        resume=resumed,
        trust_project=args.trust_project,
    )
    report.session_id, report.meter = session.session_id, session.meter
    events.notes = NotePrinter(session.notes, report.line)
    session.tasks.listeners.append(report.tasks)
    report.subagents = session.subagents.runs
    session.subagents.on_change = lambda run: _say(f"cat-code: {run.status_line()}")
    session.subagents.on_tool = lambda run, call, result: _say(
        f"  {run.name}: {tool_line(call.name, call.arguments, result.content)}"
    )
    for warning in resumed.warnings if resumed is not None else ():
        _say(f"cat-code: warning: {warning}")
    provider, agent = session.provider, session.agent
    if provider is None or agent is None:
        report.failed(str(session.model_problem))
        return EXIT_FAILED

    if config is None:
        from cat_code.host.config.load import load_run_config

        config = load_run_config(args.config_paths, trust_project=args.trust_project)
    pool = session.open_pool(config, elicitation_handler=_decline, prestarted=prestarted)
    # The SDK import (about a second) overlaps the servers' startup.
    prepare = asyncio.create_task(provider.prepare(), name="model-prepare")

    async def work() -> int:
        outcome: Outcome | None = None
        try:
            await session.connect()
            for status in pool.status():
                if status.state in (ServerState.FAILED, ServerState.NEEDS_LOGIN):
                    # Never a browser for a sign-in: say who and how.
                    failed = status.state is ServerState.FAILED
                    kind = NoteKind.SERVER_FAILED if failed else NoteKind.SIGN_IN_NEEDED
                    line = unavailable_line(status) or status.name
                    session.notes.post(server_note(kind, status.name, line))
                elif status.state is ServerState.NEEDS_APPROVAL:  # nothing can ask here
                    _say(
                        f"cat-code: skipped project server '{status.name}' (./.mcp.json, not "
                        f"approved in this folder): run cat-code mcp approve {status.name}"
                    )
            for warning in session.rules.warnings():
                _say(f"cat-code: warning: {warning}")
            if session.rules.withheld:  # the project's allow rules wait for an approval
                _say(f"cat-code: {session.rules.project_allows()}")
            servers = [{"name": s.name, "status": _server_state(s.state)} for s in pool.status()]
            model = provider.name.partition(":")[2] or provider.name
            report.init(model, session.registry.names(), servers)
            outcome = await agent.run(prompt)
        finally:
            events.end_line()
            events.show_notes()
            prepare.cancel()
            session.log.close()
            await provider.close()
        if outcome.status == "done":
            if outcome.stop_reason == "max_tokens":
                _say("cat-code: the answer was cut off at the output token limit")
            report.result(outcome)
            return EXIT_OK
        if outcome.status == "error":
            _say(f"cat-code: {outcome.error}")
            report.result(outcome, str(outcome.error))
        else:
            _say(f"cat-code: {outcome.turn_limit_note}")
            report.result(outcome)
        return EXIT_FAILED

    def tell(ended: list[Job]) -> None:
        for line in ended_lines(ended):
            _say(f"cat-code: {line}")

    servers = session.closing(pool if prestarted is None else prestarted, tell)
    return await run_until_signal(servers, work)
