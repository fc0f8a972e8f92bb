"""The permission mode in the REPL: Shift+Tab, the bar that shows it, and the plan question.

`ModeBar` owns what the user sees of the mode: Shift+Tab steps default → acceptEdits →
plan (`permission_modes.next_mode`), and while the mode is not ``default`` the prompt
starts with it (``⏸ plan ›``) and a bottom toolbar names it (in ``default`` neither: the
screen is as before; the toolbar needs a terminal that reports its size, the prompt not).
The mode itself lives in `Permissions.mode`, where the gate reads it; this module only
sets it. `PlanQuestion` is the `PlanReviewer` of ``exit_plan_mode``: it shows the plan as
Markdown (through the safe-text helper: it is the model's text) and asks whether to go on,
in default or acceptEdits mode, or keep planning with feedback for the model.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rich.text import Text

from cat_code.agent.permission_modes import PermissionMode, next_mode
from cat_code.agent.plan_tool import PlanReview
from cat_code.base.safe_text import safe_text
from cat_code.repl.render import markdown

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from cat_code.agent.permissions import Permissions
    from cat_code.repl.questions import Questions

_BAR = {
    PermissionMode.ACCEPT_EDITS: "⏵⏵ accept edits on (shift+tab to cycle)",
    PermissionMode.PLAN: "⏸ plan mode on (shift+tab to cycle)",
    PermissionMode.BYPASS: "⏵⏵ bypass permissions on (shift+tab to cycle)",
}


_MARK = {
    PermissionMode.ACCEPT_EDITS: "⏵⏵ accept edits",
    PermissionMode.PLAN: "⏸ plan",
    PermissionMode.BYPASS: "⏵⏵ bypass",
}


class ModeBar:
    """The mode as the prompt shows it, and the Shift+Tab that changes it."""

    def __init__(self, permissions: Permissions) -> None:
        self.permissions = permissions
        self.session: PromptSession[str] | None = None

    def attach(self, session: PromptSession[str]) -> None:
        self.session = session
        self.refresh()

    def text(self) -> str:
        return _BAR.get(self.permissions.mode, "")

    def prompt(self, plain: str) -> str:
        """The prompt's text: ``plain`` after the mode's mark, when it is not default."""
        mark = _MARK.get(self.permissions.mode)
        return f"{mark} {plain}" if mark else plain

    def set(self, mode: PermissionMode) -> None:
        self.permissions.mode = mode
        self.refresh()

    def cycle(self) -> None:
        """Shift+Tab: the next mode."""
        self.set(next_mode(self.permissions.mode))

    def refresh(self) -> None:
        """Redraw: the status toolbar leads with the mode outside default mode (`text`)."""
        if self.session is not None and self.session.app.is_running:
            self.session.app.invalidate()


_CHOICES = "y yes, go on (default mode) · a yes, and accept edits · n no, keep planning"


def parse_plan_answer(raw: str) -> PermissionMode | bool | None:
    """The mode chosen at the plan question, False to keep planning, None to ask again."""
    answer = raw.strip().lower()
    if answer in ("y", "yes"):
        return PermissionMode.DEFAULT
    if answer in ("a", "accept", "accept edits"):
        return PermissionMode.ACCEPT_EDITS
    if answer in ("n", "no"):
        return False
    return None


class PlanQuestion:
    """Shows a plan and asks the user about it (the REPL's `PlanReviewer`)."""

    def __init__(self, questions: Questions) -> None:
        self.questions = questions

    async def __call__(self, plan: str) -> PlanReview:
        console = self.questions.console
        with self.questions.view.paused():
            console.print(Text("● plan", style="bold"))
            console.print(markdown(safe_text(plan)))
            while True:
                try:
                    raw = await self.questions.question(f"  approve? {_CHOICES} › ")
                except KeyboardInterrupt:
                    raise asyncio.CancelledError from None  # Ctrl-C cancels the turn
                except EOFError:
                    raw = "n"
                choice = parse_plan_answer(raw)
                if choice is not None:
                    break
            if choice is False:
                try:
                    feedback = await self.questions.question("  what should change? › ")
                except (EOFError, KeyboardInterrupt):
                    feedback = ""
                return PlanReview(None, feedback)
            assert isinstance(choice, PermissionMode)
            return PlanReview(choice)  # the tool sets the mode; the toolbar follows


def show_mode(mode: PermissionMode) -> str:
    """One line saying the mode now in force."""
    return _BAR.get(mode, "default mode: tool calls that change things ask first").replace(
        " (shift+tab to cycle)", ""
    )


__all__ = ["ModeBar", "PlanQuestion", "parse_plan_answer", "show_mode"]
