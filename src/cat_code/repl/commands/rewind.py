"""Guard rails: ``/plan`` (plan mode on) and ``/rewind`` (back to before a prompt).

``/rewind`` lists the session's prompts (`Checkpointer.prompts`), asks which one to go back
to and what to restore: the code (the files as they were before that prompt, from its
checkpoint or the first one after it), the conversation (the messages before it, saved to
the session file as a rewind, so ``--resume`` goes on from there), or both. Files changed
since cat-code's last turn by something else are named, and nothing is restored before the
user confirms. Outside git it says that changes made by ``shell`` are not covered.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from cat_code.agent.checkpointing import Checkpointer, PromptMark
from cat_code.agent.permission_modes import PermissionMode
from cat_code.base.safe_text import safe_line
from cat_code.host.git import GitError
from cat_code.repl.commands.registry import (
    CommandContext,
    Outcome,
    ReplHost,
    Show,
    SlashCommand,
)
from cat_code.repl.render import error_line, note_line

#: How many restored files are named.
MAX_NAMED = 20
#: How much of each prompt the list shows.
PROMPT_CHARS = 70
NOT_COVERED = (
    "this folder is not a git repository: only the files write_file and edit_file changed "
    "are restored; changes made by shell commands are not covered"
)


@dataclass(frozen=True, slots=True)
class SetMode:
    mode: PermissionMode

    async def perform(self, repl: ReplHost) -> None:
        from cat_code.repl.modes import show_mode

        repl.session.permissions.mode = self.mode  # the toolbar follows at the next prompt
        repl.console.print(Text(show_mode(self.mode), style="bright_black"))


def _plan(rest: str, ctx: CommandContext) -> Outcome:
    if rest:
        return Show("usage: /plan (Shift+Tab cycles default → acceptEdits → plan)", "error")
    return SetMode(PermissionMode.PLAN)


class _Stop(Exception):
    """The user cancelled the rewind at one of its questions."""


async def _ask(repl: ReplHost, message: str) -> str:
    try:
        return (await repl.question(message)).strip()
    except (EOFError, KeyboardInterrupt):
        raise _Stop from None


def _listing(checkpointer: Checkpointer) -> list[Text]:
    lines = [Text("prompts of this session:")]
    for mark in checkpointer.prompts:
        changed = checkpointer.checkpoint_for(mark) is not None
        what = "code changed since" if changed else "no code changed since"
        prompt = safe_line(" ".join(mark.text.split()))
        if len(prompt) > PROMPT_CHARS:
            prompt = prompt[: PROMPT_CHARS - 1] + "…"
        lines.append(Text.assemble(f"  {mark.number:>3}. {prompt}  ", (what, "bright_black")))
    return lines


@dataclass(frozen=True, slots=True)
class Rewind:
    async def perform(self, repl: ReplHost) -> None:
        checkpointer = repl.session.checkpointer
        if checkpointer is None or not checkpointer.prompts:
            repl.console.print(note_line("nothing to rewind: no prompt in this session yet"))
            return
        try:
            await self._rewind(repl, checkpointer)
        except _Stop:
            repl.console.print(note_line("rewind cancelled: nothing changed"))
        except (GitError, OSError) as exc:
            repl.console.print(error_line(f"rewind failed: {exc}"))

    async def _rewind(self, repl: ReplHost, checkpointer: Checkpointer) -> None:
        await checkpointer.store.settled()
        if (note := checkpointer.dropped_note()) is not None:
            repl.console.print(note_line(note))
        for line in _listing(checkpointer):
            repl.console.print(line)
        if not checkpointer.store.covers_shell:
            repl.console.print(note_line(NOT_COVERED))
        numbers = {str(mark.number): mark for mark in checkpointer.prompts}
        question = "  rewind to before which prompt? (its number; Enter cancels) › "
        answer = await _ask(repl, question)
        while (mark := numbers.get(answer)) is None:
            if not answer:
                raise _Stop
            repl.console.print(error_line(f"no prompt {safe_line(answer)}: give a number above"))
            answer = await _ask(repl, question)
        question = "  restore: b both · c code only · o conversation only (Enter cancels) › "
        choice = (await _ask(repl, question)).lower()
        while choice not in ("b", "c", "o"):
            if not choice:
                raise _Stop
            choice = (await _ask(repl, question)).lower()
        if choice in ("b", "c"):
            await self._code(repl, checkpointer, mark)
        if choice in ("b", "o"):
            self._conversation(repl, checkpointer, mark)

    async def _code(self, repl: ReplHost, checkpointer: Checkpointer, mark: PromptMark) -> None:
        checkpoint = checkpointer.checkpoint_for(mark)
        if checkpoint is None:
            repl.console.print(note_line(f"no code changed since prompt {mark.number}"))
            return
        others = await checkpointer.store.changed_by_others()
        if others:
            repl.console.print(
                Text("changed since cat-code's last turn by something else:", style="yellow")
            )
            for path in others:
                repl.console.print(Text(f"  {safe_line(path)}"))
            answer = await _ask(repl, "  restore them too, losing those changes? y/N › ")
            if answer.lower() not in ("y", "yes"):
                raise _Stop
        restored = await checkpointer.store.restore(checkpoint)
        repl.session.ledger.forget_all()  # what the model read may differ now
        repl.console.print(
            Text(
                f"code restored to before prompt {mark.number}: {len(restored.written)} "
                f"file(s) written back, {len(restored.removed)} removed"
            )
        )
        for path in [*restored.written, *restored.removed][:MAX_NAMED]:
            repl.console.print(Text(f"  {safe_line(path)}", style="bright_black"))

    def _conversation(self, repl: ReplHost, checkpointer: Checkpointer, mark: PromptMark) -> None:
        agent = repl.agent
        messages = None if agent is None else checkpointer.conversation_before(mark, agent.messages)
        if agent is None or messages is None:
            repl.console.print(
                note_line(
                    "the conversation was compacted, cleared or resumed since that prompt: "
                    "it cannot go back there (the code can)"
                )
            )
            return
        agent.load(messages, sorted(agent.tool_search.kept))
        repl.session.log.sync(agent.messages)  # a rewind record: --resume goes on from here
        checkpointer.forget_from(mark)
        repl.console.print(Text(f"conversation rewound to before prompt {mark.number}"))


COMMANDS = (
    SlashCommand("/plan", "plan mode: the model only reads, then asks you to approve its plan",
                 _plan),
    SlashCommand("/rewind", "go back to before a prompt: the code, the conversation, or both",
                 lambda rest, ctx: Rewind()),
)  # fmt: skip

__all__ = ["COMMANDS", "Rewind", "SetMode"]
