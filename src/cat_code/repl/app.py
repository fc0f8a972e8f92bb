"""The interactive REPL: ``cat-code`` with no command.

One asyncio loop runs everything. The prompt is up at once; the MCP servers connect in a
background task that prints one summary line when done (prompts sent before that wait
for it, so the model sees every tool). Each turn, tool call or wait runs as the
*foreground* task: SIGINT (Ctrl-C while no prompt is up) cancels only that task, which
cancels in-flight MCP calls. While the prompt is up, Ctrl-C is a key that clears the line.
Questions (permission, elicitation) take a lock, pause the spinner and use their own
prompt, so only one is ever on screen. Every way out — ``/exit``, Ctrl-D, SIGTERM,
SIGHUP, a SIGINT while no turn runs — closes every MCP server (`cat_code.host.shutdown`: exit
128 + N after a signal; a signal during the close hurries it).

The conversation is saved as it goes (`Session.log`); ``--continue`` / ``--resume`` and
``/resume`` go on with a saved one, ``/clear`` starts a new one, ``/compact`` summarizes it
and ``/status`` / ``/cost`` show the session's id, context and tokens.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import AsyncGenerator, Awaitable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.patch_stdout import patch_stdout
from rich.text import Text

from cat_code import __version__
from cat_code.agent.history import (
    LoadedSession,
    SessionNotFound,
    list_sessions,
    resolve,
    session_line,
)
from cat_code.agent.loop import Agent
from cat_code.agent.permissions import Answer, RuleError, server_of
from cat_code.agent.providers import (
    ModelSpecError,
    NoModelConfigured,
    Provider,
    create_provider,
    resolve_model,
)
from cat_code.agent.providers.base import Message, ModelError, ToolCall, UserMessage
from cat_code.agent.session import Session
from cat_code.agent.transcript import compact_json
from cat_code.host.config.load import McpConfig, load_config, load_config_from_args
from cat_code.host.config.trust import Decision, decide
from cat_code.host.home import cat_code_home, ensure_home, private_file
from cat_code.host.pool import McpPool
from cat_code.host.project_trust import project_content
from cat_code.host.project_trust import record as record_content
from cat_code.host.prompts import command_names
from cat_code.host.safe_text import SafeWriter, safe_line
from cat_code.host.server import McpServer, ServerState, ServerStatus
from cat_code.host.shutdown import run_until_signal
from cat_code.host.status import decision_line, waiting_lines
from cat_code.mcp.auth.callback import open_in_background
from cat_code.mcp.errors import ConfigError, McpClientError, describe_error
from cat_code.repl import prompt_commands
from cat_code.repl.commands import (
    COMMANDS,
    Action,
    AddDir,
    CallTool,
    ClearConversation,
    CommandContext,
    Compact,
    DecideProject,
    Exit,
    Login,
    Logout,
    ManageServer,
    ReloadConfig,
    RemoveRule,
    ResumeSession,
    Show,
    SwitchModel,
    complete,
    handle_command,
    is_command,
)
from cat_code.repl.elicitation import fill_form
from cat_code.repl.mentions import (
    MentionError,
    attach_resources,
    complete_mention,
    find_mentions,
    mention_word,
)
from cat_code.repl.prompt_commands import ListPrompts, ListResources, ListSkills, RunPrompt
from cat_code.repl.render import (
    ConsoleLogHandler,
    TurnView,
    change_diff,
    error_line,
    make_console,
    note_line,
)

logger = logging.getLogger(__name__)

PROMPT = "› "
#: How long a command waits for prompt listings before it goes on with what is known.
PROMPT_LISTING_TIMEOUT_S = 5.0
HISTORY_FILE = "history"
#: How many saved sessions ``/resume`` lists to pick from (the most recent).
RESUME_LIST = 20
_T = TypeVar("_T")
_DOING = {"restart": "restarting", "disable": "disabling", "enable": "enabling"}


class _Cancelled:
    """The foreground task was cancelled by the user (Ctrl-C)."""


CANCELLED = _Cancelled()


def run_repl(args: argparse.Namespace) -> int:
    """Entry point for ``cat-code`` with no command."""
    try:
        resumed = resolve(
            Path.cwd(),
            resume=getattr(args, "resume", None),
            continue_latest=getattr(args, "continue_session", False),
        )
    except SessionNotFound as exc:
        sys.stderr.write(f"cat-code: {safe_line(str(exc))}\n")
        return 2
    if not sys.stdin.isatty():
        sys.stderr.write("cat-code: stdin is not a terminal; for scripts use cat-code -p PROMPT\n")
        return 2
    return asyncio.run(Repl(args, resumed).main())


def mcp_summary(statuses: Iterable[ServerStatus]) -> str | None:
    """The one line shown when the servers are done connecting (None when none are configured)."""
    statuses = [s for s in statuses if s.state not in (ServerState.DISABLED, ServerState.REJECTED)]
    if not statuses:
        return None
    connected = [s for s in statuses if s.state is ServerState.CONNECTED]
    failed = [s for s in statuses if s.state is ServerState.FAILED]
    login = [s.name for s in statuses if s.state is ServerState.NEEDS_LOGIN]
    line = f"MCP: {len(connected)} server(s), {sum(s.tools for s in connected)} tool(s) registered"
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


def parse_permission(raw: str, *, has_server: bool) -> Answer | None:
    """The answer typed at the permission question (None: ask again)."""
    answer = raw.strip().lower()
    if answer in ("y", "yes"):
        return Answer.YES
    if answer in ("", "n", "no"):
        return Answer.NO
    if answer in ("a", "always"):
        return Answer.ALWAYS_TOOL
    if has_server and answer in ("s", "server"):
        return Answer.ALWAYS_SERVER
    return None


class Repl:
    """One interactive session."""

    def __init__(self, args: argparse.Namespace, resumed: LoadedSession | None = None) -> None:
        self.args = args
        self.resumed = resumed
        self.console = make_console()
        self.view = TurnView(self.console)
        self.session = Session(
            model=args.model,
            approve_all=args.yes,
            allow_patterns=args.allow_tool,
            add_dirs=args.add_dir,
            max_turns=args.max_turns,
            events=self.view,
            asker=self._ask_permission,
            append_system_prompt=getattr(args, "append_system_prompt", None),
            resume=resumed,
            trust_project=bool(getattr(args, "trust_project", False)),
        )
        self.registry = self.session.registry
        self.rules = self.session.rules
        self.permissions = self.session.permissions
        #: cwd and ``--add-dir``; ``/add-dir`` adds more (every server shares them).
        self.roots = self.session.roots
        self.pool: McpPool | None = None
        self._foreground: asyncio.Future[Any] | None = None
        self._mcp_ready = asyncio.Event()
        self._ask_lock = asyncio.Lock()
        self._session: PromptSession[str] | None = None
        self._questions: PromptSession[str] | None = None

    # The session owns the model and its agent (``/model`` switches them there): read
    # through, never copied, so ``/clear`` and ``/resume`` act on the agent in use.
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
            history=_history(),
            completer=_SlashCompleter(self),
            complete_while_typing=True,
            key_bindings=_key_bindings(),
        )
        self._questions = PromptSession()
        self._banner()
        if self.resumed is not None:
            self._say_resumed(self.resumed)
        for warning in self.rules.warnings():
            self.console.print(note_line(f"warning: {warning}"))
        if self.rules.withheld:
            await self._ask_project_rules()
        elif (allows := self.rules.project_allows()) is not None:
            self.console.print(note_line(allows))
        config = load_config_from_args(self.args)
        if config.needs_approval:
            config = await self._ask_project_trust(config)
        self.pool = self.session.open_pool(config, elicitation_handler=self._elicit)
        connect = asyncio.create_task(self._connect_mcp(self.pool), name="mcp-connect")
        # The model SDK loads on a thread while the user types the first prompt.
        prepare = asyncio.create_task(self._prepare_model(), name="model-prepare")

        async def session() -> int:
            try:
                await self._read_eval_loop()
            finally:
                connect.cancel()
                prepare.cancel()
                self.session.log.close()
                if self.provider is not None:
                    await self.provider.close()
            return 0

        # The terminal may be gone (SIGHUP): nothing is said about the signal.
        return await run_until_signal(self.pool, session, take=self._cancel_turn, announce=False)

    async def _ask_project_trust(self, config: McpConfig) -> McpConfig:
        """Name the project's servers waiting for approval and ask once whether to start
        them all; the config to start with (read again after a yes)."""
        waiting = [w.name for w in config.needs_approval]
        self.console.print(
            Text(
                f"./.mcp.json (this project) has {len(waiting)} MCP server(s) you have not "
                "approved; nothing of them runs until you do:",
                style="yellow",
            )
        )
        for line in waiting_lines(config):
            self.console.print(Text(line))
        try:
            answer = await self._question("approve and start them all? [y/N] › ")
        except (EOFError, KeyboardInterrupt):
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            self.console.print(
                note_line(
                    "not started — /mcp approve NAME starts one, /mcp reject NAME stops the "
                    "question for it"
                )
            )
            return config
        try:
            decide(waiting, Decision.APPROVED)
        except ConfigError as exc:
            self.console.print(error_line(str(exc)))
            return config
        return self._reread_config() or config

    async def _ask_project_rules(self) -> None:
        """Name the project's allow rules the user has not approved; ask once to apply them."""
        waiting = [c for c in project_content() if c.decision is None]
        if not waiting:  # rejected: said once, not asked
            self.console.print(note_line(str(self.rules.project_allows())))
            return
        self.console.print(Text(str(self.rules.project_allows()), style="yellow"))
        try:
            answer = await self._question("approve and apply them? [y/N] › ")
        except (EOFError, KeyboardInterrupt):
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            self.console.print(note_line("not applied — cat-code project approve applies them"))
            return
        for content in waiting:
            record_content(content, Decision.APPROVED)
        self.rules.reload()
        self.console.print(note_line("approved for this folder"))

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
        if (worktree := self._worktree_line()) is not None:
            self.console.print(Text(worktree, style="cyan"))

    def _worktree_line(self) -> str | None:
        """Which worktree the session runs in (``cat-code -w``), if any."""
        wt = getattr(self.args, "active_worktree", None)
        if wt is None:
            return None
        return safe_line(f"worktree {wt.name} · branch {wt.branch} · {wt.path}")

    async def _connect_mcp(self, pool: McpPool) -> None:
        try:
            await self.session.connect()
            await _list_prompts(pool)
        finally:
            self._mcp_ready.set()
        self._say_mcp_summary(pool)

    def _say_mcp_summary(self, pool: McpPool) -> None:
        line = mcp_summary(pool.status())
        if line is not None:
            trouble = "failed" in line or "login" in line or "approval" in line
            self.console.print(Text(line, style="yellow" if trouble else "bright_black"))

    # -- reading and dispatching ---------------------------------------------------------

    async def _read_eval_loop(self) -> None:
        assert self._session is not None
        while True:
            try:
                with patch_stdout(raw=True):
                    line = await self._session.prompt_async(
                        PROMPT, prompt_continuation="  ", handle_sigint=False
                    )
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt clears the line, like a shell
            except EOFError:
                return
            if not line.strip():
                continue
            try:
                if is_command(line):
                    await self._list_prompts()
                    action = handle_command(line, self.context())
                    if isinstance(action, Exit):
                        return
                    await self._perform(action)
                else:
                    await self._run_prompt(line)
            except Exception as exc:  # a bug in one command must not end the session
                logger.debug("handling %r failed", line, exc_info=True)
                self.console.print(error_line(f"internal error: {type(exc).__name__}: {exc}"))

    async def _list_prompts(self) -> None:
        """List the prompts again where a server said they changed (no request otherwise),
        so the prompt commands are current; bounded, and quiet on failure."""
        if self.pool is not None and self._mcp_ready.is_set():
            await _list_prompts(self.pool)

    def context(self) -> CommandContext:
        pool = self.pool
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
            cost=self.session.meter.describe,
        )

    def _status_text(self) -> str:
        """``/status``: the session, where it is saved, the model, how full the context is."""
        session = self.session
        log = session.log
        saved = str(log.path) if log.saved else "not saved yet (nothing said)"
        lines = [
            f"session: {log.id}",
            f"  saved in: {saved}",
            f"  folder: {session.cwd}",
            *([f"  {worktree}"] if (worktree := self._worktree_line()) else []),
            f"  model: {self.provider.name if self.provider else 'none'}",
        ]
        agent = self.agent
        if agent is not None:
            from cat_code.agent import compaction

            window = agent.context_window
            last = agent.last_usage
            auto = "on" if agent.auto_compact else f"off ({compaction.AUTO_ENV})"
            if last is not None:
                used = last.prompt_tokens + last.output_tokens
                share = f"{used:,} of {window:,} tokens ({100 * used // max(1, window)}%)"
            else:
                share = f"~{compaction.estimate(agent.messages):,} tokens of {window:,} (estimated)"
            lines.append(f"  context: {share} in {len(agent.messages)} messages")
            lines.append(
                f"  auto-compact: {auto}, at {compaction.THRESHOLD_PERCENT}% of the window"
            )
        lines.append("  " + session.meter.describe().replace("\n", "\n  "))
        return "\n".join(lines)

    def _say_resumed(self, loaded: LoadedSession) -> None:
        turns = f"{loaded.turns} turn{'' if loaded.turns == 1 else 's'}"
        for warning in loaded.warnings:
            self.console.print(note_line(f"warning: {warning}"))
        self.console.print(
            Text(f"resumed session {loaded.id} ({turns}, {len(loaded.messages)} messages)")
        )
        last = next(
            (m for m in reversed(loaded.messages) if isinstance(m, UserMessage) and m.text), None
        )
        if last is not None:
            prompt = " ".join(last.text.split())
            self.console.print(
                Text(
                    f"  last prompt: {prompt[:100]}{'…' if len(prompt) > 100 else ''}",
                    "bright_black",
                )
            )

    def _tool_search_status(self) -> str | None:
        agent = self.agent
        if agent is None:  # no model: its window is unknown, so auto is not decided yet
            from cat_code.agent.tool_search import status_without_model

            return status_without_model()
        return agent.tool_search.status(agent.messages)

    async def _perform(self, action: Action) -> None:
        if isinstance(action, AddDir | RemoveRule):
            self._change_settings(action)
        elif isinstance(action, ListResources | ListPrompts | ListSkills | RunPrompt):
            await self._offering(action)
        elif isinstance(action, Exit):
            return
        elif isinstance(action, Login | Logout):
            await self._sign(action)
        elif isinstance(action, ReloadConfig | ManageServer):
            await self._manage(action)
        elif isinstance(action, DecideProject):
            await self._decide(action)
        elif isinstance(action, Show):
            self.console.print(Text(action.text, style="red" if action.kind == "error" else ""))
        elif isinstance(action, SwitchModel):
            await self._switch_model(action.spec)
        elif isinstance(action, ClearConversation):
            self.session.new_conversation()  # a new session file; the ledger forgets all
            self.console.print(Text("conversation cleared", style="bright_black"))
        elif isinstance(action, Compact):
            await self._compact(action.instructions)
        elif isinstance(action, ResumeSession):
            await self._resume(action.choice)
        else:
            await self._call_tool(action)

    async def _switch_model(self, spec: str) -> None:
        """``/model NAME``: the conversation goes on with another model (its messages are
        our own types, so any provider can take them)."""
        try:
            provider = create_provider(resolve_model(spec))
        except (ModelSpecError, NoModelConfigured) as exc:
            self.console.print(error_line(f"/model: {exc}"))
            return
        old = self.session.switch_model(provider)
        if old is not None:
            await old.close()
        self.console.print(Text(f"model: {provider.name} (the conversation goes on)"))

    async def _compact(self, instructions: str) -> None:
        """``/compact``: the model summarizes the conversation; the view says what it saved."""
        agent = self.agent
        if agent is None:
            self.console.print(note_line(self.model_problem or "No model configured."))
            return
        self.view.begin("compacting the conversation…")
        try:
            result = await self._in_foreground(agent.compact(instructions))
        except ModelError as exc:
            self.console.print(error_line(f"/compact: {exc} (the conversation is as it was)"))
            return
        finally:
            self.view.end()
        if isinstance(result, _Cancelled):
            self.console.print(note_line("⎿ cancelled (the conversation is as it was)"))
        elif result is None:
            self.console.print(note_line("nothing to compact yet: no exchange before the latest"))

    async def _resume(self, choice: str) -> None:
        """``/resume [ID|N]``: list this folder's sessions (asking which, when none is
        named) and go on with the one picked, in its file."""
        sessions = [s for s in list_sessions(self.session.cwd) if s.id != self.session.log.id]
        if not sessions:
            self.console.print(note_line("no other saved session in this folder"))
            return
        picked = self._pick_session(sessions, choice) if choice else None
        if not choice:
            for number, saved in enumerate(sessions[:RESUME_LIST], 1):
                self.console.print(Text(f"{number:>3}. {session_line(saved)}"))
            try:
                answer = await self._question("resume which? (number or id; Enter cancels) › ")
            except (EOFError, KeyboardInterrupt):
                answer = ""
            if not answer.strip():
                self.console.print(note_line("⎿ not resumed"))
                return
            picked = self._pick_session(sessions, answer.strip())
        if picked is None:
            return
        self.session.resume(picked)
        self._say_resumed(picked)

    def _pick_session(self, sessions: list[LoadedSession], choice: str) -> LoadedSession | None:
        if choice.isdigit() and 1 <= int(choice) <= min(len(sessions), RESUME_LIST):
            return sessions[int(choice) - 1]
        matches = [s for s in sessions if s.id == choice] or [
            s for s in sessions if s.id.startswith(choice)
        ]
        if len(matches) == 1:
            return matches[0]
        why = "is ambiguous" if matches else "names no saved session of this folder"
        self.console.print(error_line(f"/resume: {choice!r} {why} — /resume lists them"))
        return None

    def _change_settings(self, action: AddDir | RemoveRule) -> None:
        """``/add-dir`` (the servers are told by the roots) and ``/permissions remove``."""
        if isinstance(action, AddDir):
            if self.roots.add(action.path):
                count = len(self.roots.paths)
                self.console.print(
                    Text(f"added {action.path} as a root; MCP servers now have {count} root(s)")
                )
            else:
                self.console.print(note_line(f"{action.path} is a root already"))
            return
        try:
            self.console.print(Text(self.rules.remove(action.rule)))
        except RuleError as exc:
            self.console.print(error_line(str(exc)))

    async def _in_foreground(self, work: Awaitable[_T]) -> _T | _Cancelled:
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

    async def _wait_for_mcp(self) -> bool:
        if self._mcp_ready.is_set():
            return True
        self.view.begin("waiting for the MCP servers to connect…")
        try:
            return await self._in_foreground(self._mcp_ready.wait()) is not CANCELLED
        finally:
            self.view.end()

    async def _run_prompt(self, text: str | list[Message]) -> None:
        if self.agent is None:
            self.console.print(note_line(self.model_problem or "No model configured."))
            return
        if not await self._wait_for_mcp():
            self.console.print(note_line("⎿ cancelled"))
            return
        if isinstance(text, str) and find_mentions(text):
            try:
                attached = await self._in_foreground(attach_resources(text, self.pool))
            except MentionError as exc:
                self.console.print(error_line(f"{exc} — the prompt was not sent (↑ edits it)"))
                return
            if isinstance(attached, _Cancelled):
                return
            text = attached
        agent = self.agent
        self.view.begin()
        try:
            turn = agent.run(text) if isinstance(text, str) else agent.run_messages(text)
            outcome = await self._in_foreground(turn)
        finally:
            self.view.end()
        if isinstance(outcome, _Cancelled):
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

    async def _offering(self, action: ListResources | ListPrompts | ListSkills | RunPrompt) -> None:
        """``/mcp resources``, ``/mcp prompts``, ``/mcp skills`` and the prompt commands."""
        from cat_code.host.status import format_prompts, format_resources, format_skills

        pool = self.pool
        if pool is None or not await self._wait_for_mcp():
            return
        try:
            if isinstance(action, ListResources):
                resources = await self._in_foreground(pool.resources(action.server))
                templates = await self._in_foreground(pool.resource_templates(action.server))
                if isinstance(resources, _Cancelled) or isinstance(templates, _Cancelled):
                    return
                self.console.print(Text(format_resources(resources.items, templates.items)))
                failures = {**resources.failures, **templates.failures}
            elif isinstance(action, ListSkills):
                skills = await self._in_foreground(pool.skills(action.server))
                if isinstance(skills, _Cancelled):
                    return
                self.console.print(Text(format_skills(skills.items)))
                failures = skills.failures
            elif isinstance(action, ListPrompts):
                prompts = await self._in_foreground(pool.prompts(action.server))
                if isinstance(prompts, _Cancelled):
                    return
                named = command_names(prompts.items)
                self.console.print(Text(format_prompts([(c, p) for c, (_, p) in named.items()])))
                failures = prompts.failures
            else:
                messages = await self._in_foreground(prompt_commands.get_prompt(pool, action))
                if isinstance(messages, _Cancelled):
                    return
                count = f"{len(messages)} message{'' if len(messages) == 1 else 's'}"
                self.console.print(note_line(f"⎿ {action.command}: {count} from '{action.server}'"))
                await self._run_prompt(messages)
                return
        except McpClientError as exc:
            self.console.print(error_line(describe_error(exc)))
            return
        for name, why in failures.items():
            self.console.print(error_line(f"MCP server '{name}' could not list: {why}"))

    async def _call_tool(self, action: CallTool) -> None:
        tool = self.registry.get(action.name)
        if tool is None:
            self.console.print(error_line(f"unknown tool {action.name!r}"))
            return
        call = ToolCall(id="user", name=action.name, arguments=dict(action.arguments))
        self.view.begin()
        try:
            self.view.tool_started(call)

            def progress(done: float, total: float | None, message: str | None) -> None:
                self.view.tool_progress(call, done, total, message)

            result = await self._in_foreground(tool.execute(call.arguments, progress=progress))
            if isinstance(result, _Cancelled):
                self.console.print(note_line("⎿ cancelled"))
            else:
                self.view.tool_finished(call, result)
        finally:
            self.view.end()

    async def _sign(self, action: Login | Logout) -> None:
        """``/mcp login`` / ``/mcp logout``, then the server reconnected: its tools come or
        go without a restart."""
        from cat_code.host.signin import sign_in, sign_in_entry, sign_out
        from cat_code.mcp.auth.callback import LoopbackAuthorizer
        from cat_code.mcp.errors import describe_error

        pool = self.pool
        if pool is None or not await self._wait_for_mcp():
            return
        name = action.server
        entry = sign_in_entry(pool.config, name)  # checked by the command already
        if isinstance(action, Logout):
            had = sign_out(entry, pool.token_store)
            self.console.print(
                note_line(
                    f"Signed out of {name}."
                    if had
                    else f"No sign-in was stored for '{name}'; nothing to do."
                )
            )
            await self._in_foreground(pool.reconnect(name))
            return
        authorizer = LoopbackAuthorizer(
            name,
            port=entry.oauth.callback_port if entry.oauth else None,
            open_browser=True,
            out=SafeWriter(),  # the authorization URL comes from the server's metadata
        )
        self.console.print(note_line(f"signing in to {name} (Ctrl-C cancels)…"))
        try:
            outcome = await self._in_foreground(sign_in(entry, authorizer, pool.token_store))
        except Exception as exc:  # the command's boundary: any failure is the sign-in's
            logger.debug("sign-in to %s failed", name, exc_info=True)
            self.console.print(error_line(f"sign-in to {name} failed: {describe_error(exc)}"))
            return
        if isinstance(outcome, _Cancelled):
            self.console.print(note_line("⎿ sign-in cancelled"))
            return
        server = await self._in_foreground(pool.reconnect(name))
        if isinstance(server, _Cancelled):
            return
        if server.state is ServerState.CONNECTED:
            self.console.print(
                Text(f"Signed in to {name}. {len(server.tools)} tool(s) registered.")
            )
        else:
            why = f": {server.error}" if server.error else ""
            self.console.print(error_line(f"signed in to {name}, but it is {server.state}{why}"))

    async def _manage(self, action: ReloadConfig | ManageServer) -> None:
        """``/mcp reload``, ``/mcp restart|disable|enable NAME``: the pool does it (to the
        end, even past a Ctrl-C), then a line says where things stand. Nothing else needs
        telling: every model request reads the tools and the servers' instructions afresh
        (`_system_prompt` asks the pool each time)."""
        pool = self.pool
        if pool is None or not await self._wait_for_mcp():
            return
        if isinstance(action, ReloadConfig):
            config = self._reread_config()
            if config is None:
                return
            self.view.begin("reloading the MCP config…")
            try:
                plan = await self._in_foreground(pool.reload(config))
            finally:
                self.view.end()
            if not isinstance(plan, _Cancelled):
                self.console.print(Text(f"MCP config reloaded: {plan.summary()}"))
                self._say_mcp_summary(pool)
            done: object = plan
        else:
            operations = {"restart": pool.restart, "disable": pool.disable, "enable": pool.enable}
            self.view.begin(f"{_DOING[action.verb]} {action.server}…")
            try:
                server = await self._in_foreground(operations[action.verb](action.server))
            finally:
                self.view.end()
            if not isinstance(server, _Cancelled):
                self._report_server(action.verb, server)
            done = server
        if isinstance(done, _Cancelled):
            self.console.print(note_line("⎿ goes on in the background; /mcp shows when it is done"))

    async def _decide(self, action: DecideProject) -> None:
        """``/mcp approve|reject NAME...``: record it, then apply the config at once (an
        approved server starts and its tools appear; a rejected one stops)."""
        pool = self.pool
        if pool is None or not await self._wait_for_mcp():
            return
        decision = Decision.APPROVED if action.verb == "approve" else Decision.REJECTED
        try:
            decided = decide(action.servers, decision)
        except ConfigError as exc:
            self.console.print(error_line(str(exc)))
            return
        for item in decided:
            self.console.print(Text(decision_line(item.name, item.target, decision)))
        config = self._reread_config()
        if config is None:
            return
        self.view.begin("starting…" if decision is Decision.APPROVED else "stopping…")
        try:
            plan = await self._in_foreground(pool.reload(config))
        finally:
            self.view.end()
        if isinstance(plan, _Cancelled):
            self.console.print(note_line("⎿ goes on in the background; /mcp shows when it is done"))
            return
        for item in decided:
            server = pool.server(item.name)
            if decision is Decision.REJECTED or server is None:
                continue
            if server.state is ServerState.CONNECTED:
                self.console.print(Text(f"{item.name}: {len(server.tools)} tool(s) registered."))
            else:
                why = f": {server.error}" if server.error else ""
                self.console.print(error_line(f"{item.name} is {server.state}{why}"))

    def _reread_config(self) -> McpConfig | None:
        """The config files read again, or None (and why, said) when one of them could not
        be used: a reload must not stop every server of a file saved half-edited."""
        given = getattr(self.args, "mcp_config", None)
        paths = [Path(p) for p in given] if given else None
        config = load_config(paths, trust_project=bool(getattr(self.args, "trust_project", False)))
        problems = list(config.warnings)
        problems += [f"{p}: MCP config file not found" for p in paths or () if not p.exists()]
        if problems:
            for problem in problems:
                self.console.print(error_line(problem))
            self.console.print(
                error_line("MCP config not reloaded (nothing changed): fix it, then /mcp reload")
            )
            return None
        return config

    def _report_server(self, verb: str, server: McpServer) -> None:
        name = server.name
        if verb == "disable":
            self.console.print(Text(f"Disabled {name} for this session; its tools are gone."))
        elif server.state is ServerState.CONNECTED:
            done = "Restarted" if verb == "restart" else "Enabled"
            self.console.print(Text(f"{done} {name}: {len(server.tools)} tool(s) registered."))
        else:
            why = f": {server.error}" if server.error else ""
            self.console.print(error_line(f"{name} is {server.state}{why}"))

    # -- questions -------------------------------------------------------------------

    async def _question(self, message: str, default: str = "") -> str:
        assert self._questions is not None
        with patch_stdout(raw=True):
            return await self._questions.prompt_async(message, default=default, handle_sigint=False)

    async def _ask_permission(self, tool: Any, arguments: dict[str, Any]) -> Answer:
        server = server_of(tool)
        options = "y yes · n no · a always this tool"
        if server is not None:
            options += f" · s always server '{server}'"
        async with self._ask_lock:
            with self.view.paused():
                change = await tool.preview(arguments)
                shown = dict(arguments)
                if change is not None:  # the diff shows the text: only the path here
                    shown = {"path": change.shown}
                self.console.print(
                    Text.assemble(
                        ("? ", "yellow"),
                        (tool.name, "bold"),
                        " ",
                        (compact_json(shown), "bright_black"),
                    )
                )
                if change is not None:
                    self.console.print(change_diff(change), end="")
                while True:
                    try:
                        raw = await self._question(f"  allow? {options} › ")
                    except KeyboardInterrupt:
                        raise asyncio.CancelledError from None  # Ctrl-C cancels the turn
                    except EOFError:
                        return Answer.NO
                    answer = parse_permission(raw, has_server=server is not None)
                    if answer is not None:
                        return answer

    async def _elicit(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        if self._foreground is None:
            logger.warning("an MCP server asked for input while nothing was running; declined")
            return {"action": "decline"}
        async with self._ask_lock:
            with self.view.paused():
                return await fill_form(
                    params,
                    self._question,
                    lambda line: self.console.print(Text(line)),
                    server=server,
                    open_url=open_in_background,
                    show_url=self._show_url,
                )

    def _show_url(self, parts: tuple[str, str, str]) -> None:
        head, host, rest = parts
        self.console.print(Text.assemble("  ", (head, "dim"), (host, "bold yellow"), rest))


class _SlashCompleter(Completer):
    def __init__(self, repl: Repl) -> None:
        self.repl = repl

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Any:
        text = document.text_before_cursor
        if "\n" in text:
            return
        word = text.split(" ")[-1]
        for candidate in complete(text, self.repl.context()):
            meta = COMMANDS.get(candidate, ("", ""))[1] if " " not in text else ""
            yield Completion(candidate, start_position=-len(word), display_meta=meta)

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        """What needs a server: ``@server:uri`` mentions and prompt command arguments
        (``completion/complete``); everything else as `get_completions` has it."""
        text = document.text_before_cursor
        pool = self.repl.pool
        mention = mention_word(text) if "\n" not in text else None
        if pool is not None and self.repl._mcp_ready.is_set():
            if mention is not None:
                for candidate in await complete_mention(mention, pool):
                    yield Completion(candidate, start_position=-len(mention))
                return
            if prompt_commands.is_prompt_command(text) and " " not in text:
                await _list_prompts(pool)  # a server may have changed them since
            elif prompt_commands.is_prompt_command(text):
                word, candidates = await prompt_commands.complete_argument(text, pool)
                for candidate in candidates:
                    yield Completion(candidate, start_position=-len(word))
                return
        for completion in self.get_completions(document, complete_event):
            yield completion


async def _list_prompts(pool: McpPool) -> None:
    try:
        async with asyncio.timeout(PROMPT_LISTING_TIMEOUT_S):
            await pool.prompts()
    except TimeoutError:
        logger.debug("listing the MCP prompts took too long")


def _key_bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("enter")
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    return bindings


def _history() -> History:
    home = cat_code_home()
    try:
        # Private: it holds what was typed, pasted tool arguments and tokens included.
        return FileHistory(str(private_file(ensure_home() / HISTORY_FILE)))
    except OSError as exc:
        logger.warning("cannot keep history in %s: %s", home, exc)
        return InMemoryHistory()


__all__ = ["Repl", "mcp_summary", "parse_permission", "run_repl"]
