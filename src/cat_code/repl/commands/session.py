"""This session: ``/tools``, ``/model``, ``/memory``, ``/status``, ``/cost``, ``/compact``,
``/resume``, ``/clear`` and ``/exit``.

The session owns the model and its agent (`Session.switch_model`, ``resume``,
``new_conversation``); the effects here ask it, and say what changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from cat_code.agent.history import LoadedSession, list_sessions, session_line
from cat_code.agent.providers.base import ModelError, UserMessage
from cat_code.repl.commands.registry import (
    Cancelled,
    CommandContext,
    Exit,
    Outcome,
    ReplHost,
    Show,
    SlashCommand,
)
from cat_code.repl.render import error_line, note_line
from cat_code.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from rich.console import Console


#: How many saved sessions ``/resume`` lists to pick from (the most recent).
RESUME_LIST = 20


@dataclass(frozen=True, slots=True)
class ClearConversation:
    async def perform(self, repl: ReplHost) -> None:
        repl.session.new_conversation()  # a new session file; the ledger forgets all
        repl.console.print(Text("conversation cleared", style="bright_black"))


@dataclass(frozen=True, slots=True)
class SwitchModel:
    """``/model NAME``: go on with another model, keeping the conversation (its messages
    are our own types, so any provider can take them)."""

    spec: str

    async def perform(self, repl: ReplHost) -> None:
        from cat_code.agent.providers import (
            ModelSpecError,
            NoModelConfigured,
            create_provider,
            resolve_model,
        )

        try:
            provider = create_provider(resolve_model(self.spec))
        except (ModelSpecError, NoModelConfigured) as exc:
            repl.console.print(error_line(f"/model: {exc}"))
            return
        old = repl.session.switch_model(provider)
        if old is not None:
            await old.close()
        repl.console.print(Text(f"model: {provider.name} (the conversation goes on)"))


@dataclass(frozen=True, slots=True)
class Compact:
    """``/compact [what to keep]``: replace the conversation so far with a summary."""

    instructions: str = ""

    async def perform(self, repl: ReplHost) -> None:
        agent = repl.agent
        if agent is None:
            repl.console.print(note_line(repl.model_problem or "No model configured."))
            return
        repl.view.begin("compacting the conversation…")
        try:
            result = await repl.in_foreground(agent.compact(self.instructions))
        except ModelError as exc:
            repl.console.print(error_line(f"/compact: {exc} (the conversation is as it was)"))
            return
        finally:
            repl.view.end()
        if isinstance(result, Cancelled):
            repl.console.print(note_line("⎿ cancelled (the conversation is as it was)"))
        elif result is None:
            repl.console.print(note_line("nothing to compact yet: no exchange before the latest"))


@dataclass(frozen=True, slots=True)
class ResumeSession:
    """``/resume [ID|N]``: go on with a saved conversation of this folder (none given: list
    them and ask which), in its file."""

    choice: str = ""

    async def perform(self, repl: ReplHost) -> None:
        session = repl.session
        sessions = [s for s in list_sessions(session.cwd) if s.id != session.log.id]
        if not sessions:
            repl.console.print(note_line("no other saved session in this folder"))
            return
        choice = self.choice
        if not choice:
            for number, saved in enumerate(sessions[:RESUME_LIST], 1):
                repl.console.print(Text(f"{number:>3}. {session_line(saved)}"))
            try:
                answer = await repl.question("resume which? (number or id; Enter cancels) › ")
            except (EOFError, KeyboardInterrupt):
                answer = ""
            if not answer.strip():
                repl.console.print(note_line("⎿ not resumed"))
                return
            choice = answer.strip()
        picked = _pick_session(repl.console, sessions, choice)
        if picked is None:
            return
        session.resume(picked)
        say_resumed(repl.console, picked)


def _pick_session(
    console: Console, sessions: list[LoadedSession], choice: str
) -> LoadedSession | None:
    if choice.isdigit() and 1 <= int(choice) <= min(len(sessions), RESUME_LIST):
        return sessions[int(choice) - 1]
    matches = [s for s in sessions if s.id == choice] or [
        s for s in sessions if s.id.startswith(choice)
    ]
    if len(matches) == 1:
        return matches[0]
    why = "is ambiguous" if matches else "names no saved session of this folder"
    console.print(error_line(f"/resume: {choice!r} {why} — /resume lists them"))
    return None


def say_resumed(console: Console, loaded: LoadedSession) -> None:
    """What a resumed session says: its warnings, its size and its last prompt."""
    turns = f"{loaded.turns} turn{'' if loaded.turns == 1 else 's'}"
    for warning in loaded.warnings:
        console.print(note_line(f"warning: {warning}"))
    console.print(Text(f"resumed session {loaded.id} ({turns}, {len(loaded.messages)} messages)"))
    last = next(
        (m for m in reversed(loaded.messages) if isinstance(m, UserMessage) and m.text), None
    )
    if last is not None:
        prompt = " ".join(last.text.split())
        more = "…" if len(prompt) > 100 else ""
        console.print(Text(f"  last prompt: {prompt[:100]}{more}", "bright_black"))


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


def _model(rest: str, ctx: CommandContext) -> Outcome:
    return SwitchModel(rest) if rest else Show(model_text(ctx))


def _memory(rest: str, ctx: CommandContext) -> Outcome:
    from cat_code.agent.memory import describe_memory

    return Show(describe_memory(ctx.memory))


COMMANDS = (
    SlashCommand("/tools", "every tool the model can use, built-in and MCP, and if tool search "
                 "is on", lambda rest, ctx: Show(tools_text(ctx.registry, ctx.width,
                                                            ctx.tool_search()))),
    SlashCommand("/model", "the model in use; /model PROVIDER:NAME switches to another, keeping "
                 "the conversation", _model, args="[NAME]"),
    SlashCommand("/memory", "the memory files (AGENTS.md) in the system prompt", _memory),
    SlashCommand("/status", "this session in full: id, model, context, cost, servers, tasks, "
                 "jobs", lambda rest, ctx: Show(ctx.status())),
    SlashCommand("/cost", "the tokens this session used (input, output, cache) and what they "
                 "cost", lambda rest, ctx: Show(ctx.cost())),
    SlashCommand("/compact", "replace the conversation so far with a summary of it (frees the "
                 "context window)", lambda rest, ctx: Compact(rest), args="[WHAT TO KEEP]"),
    SlashCommand("/resume", "go on with a saved conversation of this folder (lists them)",
                 lambda rest, ctx: ResumeSession(rest), args="[ID|N]"),
    SlashCommand("/clear", "forget the conversation (and start a new saved session)",
                 lambda rest, ctx: ClearConversation()),
    SlashCommand("/exit", "close every MCP server and quit (also /quit, Ctrl-D)",
                 lambda rest, ctx: Exit(), aliases=("/quit",)),
)  # fmt: skip
