"""The agent's side of checkpoints: when to take them, and what ``/rewind`` goes back to.

`Checkpointer` numbers the session's prompts (`begin`, from `Agent.run`) and remembers
where each began in the conversation — the prompt's message itself, by identity, so a
conversation that was compacted, cleared or resumed since simply has no place to go back
to (the code still does). Before the first call of a prompt that is not read-only
(`before_tools`, before any call of that set runs) it asks the `CheckpointStore` for a
snapshot; outside git it also saves each ``write_file``/``edit_file`` target first. After the
turn, `turn_ended` notes the tree, so a rewind can name what others changed since. A git
failure never stops a tool: it is logged, and that prompt has no checkpoint.
"""

from __future__ import annotations

import glob
import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from cat_code.agent.permission_modes import EDIT_TOOLS
from cat_code.agent.providers.base import Message, UserMessage
from cat_code.host.git import GitError
from cat_code.host.state.checkpoints import Checkpoint, CheckpointStore, prune_checkpoints
from cat_code.tools.base import Tool

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class PromptMark:
    """One prompt of the session: its number, its text, and the message it began with."""

    number: int
    text: str
    message: Message
    #: The prompt joined the tool results of a cancelled turn (that message stays, emptied).
    joined: bool


class Checkpointer:
    """The checkpoints of one session's prompts (see the module docstring)."""

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store
        self.prompts: list[PromptMark] = []
        self._next = 1
        #: How many dropped checkpoints the user has been told of.
        self.dropped_told = 0

    @property
    def current(self) -> PromptMark | None:
        return self.prompts[-1] if self.prompts else None

    def begin(self, prompt: str, messages: list[Message]) -> None:
        """A prompt was just added to ``messages`` (as their last message)."""
        last = messages[-1]
        joined = isinstance(last, UserMessage) and bool(last.tool_results)
        self.prompts.append(PromptMark(self._next, prompt, last, joined))
        self._next += 1  # never reused: a checkpoint's ref is named by it

    async def before_tools(self, calls: list[tuple[Tool, dict[str, Any]]]) -> None:
        """Calls are about to run: the first change of a prompt is preceded by a snapshot."""
        mark = self.current
        changing = [(tool, args) for tool, args in calls if not tool.read_only]
        if mark is None or not changing:
            return
        try:
            await self.store.snapshot(mark.number, mark.text)
            for tool, args in changing:
                if tool.owner.server is None and tool.name in EDIT_TOOLS:
                    for path in tool.file_paths(args):
                        self.store.before_change(mark.number, path)
        except (GitError, OSError) as exc:
            logger.warning("could not take a checkpoint for /rewind: %s", exc)

    async def turn_ended(self) -> None:
        mark = self.current
        if mark is None or self.store.current(mark.number) is None:
            return
        try:
            await self.store.turn_ended(mark.number)
        except (GitError, OSError) as exc:
            logger.debug("noting the end of a turn failed: %s", exc)

    def checkpoint_for(self, mark: PromptMark) -> Checkpoint | None:
        """The state before ``mark``'s prompt: the first checkpoint taken at it or after
        (the prompts in between changed nothing); None when nothing changed since."""
        later = [c for c in self.store.checkpoints if c.number >= mark.number]
        return min(later, key=lambda c: c.number) if later else None

    def conversation_before(
        self, mark: PromptMark, messages: list[Message]
    ) -> list[Message] | None:
        """The conversation as it was before ``mark``'s prompt, or None when that place is
        gone (compacted, cleared, resumed since)."""
        index = next((i for i, m in enumerate(messages) if m is mark.message), None)
        if index is None:
            return None
        if mark.joined:  # the results it joined stay, without the prompt's text
            assert isinstance(mark.message, UserMessage)
            return [*messages[:index], replace(mark.message, text="")]
        return list(messages[:index])

    def forget_from(self, mark: PromptMark) -> None:
        """The conversation went back to before ``mark``: its prompt and later ones are gone."""
        self.prompts = [p for p in self.prompts if p.number < mark.number]
        self.store.forget_from(mark.number)

    def dropped_note(self) -> str | None:
        """ "N oldest checkpoints dropped", once per drop."""
        new = self.store.dropped - self.dropped_told
        if new <= 0:
            return None
        self.dropped_told = self.store.dropped
        plural = "checkpoint" if new == 1 else "checkpoints"
        return f"{new} oldest {plural} dropped: checkpoints are capped in total size"


async def prune_gone_sessions(session: _HasCheckpoints) -> list[str]:
    """Remove the checkpoints of sessions whose session file is gone (run at start, in the
    background: a failure is only logged)."""
    from cat_code.agent.history.store import SESSIONS_DIR, SUFFIX
    from cat_code.host.state.home import cat_code_home

    home = cat_code_home()
    current = session.session_id
    files = home / SESSIONS_DIR

    def alive(ident: str) -> bool:
        return ident == current or any(files.glob(f"*/{glob.escape(ident)}{SUFFIX}"))

    try:
        return await prune_checkpoints(session.cwd, home, alive)
    except (GitError, OSError) as exc:
        logger.debug("pruning old checkpoints failed: %s", exc)
        return []


class _HasCheckpoints(Protocol):
    @property
    def session_id(self) -> str: ...
    @property
    def cwd(self) -> Path: ...


__all__ = ["Checkpointer", "PromptMark", "prune_gone_sessions"]
