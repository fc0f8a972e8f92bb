"""What the servers and tools may touch: ``/add-dir`` (a root besides the working
directory, told to every server) and ``/permissions`` (the allow/deny rules; ``remove``
takes one out of your settings)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from cat_code.agent.permissions import RuleError
from cat_code.repl.commands.registry import (
    CommandContext,
    Outcome,
    ReplHost,
    Show,
    SlashCommand,
    names_starting,
)
from cat_code.repl.render import error_line, note_line


@dataclass(frozen=True, slots=True)
class AddDir:
    path: Path

    async def perform(self, repl: ReplHost) -> None:
        if repl.roots.add(self.path):
            count = len(repl.roots.paths)
            repl.console.print(
                Text(f"added {self.path} as a root; MCP servers now have {count} root(s)")
            )
        else:
            repl.console.print(note_line(f"{self.path} is a root already"))


@dataclass(frozen=True, slots=True)
class RemoveRule:
    rule: str

    async def perform(self, repl: ReplHost) -> None:
        try:
            repl.console.print(Text(repl.rules.remove(self.rule)))
        except RuleError as exc:
            repl.console.print(error_line(str(exc)))


def _add_dir(text: str, ctx: CommandContext) -> Outcome:
    from cat_code.mcp.roots import RootError, check_dir

    try:
        # A shell word, as a path is written on the command line: "/tmp/my dir" works.
        words = shlex.split(text)
    except ValueError as exc:
        message = str(exc)
        return Show(f"/add-dir: {message[:1].lower()}{message[1:]} in {text}", "error")
    if not words:
        return Show("usage: /add-dir DIR", "error")
    if len(words) > 1:
        return Show(f"/add-dir takes one directory ({len(words)} given); quote a path with "
                    'spaces: /add-dir "my dir"', "error")  # fmt: skip
    try:
        return AddDir(check_dir(words[0]))
    except RootError as exc:
        return Show(f"/add-dir: {exc}", "error")


def _permissions(text: str, ctx: CommandContext) -> Outcome:
    sub, _, tail = text.partition(" ")
    if ctx.rules is None:
        return Show("no permission rules in this session", "error")
    if not sub:
        return Show(ctx.rules.describe())
    if sub == "remove":
        if not tail.strip():
            return Show(
                "usage: /permissions remove RULE (or its number from /permissions)", "error"
            )
        return RemoveRule(tail.strip())
    return Show(f"unknown /permissions subcommand {sub!r} — try /permissions or "
                "/permissions remove RULE", "error")  # fmt: skip


def _complete_permissions(words: list[str], ctx: CommandContext) -> list[str]:
    if len(words) == 1:
        return names_starting(["remove"], words[0])
    if len(words) == 2 and words[0] == "remove" and ctx.rules is not None:
        mine = [r.pattern for r in ctx.rules.rules if r.source != "project"]
        return names_starting(dict.fromkeys(mine), words[1])
    return []


COMMANDS = (
    SlashCommand("/add-dir", "let MCP servers work in DIR too (a root besides the working "
                 "directory)", _add_dir, args="DIR"),
    SlashCommand("/permissions", "the allow/deny rules and their files; remove one from your "
                 "settings", _permissions, args="[remove RULE|N]",
                 complete=_complete_permissions),
)  # fmt: skip
