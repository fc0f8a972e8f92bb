"""``/hooks``: every configured hook, its file, and whether it runs; ``/hooks approve`` /
``/hooks reject`` decide the project's hooks as written now (like ``cat-code project
approve hooks``), and the session's hooks are read again."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from cat_code.agent.hooks.listing import hook_lines
from cat_code.host.config.project_trust import decide_content
from cat_code.host.config.trust import ContentKind, TrustDecision
from cat_code.repl.commands.registry import (
    CommandContext,
    Outcome,
    ReplHost,
    Show,
    SlashCommand,
    names_starting,
)
from cat_code.repl.render import note_line


@dataclass(frozen=True, slots=True)
class ListHooks:
    async def perform(self, repl: ReplHost) -> None:
        repl.session.hooks.reload()  # as the files are now
        repl.console.print(Text("\n".join(hook_lines(repl.session.hooks.config))))


@dataclass(frozen=True, slots=True)
class DecideHooks:
    decision: TrustDecision

    async def perform(self, repl: ReplHost) -> None:
        decided = decide_content(self.decision, (ContentKind.HOOKS,), cwd=repl.session.cwd)
        repl.session.hooks.reload()
        if not decided:
            repl.console.print(note_line("the project's settings have no hooks"))
            return
        for content in decided:
            what = "approved" if self.decision is TrustDecision.APPROVED else "rejected"
            repl.console.print(note_line(f"{what} for this folder: {content.describe()}"))


def _hooks(text: str, ctx: CommandContext) -> Outcome:
    if not text:
        return ListHooks()
    if text == "approve":
        return DecideHooks(TrustDecision.APPROVED)
    if text == "reject":
        return DecideHooks(TrustDecision.REJECTED)
    return Show(f"unknown /hooks subcommand {text!r} — try /hooks, /hooks approve or "
                "/hooks reject", "error")  # fmt: skip


def _complete(words: list[str], ctx: CommandContext) -> list[str]:
    return names_starting(["approve", "reject"], words[0]) if len(words) == 1 else []


COMMANDS = (
    SlashCommand("/hooks", "the hooks of the settings files and whether they run; approve or "
                 "reject the project's", _hooks, args="[approve|reject]", complete=_complete),
)  # fmt: skip
