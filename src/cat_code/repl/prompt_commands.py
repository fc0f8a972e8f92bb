"""The servers' prompts as REPL commands, and ``/mcp resources`` / ``/mcp prompts``.

Each prompt of a connected server is the command ``/mcp__<server>__<prompt>`` (named like
its tools: sanitised, at most 64 characters). Its arguments come by position, in the
order the server lists them, or as ``name=value``, quoted as in a shell (after ``--``
every word is a value); a missing required argument, or a name the prompt does not
take, is named before anything is asked of the server. Running one gets the
prompt (``prompts/get``), shows what arrived, and sends its messages to the model as one
turn (`Agent.run_messages`): text as it is, embedded resources as their text, images and
binary contents as placeholders.

As in `commands`, the parsing is pure (`prompt_command` returns an effect, whose
``perform`` the app awaits); what talks to servers is async and separate: `get_prompt` and
`complete_argument` (the completer's ``completion/complete``, bounded, quiet on failure).
The command names come from the prompts as last listed (`McpPool.known_prompts`); the
app lists them again, where a server said they changed, before it reads a command.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text

from cat_code.agent.providers.base import AssistantMessage, Message, UserMessage
from cat_code.host.mcp_tools.prompts import (
    PromptArgumentsError,
    argument_names,
    command_names,
    message_text,
    parse_arguments,
    usage,
)
from cat_code.mcp.errors import McpClientError, describe_error
from cat_code.mcp.wire import CompletionReference, GetPromptResult, Prompt
from cat_code.repl.commands.registry import Cancelled
from cat_code.repl.render import error_line, note_line

if TYPE_CHECKING:
    from cat_code.host.servers.pool import McpPool
    from cat_code.repl.commands.registry import CommandContext, ReplHost

logger = logging.getLogger(__name__)

PREFIX = "/mcp__"
#: How long Tab waits for a server's ``completion/complete`` before offering nothing.
COMPLETION_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class ListResources:
    """``/mcp resources [SERVER]``."""

    server: str | None = None

    async def perform(self, repl: ReplHost) -> None:
        from cat_code.host.status import format_resources

        pool = await _ready_pool(repl)
        if pool is None:
            return
        try:
            resources = await repl.in_foreground(pool.resources(self.server))
            templates = await repl.in_foreground(pool.resource_templates(self.server))
        except McpClientError as exc:
            repl.console.print(error_line(describe_error(exc)))
            return
        if isinstance(resources, Cancelled) or isinstance(templates, Cancelled):
            return
        repl.console.print(Text(format_resources(resources.items, templates.items)))
        _say_failures(repl, {**resources.failures, **templates.failures})


@dataclass(frozen=True, slots=True)
class ListPrompts:
    """``/mcp prompts [SERVER]``."""

    server: str | None = None

    async def perform(self, repl: ReplHost) -> None:
        from cat_code.host.status import format_prompts

        pool = await _ready_pool(repl)
        if pool is None:
            return
        try:
            prompts = await repl.in_foreground(pool.prompts(self.server))
        except McpClientError as exc:
            repl.console.print(error_line(describe_error(exc)))
            return
        if isinstance(prompts, Cancelled):
            return
        named = command_names(prompts.items)
        repl.console.print(Text(format_prompts([(c, p) for c, (_, p) in named.items()])))
        _say_failures(repl, prompts.failures)


@dataclass(frozen=True, slots=True)
class ListSkills:
    """``/mcp skills [SERVER]``."""

    server: str | None = None

    async def perform(self, repl: ReplHost) -> None:
        from cat_code.host.status import format_skills

        pool = await _ready_pool(repl)
        if pool is None:
            return
        try:
            skills = await repl.in_foreground(pool.skills(self.server))
        except McpClientError as exc:
            repl.console.print(error_line(describe_error(exc)))
            return
        if isinstance(skills, Cancelled):
            return
        repl.console.print(Text(format_skills(skills.items)))
        _say_failures(repl, skills.failures)


@dataclass(frozen=True, slots=True)
class RunPrompt:
    """A prompt command: get the prompt with these arguments and let the model answer."""

    command: str
    server: str
    prompt: str
    arguments: dict[str, str]

    async def perform(self, repl: ReplHost) -> None:
        pool = await _ready_pool(repl)
        if pool is None:
            return
        try:
            messages = await repl.in_foreground(get_prompt(pool, self))
        except McpClientError as exc:
            repl.console.print(error_line(describe_error(exc)))
            return
        if isinstance(messages, Cancelled):
            return
        count = f"{len(messages)} message{'' if len(messages) == 1 else 's'}"
        repl.console.print(note_line(f"⎿ {self.command}: {count} from '{self.server}'"))
        await repl.run_prompt(messages)


async def _ready_pool(repl: ReplHost) -> McpPool | None:
    """The pool once the servers are connected (None: no servers, or the wait cancelled)."""
    pool = repl.pool
    if pool is None or not await repl.wait_for_mcp():
        return None
    return pool


def _say_failures(repl: ReplHost, failures: dict[str, str]) -> None:
    for name, why in failures.items():
        repl.console.print(error_line(f"MCP server '{name}' could not list: {why}"))


PromptAction = ListResources | ListPrompts | ListSkills | RunPrompt


def commands(pool: McpPool | None) -> dict[str, tuple[str, Prompt]]:
    """Every prompt command of the connected servers → (server, prompt)."""
    return command_names(pool.known_prompts()) if pool is not None else {}


def is_prompt_command(word: str) -> bool:
    return word.startswith(PREFIX)


def prompt_command(word: str, rest: str, ctx: CommandContext) -> RunPrompt | str:
    """What ``word rest`` runs, or the error to show."""
    found = commands(ctx.pool).get(word)
    if found is None:
        hint = " (servers are still connecting)" if ctx.mcp_connecting else ""
        return f"unknown command {word}{hint} — /mcp prompts lists the prompt commands"
    server, prompt = found
    try:
        arguments = parse_arguments(prompt, rest)
    except PromptArgumentsError as exc:
        return f"{word}: {exc}\nusage: {usage(word, prompt)}"
    return RunPrompt(word, server, prompt["name"], arguments)


def help_lines(ctx: CommandContext) -> str:
    """The prompt commands for ``/help`` ("" when there are none)."""
    found = commands(ctx.pool)
    if not found:
        return ""
    lines = ["MCP prompts (arguments by position or name=value):"]
    usages = {c: usage(c, p) for c, (_, p) in found.items()}
    width = max(len(u) for u in usages.values())
    for command, (_, prompt) in found.items():
        about = " ".join(str(prompt.get("description") or prompt.get("title") or "").split())
        lines.append(f"  {usages[command].ljust(width)}  {about[:80]}".rstrip())
    return "\n".join(lines)


def complete_command(word: str, ctx: CommandContext) -> list[str]:
    """Prompt commands that start with ``word``."""
    return sorted(c for c in commands(ctx.pool) if c.startswith(word))


# -- what the app runs ---------------------------------------------------------------------


def prompt_messages(result: GetPromptResult) -> list[Message]:
    """A prompt's messages in the conversation's own types (text only)."""
    out: list[Message] = []
    for message in result["messages"]:
        text = message_text(message)
        out.append(
            AssistantMessage(text=text)
            if message["role"] == "assistant"
            else UserMessage(text=text)
        )
    return out


async def get_prompt(pool: McpPool, action: RunPrompt) -> list[Message]:
    """The prompt's messages, or `McpClientError` naming the server and the prompt."""
    try:
        result = await pool.use(
            action.server, lambda c: c.get_prompt(action.prompt, action.arguments)
        )
    except McpClientError as exc:
        raise McpClientError(
            f"MCP server '{action.server}' could not give prompt {action.prompt!r}: {exc}"
        ) from exc
    messages = prompt_messages(result)
    if not messages:
        raise McpClientError(
            f"MCP server '{action.server}' gave prompt {action.prompt!r} with no messages"
        )
    return messages


