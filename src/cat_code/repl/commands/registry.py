"""The slash-command registry: each command is declared once, and `/help`, Tab and "did
you mean" are read from the declarations.

A `SlashCommand` names the command (``/mcp`` or, for a subcommand, ``/mcp tools``), its
aliases, the argument hint and the one help line, a completion function for its arguments,
and a handler. The handler is pure — a context and the rest of the line in, an outcome out;
it never prints and never awaits, so it is tested without a terminal, a model or a server:
`Show` (text to print), `Exit`, or an `Effect`, a small value whose ``perform`` the app
awaits with itself as the `ReplHost` (call a tool, sign in, switch the model…). The topic
modules (`help`, `mcp`, `prompts_resources`, `mcp_servers`, `permissions`, `session`,
`tasks`) each
hold a ``COMMANDS`` tuple; `cat_code.repl.commands` joins them, in /help order.

Invariants: a name or alias belongs to one command; ``/NAME SUB`` is a subcommand of
``/NAME`` and is found before it; the dynamic prompt commands (``/mcp__server__prompt``)
come from one `CommandFamily`, read only when no declared command matches.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from cat_code.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from rich.console import Console

    from cat_code.agent.loop import Agent
    from cat_code.agent.memory import MemoryFile
    from cat_code.agent.permissions import RuleBook
    from cat_code.agent.providers import Provider
    from cat_code.agent.providers.base import Message
    from cat_code.agent.session import Session
    from cat_code.host.config.load import McpConfig
    from cat_code.host.jobs import JobManager
    from cat_code.host.servers.pool import McpPool
    from cat_code.host.servers.server import ServerStatus
    from cat_code.mcp.roots import Roots
    from cat_code.repl.render import TurnView

_T = TypeVar("_T")

KEYS_HELP = """\
keys: Enter sends · Esc Enter (or a trailing \\) starts a new line · Ctrl-C cancels the \
running turn · Ctrl-D on an empty line quits · Ctrl-T hides or shows the tasks · ↑/↓ \
history · Tab completes"""


# -- outcomes --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Show:
    """Text for the terminal (red when ``kind`` is "error")."""

    text: str
    kind: Literal["info", "error"] = "info"


@dataclass(frozen=True, slots=True)
class Exit:
    """``/exit``: the read-eval loop ends (every server is closed on the way out)."""


class Cancelled:
    """The foreground task was cancelled by the user (Ctrl-C)."""


CANCELLED = Cancelled()


class ReplHost(Protocol):
    """What an `Effect` may use of the running REPL (the app is the one implementation)."""

    console: Console
    view: TurnView
    session: Session
    registry: ToolRegistry
    rules: RuleBook
    roots: Roots

    @property
    def pool(self) -> McpPool | None: ...
    @property
    def agent(self) -> Agent | None: ...
    @property
    def provider(self) -> Provider | None: ...
    @property
    def model_problem(self) -> str | None: ...

    async def in_foreground(self, work: Awaitable[_T]) -> _T | Cancelled:
        """Run ``work`` as the task Ctrl-C cancels; `CANCELLED` when it was."""
        ...

    async def wait_for_mcp(self) -> bool:
        """Wait (cancellable) until the servers are done connecting; False when cancelled."""
        ...

    async def question(self, message: str, default: str = "") -> str:
        """One answer typed at its own prompt (EOFError, KeyboardInterrupt pass through)."""
        ...

    def reread_config(self) -> McpConfig | None:
        """The config files read again, or None (said why) when one cannot be used."""
        ...

    async def run_prompt(self, text: str | list[Message]) -> None:
        """One turn of the model, shown as it goes."""
        ...

    def say_mcp_summary(self, pool: McpPool) -> None:
        """The one line that counts the servers and their tools."""
        ...


class Effect(Protocol):
    """An outcome the app performs: it may print, ask, await servers and the model."""

    async def perform(self, repl: ReplHost) -> None: ...


Outcome = Show | Exit | Effect


# -- what a handler may read ---------------------------------------------------------------


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
    #: The lines of /tasks (the task list, read afresh).
    tasks: Callable[[], str] = field(default=lambda: "no task list")
    #: The slash commands themselves (/help reads them); set by `CommandRegistry.handle`.
    commands: CommandRegistry | None = None
    #: The session's background jobs (/jobs).
    jobs: JobManager | None = None


#: A command's handler: the rest of the line (stripped) and the context → what to do.
Handler = Callable[[str, CommandContext], Outcome]
#: Completion of a command's arguments: the words after the command (the last is being
#: typed, maybe "") → what may replace the last word.
Completer = Callable[[list[str], CommandContext], list[str]]


def _no_completion(words: list[str], ctx: CommandContext) -> list[str]:
    return []


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One command, declared once: name (``/mcp tools`` for a subcommand), the argument
    hint and help line of /help, aliases, argument completion and the handler."""

    name: str
    help: str
    handler: Handler
    args: str = ""
    aliases: tuple[str, ...] = ()
    complete: Completer = _no_completion


