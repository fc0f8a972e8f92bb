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
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from cat_code.agent.cost import UsageMeter
from cat_code.agent.history import LoadedSession, SessionLog
from cat_code.agent.loop import DEFAULT_MAX_TURNS, Agent, AgentEvents
from cat_code.agent.permissions import Asker, Permissions, RuleBook
from cat_code.agent.providers import (
    ModelSpecError,
    NoModelConfigured,
    Provider,
    create_provider,
    resolve_model,
)
from cat_code.agent.subagents import Subagents
from cat_code.agent.system_prompt import build_system_prompt
from cat_code.agent.write_guard import trust_locations
from cat_code.host.config.load import McpConfig
from cat_code.host.servers.connect import ServerElicitationHandler
from cat_code.host.servers.pool import McpPool
from cat_code.host.servers.prestart import Prestarted
from cat_code.mcp.roots import Roots
from cat_code.tools.base import Tool
from cat_code.tools.builtin import FileLedger, builtin_tools
from cat_code.tools.registry import DuplicateToolError, ToolRegistry

logger = logging.getLogger(__name__)


def builtin_tool_list(cwd: Path, ledger: FileLedger) -> list[Tool]:
    """The built-in tools every session offers, in the order they are registered: ``shell``
    and the file tools, which never touch cat-code's own files (`private_files`) but the
    long outputs saved for this project, when a call names one."""
    from cat_code.host.mcp_tools.output_policy import output_dir
    from cat_code.host.state.home import private_files

    own_output = output_dir(project=cwd)
    return builtin_tools(cwd, protected=private_files(readable=(own_output,)), ledger=ledger)


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
        self.registry = ToolRegistry(builtin_tool_list(self.cwd, self.ledger))
        self.rules = RuleBook.from_settings(self.cwd, trust_project=trust_project)
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
        #: The ``--mcp-config`` files (or the default ones) once `open_pool` read them.
        self.config_files: list[Path] = []
        self.pool: McpPool | None = None
        #: Every request's tokens, whichever model made them.
        self.meter = UsageMeter()
        #: The session file this conversation is appended to.
        self.log = SessionLog(self.cwd, model=self.provider.name if self.provider else None)
        self._resumed = resume
        if resume is not None:
            self.log.adopt(resume)
        #: The ``agent`` tool, the subagent definitions and their runs.
        self.subagents = self._attach_subagents()
        self.agent: Agent | None = None
        if self.provider is not None:
            self.agent = self.new_agent(self.provider)

    def _attach_subagents(self) -> Subagents:
        from cat_code.agent.providers.base import RetryPolicy
        from cat_code.agent.subagents import attach

        return attach(
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
        )
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

    @property
    def session_id(self) -> str:
        return self.log.id

    def new_conversation(self) -> None:
        """Forget the conversation and go on in a new session file (``/clear``)."""
        if self.agent is not None:
            self.agent.clear()
        self.ledger.forget_all()  # a new conversation has read nothing
        self.log.start_new()

    def resume(self, loaded: LoadedSession) -> None:
        """Go on with a saved conversation, in its file (``/resume``)."""
        self.log.adopt(loaded)
        self.ledger.forget_all()  # what was read then may have changed since
        if self.agent is not None:
            self.agent.load(loaded.messages, loaded.found_tools)
        else:
            self._resumed = loaded

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
        self.pool = McpPool(
            config,
            elicitation_handler=elicitation_handler,
            roots=self.roots,
            prestarted=prestarted,
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
        return build_system_prompt(
            Path.cwd(),
            instructions,
            memory=self.memory,
            append=self.append_system_prompt,
            skills=skills,
        )


__all__ = ["Session", "builtin_tool_list"]