# -- argument completion --------------------------------------------------------------------


async def complete_argument(text: str, pool: McpPool) -> tuple[str, list[str]]:
    """For a prompt command line being typed: the word at the cursor and what may replace
    it (``name=`` kept when typed so), from the server's ``completion/complete``."""
    head, space, rest = text.partition(" ")
    found = commands(pool).get(head)
    if found is None or not space:
        return "", []
    server_name, prompt = found
    words, current = _words(rest)
    names = argument_names(prompt)
    given: dict[str, str] = {}
    positional = []
    named = True  # until "--": after it every word is a value (`parse_arguments`)
    for word in words:
        key, equals, value = word.partition("=")
        if named and word == "--":
            named = False
        elif named and equals and key in names:
            given[key] = value
        else:
            positional.append(word)
    free = [n for n in names if n not in given]
    given.update(zip(free, positional, strict=False))
    key, equals, value = current.partition("=")
    if named and equals and key in names:
        argument, prefix = key, f"{key}="
    else:
        left = [n for n in names if n not in given]
        if not left:
            return current, []
        argument, prefix, value = left[0], "", current
    try:
        server = pool.connected(server_name)[0]
        async with asyncio.timeout(COMPLETION_TIMEOUT_S):
            ref: CompletionReference = {"type": "ref/prompt", "name": prompt["name"]}
            completion = await server.use(lambda c: c.complete(ref, argument, value, given))
    except (McpClientError, TimeoutError) as exc:
        logger.debug("%s: completing %s failed: %s", server_name, argument, exc)
        return current, []
    return current, [prefix + _quoted(v) for v in completion["values"]]


def _words(text: str) -> tuple[list[str], str]:
    """The finished words of ``text`` and the one being typed (shell-like, forgiving)."""
    finished, current = text.rsplit(" ", 1) if " " in text else ("", text)
    try:
        return shlex.split(finished), current
    except ValueError:
        return finished.split(), current


def _quoted(value: str) -> str:
    return shlex.quote(value) if value and any(c in value for c in " \t'\"\\") else value


__all__ = [
    "PREFIX",
    "ListPrompts",
    "ListResources",
    "ListSkills",
    "PromptAction",
    "RunPrompt",
    "commands",
    "complete_argument",
    "complete_command",
    "get_prompt",
    "help_lines",
    "is_prompt_command",
    "prompt_command",
    "prompt_messages",
]