@dataclass(frozen=True, slots=True)
class CommandFamily:
    """Commands that come and go with the servers (the prompt commands): a prefix, a
    handler for one of them, their names for Tab and their /help block."""

    prefix: str
    handler: Callable[[str, str, CommandContext], Outcome]
    names: Callable[[str, CommandContext], list[str]]
    help: Callable[[CommandContext], str]


#: An alias Tab offers and "did you mean" guesses (``/quit``; not ``/`` or ``/?``).
_WORD = re.compile(r"/[a-z][a-z-]*")


class CommandRegistry:
    """The declared commands, in /help order, with dispatch, help and completion."""

    def __init__(
        self, commands: Iterable[SlashCommand], families: Sequence[CommandFamily] = ()
    ) -> None:
        self.commands: dict[str, SlashCommand] = {}
        self._by_word: dict[str, SlashCommand] = {}
        for command in commands:
            for word in (command.name, *command.aliases):
                if word in self._by_word:
                    raise ValueError(f"slash command {word} is declared twice")
                self._by_word[word] = command
            self.commands[command.name] = command
        self.families = tuple(families)

    def get(self, name: str) -> SlashCommand | None:
        """The command called ``name`` (or by an alias), or None."""
        return self._by_word.get(name)

    def subcommands(self, name: str) -> list[str]:
        """The subcommand words of ``name`` (``tools`` of ``/mcp tools``), in /help order."""
        return [n.split(" ", 1)[1] for n in self.commands if n.startswith(f"{name} ")]

    def top_words(self) -> list[str]:
        """Every top-level name and word-like alias, as Tab offers them."""
        words = {n.split(" ")[0] for n in self.commands}
        words |= {a for c in self.commands.values() for a in c.aliases if _WORD.fullmatch(a)}
        return sorted(words)

    # -- dispatch ----------------------------------------------------------------------

    def handle(self, line: str, ctx: CommandContext) -> Outcome:
        """What a slash-command line means."""
        ctx = replace(ctx, commands=self)
        words = line.strip().split(maxsplit=1)
        typed = words[0] if words else "/"
        name = typed.lower()
        rest = words[1].strip() if len(words) > 1 else ""
        sub, _, tail = rest.partition(" ")
        command = self.get(f"{name} {sub}") if sub else None
        if command is not None:
            return command.handler(tail.strip(), ctx)
        command = self.get(name)
        if command is not None:
            return command.handler(rest, ctx)
        for family in self.families:
            if typed.startswith(family.prefix):
                return family.handler(typed, rest, ctx)
        guess = difflib.get_close_matches(name, self.top_words(), n=1, cutoff=0.6)
        hint = f"did you mean {guess[0]}? " if guess else ""
        return Show(f"unknown command {typed} — {hint}/help lists the commands", "error")

    # -- help and completion -------------------------------------------------------------

    def help_text(self) -> str:
        """The declared commands, one line each, then the keys."""
        rows = [(f"{c.name} {c.args}".strip(), c.help) for c in self.commands.values()]
        width = max(len(r[0]) for r in rows)
        lines = ["commands:"]
        lines += [f"  {usage.ljust(width)}  {text}" for usage, text in rows]
        lines.append("anything else is sent to the model.")
        lines.append(KEYS_HELP)
        return "\n".join(lines)

    def family_help(self, ctx: CommandContext) -> str:
        """The blocks of the dynamic commands ("" when there are none)."""
        return "\n".join(h for f in self.families if (h := f.help(ctx)))

    def help_line(self, name: str) -> str:
        """The help line of the command ``name`` (exactly; "" for aliases and unknowns)."""
        command = self.commands.get(name)
        return command.help if command is not None else ""

    def complete(self, text: str, ctx: CommandContext) -> list[str]:
        """Completions for the line typed so far (the whole word being typed, replaced)."""
        if not text.startswith("/"):
            return []
        words = text.split(" ")
        if len(words) == 1:
            found = [n for n in self.top_words() if n.startswith(words[0].lower())]
            for family in self.families:
                found += family.names(words[0], ctx)
            return found
        if len(words) >= 3 and (command := self.commands.get(" ".join(words[:2]))):
            return command.complete(words[2:], ctx)
        if (subs := self.subcommands(words[0])) and len(words) == 2:
            return [s for s in subs if s.startswith(words[1])]
        command = self.commands.get(words[0])
        if command is None or subs:
            return []
        return command.complete(words[1:], ctx)


def names_starting(candidates: Iterable[str], typed: str) -> list[str]:
    """The candidates that start with what is typed (a completion helper)."""
    return [c for c in candidates if c.startswith(typed)]


def only_argument(names: Callable[[CommandContext], Iterable[str]]) -> Completer:
    """A completer for a command taking one argument from ``names``."""

    def complete(words: list[str], ctx: CommandContext) -> list[str]:
        return names_starting(names(ctx), words[0]) if len(words) == 1 else []

    return complete


__all__ = [
    "CANCELLED",
    "KEYS_HELP",
    "Cancelled",
    "CommandContext",
    "CommandFamily",
    "CommandRegistry",
    "Completer",
    "Effect",
    "Exit",
    "Handler",
    "Outcome",
    "ReplHost",
    "Show",
    "SlashCommand",
    "names_starting",
    "only_argument",
]
