"""`Session`: one agent session wired together, for ``-p`` and the REPL alike.

The one place that builds the parts: the model provider, the tool registry with the
built-in tools (`builtin_tool_list`), the permission rules and `Permissions`, the roots
(the working directory and ``--add-dir``), the MCP pool with its resource tools (and
``load_mcp_skill`` when a server lists skills, which the system prompt names), and the
`Agent`. The front ends keep what differs between them: their events (printing), their
asker and elicitation handler, and what they say. The registry is built first and never
replaced: MCP tools join it once the pool has connected (`Session.connect`), so an agent
made before that sees them. Building a session starts nothing; `open_pool` reaps what a
killed cat-code left (`run_records.reap_orphans`) before the first server starts.

The conversation is saved as it goes (`SessionLog`, one file per conversation under
``$CAT_CODE_HOME/sessions/``); ``resume`` (``--continue`` / ``--resume``) goes on with a
saved one, in its own file. `UsageMeter` adds up every request's tokens for ``/cost``
and the ``-p`` JSON result; a new agent (``/model``) keeps the log and the meter.
`Hooks` (the settings files' hooks) go to every agent; the asker is wrapped so that a
question to the user fires ``Notification`` first. The front ends fire ``SessionStart``
and ``SessionEnd``.
The permission mode (`permission_modes`) starts from ``permission_mode`` and the settings
files; ``exit_plan_mode`` is always registered; the REPL's sessions take checkpoints.

The task list (`TaskStore`, the four task tools) is the session's own, named by its id,
unless ``$CAT_CODE_TASK_LIST`` names a shared one; the session file records which, so
``--resume`` / ``/resume`` bring it back, and ``/clear`` starts an empty own list.

The session's `NotificationQueue` (``notes``) gathers what happens in the background;
its `JobManager` (``jobs``) runs ``shell``'s background commands, and `closing` wraps
what a front end closes on its way out so that every running job ends with it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cat_code.agent.checkpointing import Checkpointer
from cat_code.agent.cost import UsageMeter
from cat_code.agent.history import LoadedSession, SessionLog
from cat_code.agent.hooks import Hooks
from cat_code.agent.loop import DEFAULT_MAX_TURNS, Agent, AgentEvents
from cat_code.agent.permission_modes import PermissionMode, mode_prompt
from cat_code.agent.permissions import Answer, Asker, Permissions, RuleBook
from cat_code.agent.plan_tool import ExitPlanModeTool, PlanReviewer
from cat_code.agent.providers import (
    ModelSpecError,
    NoModelConfigured,
    Provider,
    create_provider,
    resolve_model,
)
from cat_code.agent.subagents import Subagents
from cat_code.agent.system_prompt import build_system_prompt
from cat_code.agent.task_tools import TASKS_GUIDANCE, session_task_list, task_tools
from cat_code.agent.worktree_isolation import worktree_isolation
from cat_code.agent.write_guard import trust_locations
from cat_code.host.config.load import McpConfig
from cat_code.host.jobs import JobManager, JobTools, job_tools
from cat_code.host.jobs.manager import Job
from cat_code.host.jobs.shutdown import WithJobs
from cat_code.host.notifications import NotificationQueue, model_block, task_unblocked
from cat_code.host.servers.connect import ServerElicitationHandler
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.prestart import Prestarted
from cat_code.host.servers.shutdown import Servers
from cat_code.host.state.checkpoints import CheckpointStore
from cat_code.host.tasks import Task, TaskStore
from cat_code.host.tasks.render import restatement
from cat_code.mcp.roots import Roots
from cat_code.tools.base import Tool
from cat_code.tools.builtin import FileLedger, builtin_tools
from cat_code.tools.registry import DuplicateToolError, ToolRegistry

logger = logging.getLogger(__name__)


def builtin_tool_list(cwd: Path, ledger: FileLedger, jobs: JobTools | None = None) -> list[Tool]:
    """The built-in tools every session offers, in the order they are registered: ``shell``
    and the file tools, which never touch cat-code's own files (`private_files`) but the
    long outputs saved for this project, when a call names one; then, with ``jobs``,
    ``job_output`` and ``job_stop``."""
    from cat_code.host.mcp_tools.output_policy import output_dir
    from cat_code.host.state.home import private_files

    own_output = output_dir(project=cwd)
    protected = private_files(readable=(own_output,))
    background = jobs.start if jobs is not None else None
    tools = builtin_tools(cwd, protected=protected, ledger=ledger, background=background)
    return [*tools, *job_tools(jobs)] if jobs is not None else tools


class Session:
    """The parts of one session (see the module docstring); ``agent`` is None without a
    model (``model_problem`` says why)."""

    def __init__(
        self,
        *,
        model: str | None,
        approve_all: bool,
        allow_patterns: Sequence[str] | None,
        add_dirs: Sequence[Path] = (),
        max_turns: int | None = None,
        events: AgentEvents | None = None,
        asker: Asker | None = None,
        cwd: Path | None = None,
        append_system_prompt: str | None = None,
        resume: LoadedSession | None = None,
        trust_project: bool = False,
        permission_mode: PermissionMode | None = None,
        plan_reviewer: PlanReviewer | None = None,
        checkpoints: bool = False,
    ) -> None:
        from cat_code.agent.memory import load_memory
        from cat_code.host.state.home import cat_code_home

        self.cwd = cwd or Path.cwd()
        self.max_turns = max_turns or DEFAULT_MAX_TURNS
        self.events = events
        #: What the model has read in this conversation (edit_file, write_file check it).
        self.ledger = FileLedger()
        #: AGENTS.md (or CLAUDE.md) files, read once at the start (``/memory`` lists them).
        self.memory = load_memory(self.cwd, cat_code_home())
        self.append_system_prompt = append_system_prompt
        self.provider: Provider | None = None
        self.model_problem: str | None = None
        try:
            self.provider = create_provider(resolve_model(model))
        except (ModelSpecError, NoModelConfigured) as exc:
            self.model_problem = str(exc)
        #: What happens in the background, for the user and (job results) the model.
        self.notes = NotificationQueue()
        #: ``shell``'s background commands; every way out ends them (`closing`).
        self.jobs = JobManager(notes=self.notes)
        self.registry = ToolRegistry(
            builtin_tool_list(self.cwd, self.ledger, JobTools(self.jobs, self.notes))
        )
        self.rules = RuleBook.from_settings(self.cwd, trust_project=trust_project)
        self.hooks = Hooks.load(
            self.cwd,
            trust_project=trust_project,
            session_id=lambda: self.session_id,
            transcript_path=self._transcript_path,
        )
        if asker is not None:
            asker = _notifying(asker, self.hooks)
        #: cwd and ``--add-dir``; ``/add-dir`` adds more (every server shares them).
        self.roots = Roots(add_dirs, cwd=self.cwd)
        self.permissions = Permissions(
            approve_all=approve_all,
            allow_patterns=allow_patterns or (),
            asker=asker,
            rules=self.rules,
            # Read-only file tools read here without asking: the roots, saved tool output.
            workspace=self.workspace,
            trusted=self.trust_locations,
        )
        from cat_code.agent.permission_modes import starting_mode

        mode, self.mode_warnings = starting_mode(
            permission_mode, self.rules.user_file, self.rules.project_file
        )
        self.permissions.mode = mode
        # Hooks see the mode as it is at each event (Shift+Tab, an approved plan change it).
        self.hooks.permission_mode = lambda: self.permissions.mode.value
        #: ``exit_plan_mode``: with no reviewer (``-p``) its plan ends the turn.
        self.plan_tool = ExitPlanModeTool(self.permissions, plan_reviewer)
        self.registry.register(self.plan_tool)
        #: The ``--mcp-config`` files (or the default ones) once `open_pool` read them.
        self.config_files: list[Path] = []
        self.pool: McpPool | None = None
        #: Every request's tokens, whichever model made them.
        self.meter = UsageMeter()
        #: The session file this conversation is appended to.
        self.log = SessionLog(self.cwd, model=self.provider.name if self.provider else None)
        self.jobs.session_id = self.log.id
        self._resumed = resume
        if resume is not None:
            self.log.adopt(resume)
        #: Snapshots for /rewind (the REPL's; None in -p).
        self.checkpointer: Checkpointer | None = None
        if checkpoints:
            store = CheckpointStore(self.cwd, self.session_id, cat_code_home())
            self.checkpointer = Checkpointer(store)
        #: The task list the task tools keep (`use_task_list` picks it).
        self.tasks = TaskStore(self.log.id)
        # A task made ready by another's completion is a note for the user.
        self.tasks.unblocked_hooks.append(self._tell_unblocked)
        self.use_task_list()
        for tool in task_tools(self.tasks):
            self.registry.register(tool)
        #: The ``agent`` tool, the subagent definitions and their runs.
        self.subagents = self._attach_subagents()
        self.subagents.hooks = self.hooks  # fired inside subagents too (their view)
        self.agent: Agent | None = None
        if self.provider is not None:
            self.agent = self.new_agent(self.provider)

    def _attach_subagents(self) -> Subagents:
        from cat_code.agent.providers.base import RetryPolicy
        from cat_code.agent.subagents import attach

        subagents = attach(
            cwd=self.cwd,
            registry=self.registry,
            permissions=self.permissions,
            meter=self.meter,
            provider=lambda: self.provider,
            retry=lambda: self.agent.retry if self.agent is not None else RetryPolicy(),
            system_prompt=self.system_prompt,
            log=self.log,
            make_provider=lambda spec: create_provider(resolve_model(spec)),
        )
        # ``isolation: "worktree"``: a fresh git worktree of this session's repository.
        subagents.isolations["worktree"] = functools.partial(
            worktree_isolation, repo=self.cwd, make_tools=builtin_tool_list
        )
        return subagents

    def new_agent(self, provider: Provider) -> Agent:
        """An agent on this session's registry and rules talking to ``provider`` (``/model``
        makes a new one for the same conversation)."""
        agent = Agent(
            provider,
            self.registry,
            permissions=self.permissions,
            system_prompt=self.system_prompt,
            max_turns=self.max_turns,
            events=self.events,
            log=self.log,
            meter=self.meter,
            hooks=self.hooks,
            restate=self.restate_tasks,
        )
        agent.notes_for_model = self.notes_for_model
        agent.notes = self.notes
        agent.checkpoints = self.checkpointer
        agent.halt = self.plan_tool.take_final
        if self._resumed is not None:  # the first agent goes on with the saved conversation
            agent.load(self._resumed.messages, self._resumed.found_tools)
            self._resumed = None
        return agent

    def switch_model(self, provider: Provider) -> Provider | None:
        """Go on with the same conversation on ``provider`` (``/model``); the provider it
        replaces, for the caller to close. The tools search found stay found."""
        from cat_code.agent.tool_search import ToolSearch

        old, self.provider, self.model_problem = self.provider, provider, None
        if self.agent is None:
            self.agent = self.new_agent(provider)
        else:
            self.agent.provider = provider
            search = ToolSearch(self.registry, provider.name)
            search.kept = set(self.agent.tool_search.kept)  # found before a compaction
            self.agent.tool_search = search
        return old

    def open_tasks(self) -> int:
        """How many tasks of the list are open (the status panel)."""
        return sum(1 for task in self.tasks.snapshot if task.is_open)

    def _tell_unblocked(self, list_name: str, done: Task, ready: list[Task]) -> None:
        for task in ready:
            self.notes.post(task_unblocked(task.id, task.subject, task_list=list_name))

    def notes_for_model(self) -> str:
        """The notes waiting for the model (job results), as one block; "" when none."""
        return model_block(self.notes.take_for_model())

    def closing(self, servers: Servers, tell: Callable[[list[Job]], None]) -> Servers:
        """What a front end closes on its way out: ``servers`` and this session's jobs
        (``tell`` hears which jobs were still running and are now ended)."""
        return WithJobs(servers, self.jobs, tell)

    @property
    def session_id(self) -> str:
        return self.log.id

    def _transcript_path(self) -> Path:
        return self.log.path

    def new_conversation(self) -> None:
        """Forget the conversation and go on in a new session file (``/clear``)."""
        if self.agent is not None:
            self.agent.clear()
        self.ledger.forget_all()  # a new conversation has read nothing
        self.log.start_new()
        self.use_task_list()

    def resume(self, loaded: LoadedSession) -> None:
        """Go on with a saved conversation, in its file (``/resume``)."""
        self.log.adopt(loaded)
        self.use_task_list()
        self.ledger.forget_all()  # what was read then may have changed since
        if self.agent is not None:
            self.agent.load(loaded.messages, loaded.found_tools)
        else:
            self._resumed = loaded

    def use_task_list(self) -> None:
        """Point the task store at this conversation's list (shared, saved, or its own)
        and record it in the session file."""
        name = session_task_list(self.log.id, self.log.task_list)
        self.log.use_task_list(name)
        self.tasks.switch(name)
        self.tasks.notify()

    def shared_task_list(self) -> str | None:
        """The task list's name when it is not this session's own (a shared one)."""
        return None if self.tasks.name == self.log.id else self.tasks.name

    def restate_tasks(self) -> str:
        """The open tasks, read afresh, for the model after a compaction."""
        from cat_code.host.tasks import TaskError

        try:
            tasks = self.tasks.read()
        except TaskError as exc:  # the last list read stands in
            logger.warning("%s", exc)
            tasks = self.tasks.snapshot
        return restatement(tasks, self.tasks.name)

    def workspace(self) -> list[Path]:
        """Where the read-only file tools read without asking: the roots and saved output."""
        from cat_code.host.mcp_tools.output_policy import output_dir

        return [*self.roots.paths, output_dir(project=self.cwd)]

    def trust_locations(self) -> list[Path]:
        """The files a write to always asks about (`write_guard.trust_locations`)."""
        from cat_code.host.state.settings import project_root

        roots = [*self.roots.paths, project_root(self.cwd)]
        return trust_locations(roots, self.config_files)

    def open_pool(
        self,
        config: McpConfig,
        *,
        elicitation_handler: ServerElicitationHandler | None,
        prestarted: Prestarted | None = None,
    ) -> McpPool:
        """The MCP pool of this session (not connected yet); with ``prestarted``, the
        stdio servers a front end spawned early (it reaped orphans before it did)."""
        if prestarted is None:
            from cat_code.host.state.run_records import reap_orphans

            reap_orphans()  # once, before any server starts
        self.config_files = list(config.files)
        settle_in_background()
        self.pool = McpPool(
            config,
            elicitation_handler=elicitation_handler,
            roots=self.roots,
            prestarted=prestarted,
            notes=self.notes,
        )
        return self.pool

    async def connect(self) -> None:
        """Connect every server, then register the resource tools and the servers' tools."""
        from cat_code.host.mcp_tools.resource_tools import resource_tools
        from cat_code.host.mcp_tools.skill_tools import skill_tools

        pool = self.pool
        assert pool is not None, "open_pool first"
        await pool.connect_all()
        await pool.skills()  # named in the system prompt; no skill's file is read
        try:
            for tool in [*resource_tools(pool, self.permissions.denies_server), *skill_tools(pool)]:
                self.registry.register(tool)
            pool.register_into(self.registry)
        except DuplicateToolError as exc:
            logger.warning("%s", exc)

    def system_prompt(self) -> str:
        """Read afresh for every model request: the servers' instructions may change."""
        from cat_code.host.mcp_tools.skill_tools import skill_summaries

        instructions = self.pool.instructions() if self.pool is not None else {}
        skills = skill_summaries(self.pool.known_skills()) if self.pool is not None else ""
        text = build_system_prompt(
            Path.cwd(),
            instructions,
            memory=self.memory,
            append=self.append_system_prompt,
            skills=skills,
            guidance=[TASKS_GUIDANCE],
        )
        mode = mode_prompt(self.permissions.mode)  # read per request: Shift+Tab changes it
        return f"{text}\n\n{mode}" if mode else text


def _notifying(asker: Asker, hooks: Hooks) -> Asker:
    """``asker``, firing the ``Notification`` hooks before each question."""

    async def ask(tool: Tool, arguments: dict[str, Any]) -> Answer:
        await hooks.notification(f"cat-code needs your permission to use {tool.name}")
        return await asker(tool, arguments)

    return ask


def settle_in_background() -> None:
    """Bring the job registry up to date (jobs a killed cat-code left) off the start path."""
    import threading

    from cat_code.host.jobs import jobs_dir, settle_orphans

    directory = jobs_dir()
    if directory.is_dir():
        threading.Thread(
            target=settle_orphans, args=(directory,), name="jobs-settle", daemon=True
        ).start()


__all__ = ["Session", "builtin_tool_list"]
