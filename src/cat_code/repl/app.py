"""The interactive REPL: ``cat-code`` with no command.

One asyncio loop runs everything. The prompt is up at once; the MCP servers connect in a
background task that prints one summary line when done (prompts sent before that wait
for it, so the model sees every tool). Each turn, tool call or wait runs as the
*foreground* task: SIGINT (Ctrl-C while no prompt is up) cancels only that task, which
cancels in-flight MCP calls. While the prompt is up, Ctrl-C is a key that clears the line.
Questions (permission, elicitation, trust) live in `questions`; slash commands in the
`commands` registry, whose effects this app performs as their `ReplHost`.
Every way out — ``/exit``, Ctrl-D, SIGTERM, SIGHUP, a SIGINT while no turn runs — closes
every MCP server (`cat_code.host.servers.shutdown`: exit 128 + N after a signal; a signal during
the close hurries it).

The conversation is saved as it goes (`Session.log`); ``--continue`` / ``--resume`` and
``/resume`` go on with a saved one, ``/clear`` starts a new one, ``/compact`` summarizes it
and ``/status`` / ``/cost`` show the session's id, context and tokens.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from prompt_toolkit import PromptSession
from prompt_toolkit.patch_stdout import patch_stdout
from rich.text import Text

from cat_code import __version__
from cat_code.agent.history import LoadedSession, SessionNotFound, resolve
from cat_code.agent.loop import Agent
from cat_code.agent.providers import Provider
from cat_code.agent.providers.base import Message
from cat_code.agent.session import Session
from cat_code.base.safe_text import safe_line
from cat_code.host.config.load import McpConfig, load_config, load_run_config, missing_files
from cat_code.host.jobs import Job
from cat_code.host.jobs.shutdown import ended_lines
from cat_code.host.notifications import Note, NoteKind, Priority
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.shutdown import run_until_signal
from cat_code.host.status import mcp_summary
from cat_code.repl.commands import CommandContext, Exit, Show, handle_command, is_command
from cat_code.repl.commands.registry import CANCELLED, Cancelled
from cat_code.repl.commands.session import say_resumed
from cat_code.repl.input import SlashCompleter, history, key_bindings, list_prompts
from cat_code.repl.mentions import MentionError, attach_resources, find_mentions
from cat_code.repl.notes import NoteDisplay
from cat_code.repl.questions import Questions, parse_permission
from cat_code.repl.render import ConsoleLogHandler, TurnView, error_line, make_console, note_line
from cat_code.repl.task_panel import TaskPanel

logger = logging.getLogger(__name__)

PROMPT = "› "
_T = TypeVar("_T")


class ReplOptions(Protocol):
    """What the REPL reads of the command line (`cat_code.cli.options.Options` has it)."""

    @property
    def model(self) -> str | None: ...
    @property
    def yes(self) -> bool: ...
    @property
    def allow_tool(self) -> Sequence[str]: ...
    @property
    def add_dir(self) -> Sequence[Path]: ...
    @property
    def max_turns(self) -> int | None: ...
    @property
    def append_system_prompt(self) -> str | None: ...
    @property
    def resume(self) -> str | None: ...
    @property
    def continue_session(self) -> bool: ...
    @property
    def config_paths(self) -> list[Path] | None: ...
    @property
    def trust_project(self) -> bool: ...


def run_repl(args: ReplOptions) -> int:
    """Entry point for ``cat-code`` with no command."""
    try:
        resumed = resolve(Path.cwd(), resume=args.resume, continue_latest=args.continue_session)
    except SessionNotFound as exc:
        sys.stderr.write(f"cat-code: {safe_line(str(exc))}\n")
        return 2
    if not sys.stdin.isatty():
        sys.stderr.write("cat-code: stdin is not a terminal; for scripts use cat-code -p PROMPT\n")
        return 2
    return asyncio.run(Repl(args, resumed).main())


class Repl:
    """One interactive session: its lifecycle, the read-eval loop, and the `ReplHost` the
    commands' effects use."""

    def __init__(self, args: ReplOptions, resumed: LoadedSession | None = None) -> None:
        self.args = args
        self.resumed = resumed
        self.console = make_console()
        self.view = TurnView(self.console)
        self._foreground: asyncio.Future[Any] | None = None
        self.questions = Questions(
            self.console,
            self.view,
            busy=lambda: self._foreground is not None,
            cancel_turn=self._cancel_foreground,
        )
        self.session = Session(
            model=args.model,
            approve_all=args.yes,
            allow_patterns=list(args.allow_tool),
            add_dirs=list(args.add_dir),
            max_turns=args.max_turns,
            events=self.view,
            asker=self.questions.ask_permission,
            append_system_prompt=args.append_system_prompt,
            resume=resumed,
            trust_project=args.trust_project,
        )
        self.view.side_lines = self.session.subagents.runs.live_lines  # one per subagent
        self.registry = self.session.registry
        self.rules = self.session.rules
        self.permissions = self.session.permissions
        self.questions.workspace = self.permissions.workspace  # where writes need no question
        #: cwd and ``--add-dir``; ``/add-dir`` adds more (every server shares them).
        self.roots = self.session.roots
        self._pool: McpPool | None = None
        self._mcp_ready = asyncio.Event()
        self._session: PromptSession[str] | None = None
        #: The session's notes: at once while the prompt is up, else between outputs.
        self.notes = NoteDisplay(self.console, self.session.notes, self._busy)
        self.view.between = self.notes.show
        #: The task list above the prompt while a task is open (Ctrl-T, /tasks).
        self.task_panel = TaskPanel(self.session.tasks, self.session.shared_task_list)

    # The session owns the model and its agent (``/model`` switches them there): read
    # through, never copied, so ``/clear`` and ``/resume`` act on the agent in use.
    @property
    def pool(self) -> McpPool | None:
        return self._pool

    @property
    def provider(self) -> Provider | None:
        return self.session.provider

    @property
    def agent(self) -> Agent | None:
        return self.session.agent

    @property
    def model_problem(self) -> str | None:
        return self.session.model_problem

    # -- lifecycle -------------------------------------------------------------------

    async def main(self) -> int:
        logging.getLogger().handlers[:] = [ConsoleLogHandler(self.console)]
        self._session = PromptSession(
            history=history(),
            completer=SlashCompleter(self.context, self._ready_pool),
            complete_while_typing=True,
            key_bindings=(bindings := key_bindings()),
            bottom_toolbar=self._toolbar,
        )
        self.task_panel.bind(bindings)
        self.notes.attach(asyncio.get_running_loop())
        self._banner()
        if self.resumed is not None:
            say_resumed(self.console, self.resumed)
        for warning in self.rules.warnings():
            self.console.print(note_line(f"warning: {warning}"))
        if self.rules.withheld:
            await self.questions.trust_project_rules(self.rules)
        elif (allows := self.rules.project_allows()) is not None:
            self.console.print(note_line(allows))
        config = load_run_config(self.args.config_paths, trust_project=self.args.trust_project)
        if config.needs_approval and await self.questions.trust_project(config):
            config = self.reread_config() or config
        self._pool = self.session.open_pool(config, elicitation_handler=self.questions.elicit)
        connect = asyncio.create_task(self._connect_mcp(self._pool), name="mcp-connect")
        # The model SDK loads on a thread while the user types the first prompt.
        prepare = asyncio.create_task(self._prepare_model(), name="model-prepare")

        async def session() -> int:
            try:
                await self._read_eval_loop()
            finally:
                self.notes.detach()
                connect.cancel()
                prepare.cancel()
                self.session.log.close()
                if self.provider is not None:
                    await self.provider.close()
            return 0

        # The terminal may be gone (SIGHUP): nothing is said about the signal.
        servers = self.session.closing(self._pool, self._say_ended)
        return await run_until_signal(servers, session, take=self._cancel_turn, announce=False)

    def _say_ended(self, jobs: list[Job]) -> None:
        for line in ended_lines(jobs):
            self.console.print(note_line(line))

    def _busy(self) -> bool:
        """A turn (or a call) is writing to the terminal: notes wait for a boundary."""
        return self._foreground is not None and not self._foreground.done()

    def _toolbar(self) -> str:
        from cat_code.repl.status_panel import read_panel, toolbar

        return toolbar(read_panel(self.session))

    async def _prepare_model(self) -> None:
        if self.provider is not None:
            try:
                await self.provider.prepare()
            except Exception as exc:  # shown again, as a model error, at the first prompt
                logger.debug("preparing the model failed: %s", exc)

    def _cancel_turn(self, sig: signal.Signals) -> bool:
        """SIGINT while a turn (or a tool call) runs cancels it, not the session."""
        if sig is not signal.SIGINT or self._foreground is None or self._foreground.done():
            return False
        self._foreground.cancel()
        return True

    def _banner(self) -> None:
        model = self.provider.name if self.provider else "no model configured (see /model)"
        self.console.print(
            Text.assemble(
                ("cat-code ", "bold"),
                f"{__version__} · {model} · /help for commands · Ctrl-D quits",
            )
        )

    async def _connect_mcp(self, pool: McpPool) -> None:
        try:
            await self.session.connect()
            await list_prompts(pool)
        finally:
            self._mcp_ready.set()
        self.say_mcp_summary(pool)

    def _ready_pool(self) -> McpPool | None:
        """The pool once the servers are done connecting (Tab may then ask them)."""
        return self._pool if self._mcp_ready.is_set() else None

    def say_mcp_summary(self, pool: McpPool) -> None:
        line = mcp_summary(pool.status())
        if line is not None:  # shown at once while the prompt is up
            trouble = "failed" in line or "login" in line or "approval" in line
            priority = Priority.HIGH if trouble else Priority.LOW
            self.session.notes.post(Note(NoteKind.SERVER_CONNECTED, "mcp", line, priority))

    # -- reading and dispatching ---------------------------------------------------------

    async def _read_eval_loop(self) -> None:
        assert self._session is not None
        while True:
            await self.task_panel.refresh()  # a shared list may have moved on
            try:
                with patch_stdout(raw=True):
                    line = await self._session.prompt_async(
                        lambda: self.task_panel.message(PROMPT),
                        prompt_continuation="  ",
                        handle_sigint=False,
                    )
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt clears the line, like a shell
            except EOFError:
                return
            if not line.strip():
                continue
            try:
                if is_command(line):
                    if (pool := self._ready_pool()) is not None:
                        await list_prompts(pool)  # the prompt commands are current
                    outcome = handle_command(line, self.context())
                    if isinstance(outcome, Exit):
                        return
                    if isinstance(outcome, Show):
                        style = "red" if outcome.kind == "error" else ""
                        self.console.print(Text(outcome.text, style=style))
                    else:
                        await outcome.perform(self)
                else:
                    await self.run_prompt(line)
            except Exception as exc:  # a bug in one command must not end the session
                logger.debug("handling %r failed", line, exc_info=True)
                self.console.print(error_line(f"internal error: {type(exc).__name__}: {exc}"))
            self.notes.show()  # what came while it ran

    def context(self) -> CommandContext:
        pool = self._pool
        return CommandContext(
            registry=self.registry,
            pool=pool,
            model=self.provider.name if self.provider else None,
            model_problem=self.model_problem,
            mcp_connecting=not self._mcp_ready.is_set(),
            statuses=pool.status if pool is not None else list,
            tool_search=self._tool_search_status,
            width=self.console.width,
            rules=self.rules,
            memory=self.session.memory,
            status=self._status_text,
            cost=self._cost_text,
            tasks=self.task_panel.full_text,
            jobs=self.session.jobs,
        )

    def _status_text(self) -> str:
        """``/status``: the session in full (`cat_code.repl.status_panel`)."""
        from cat_code.repl.status_panel import status_text

        return status_text(self.session)

    def _cancel_foreground(self) -> None:
        if self._foreground is not None:
            self._foreground.cancel()

    def _cost_text(self) -> str:
        """``/cost``: the session's tokens (the subagents' included), then each subagent's."""
        subagents = self.session.subagents.runs.describe()
        return "\n".join(t for t in (self.session.meter.describe(), subagents) if t)

    def _tool_search_status(self) -> str | None:
        agent = self.agent
        if agent is None:  # no model: its window is unknown, so auto is not decided yet
            from cat_code.agent.tool_search import status_without_model

            return status_without_model()
        return agent.tool_search.status(agent.messages)

    # -- what the commands' effects use (`ReplHost`) ----------------------------------------

    async def question(self, message: str, default: str = "") -> str:
        return await self.questions.question(message, default)

    async def in_foreground(self, work: Awaitable[_T]) -> _T | Cancelled:
        """Run ``work`` as the task Ctrl-C cancels; `CANCELLED` when it was."""
        task = asyncio.ensure_future(work)
        self._foreground = task
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # we are being shut down, not the user interrupting a turn
            return CANCELLED
        finally:
            self._foreground = None

    async def wait_for_mcp(self) -> bool:
        if self._mcp_ready.is_set():
            return True
        self.view.begin("waiting for the MCP servers to connect…")
        try:
            return await self.in_foreground(self._mcp_ready.wait()) is not CANCELLED
        finally:
            self.view.end()

    async def run_prompt(self, text: str | list[Message]) -> None:
        if self.agent is None:
            self.console.print(note_line(self.model_problem or "No model configured."))
            return
        if not await self.wait_for_mcp():
            self.console.print(note_line("⎿ cancelled"))
            return
        if isinstance(text, str) and find_mentions(text):
            try:
                attached = await self.in_foreground(attach_resources(text, self._pool))
            except MentionError as exc:
                self.console.print(error_line(f"{exc} — the prompt was not sent (↑ edits it)"))
                return
            if isinstance(attached, Cancelled):
                return
            text = attached
        agent = self.agent
        self.view.begin()
        try:
            turn = agent.run(text) if isinstance(text, str) else agent.run_messages(text)
            outcome = await self.in_foreground(turn)
        finally:
            self.view.end()
        if isinstance(outcome, Cancelled):
            self.console.print(note_line("⎿ cancelled"))
            self.console.print()
            return
        if outcome.status == "error":
            self.console.print(error_line(str(outcome.error)))
        elif outcome.status == "max_turns":
            self.console.print(note_line(outcome.turn_limit_note))
        if outcome.stop_reason == "max_tokens":
            self.console.print(note_line("(the answer was cut off at the output token limit)"))
        self.console.print()

    def reread_config(self) -> McpConfig | None:
        """The config files read again, or None (and why, said) when one of them could not
        be used: a reload must not stop every server of a file saved half-edited."""
        paths = self.args.config_paths
        config = load_config(paths, trust_project=self.args.trust_project)
        problems = [*config.warnings, *missing_files(paths)]
        if problems:
            for problem in problems:
                self.console.print(error_line(problem))
            self.console.print(
                error_line("MCP config not reloaded (nothing changed): fix it, then /mcp reload")
            )
            return None
        return config


__all__ = ["Repl", "ReplOptions", "mcp_summary", "parse_permission", "run_repl"]
