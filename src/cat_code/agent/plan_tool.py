"""``exit_plan_mode {plan}``: how the model leaves plan mode — by showing the user its plan.

The tool is read-only (the gate lets it through in plan mode, `permission_modes.PLAN_TOOL`)
and does nothing outside plan mode but say so. In plan mode it hands the plan to the
front end's `PlanReviewer`: the REPL shows it as Markdown and the user approves it (the
session's mode becomes the one they chose, and the model is told to go ahead) or keeps
planning, and their feedback is the tool's result. With no reviewer (``-p``) the plan is
kept as the turn's answer and `take_final` hands it to the loop, which ends the turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cat_code.agent.permission_modes import PLAN_TOOL, PermissionMode
from cat_code.tools.base import ProgressCallback, Tool, ToolResult

if TYPE_CHECKING:
    from cat_code.agent.permissions import Permissions


@dataclass(frozen=True, slots=True)
class PlanReview:
    """The user's answer to a plan: approved, going on in ``mode``; or not (``mode`` None),
    with ``feedback`` for the model."""

    mode: PermissionMode | None
    feedback: str = ""


#: Shows the plan to the user and returns their answer (the REPL's question).
PlanReviewer = Callable[[str], Awaitable[PlanReview]]


class ExitPlanModeTool(Tool):
    name = PLAN_TOOL
    description = (
        "In plan mode, present your plan to the user for approval (Markdown). Call it when "
        "you have explored enough and know what you would change; the user approves it "
        "(then you may make the changes) or answers with feedback to plan further."
    )
    input_schema = {  # noqa: RUF012 (Tool declares it an instance attribute)
        "type": "object",
        "properties": {"plan": {"type": "string", "description": "the plan, as Markdown"}},
        "required": ["plan"],
    }
    read_only = True

    def __init__(self, permissions: Permissions, reviewer: PlanReviewer | None = None) -> None:
        self.permissions = permissions
        self.reviewer = reviewer
        self._final: str | None = None

    def take_final(self) -> str | None:
        """The plan that ends this turn (``-p``), once; None when there is none."""
        final, self._final = self._final, None
        return final

    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        if self.permissions.mode is not PermissionMode.PLAN:
            return ToolResult.error("Error: plan mode is not on; go ahead without it.")
        plan = arguments.get("plan")
        if not isinstance(plan, str) or not plan.strip():
            return ToolResult.error("Error: exit_plan_mode needs the plan as a string.")
        if self.reviewer is None:
            self._final = plan
            return ToolResult(
                "This run cannot ask the user: the plan is handed to them as the result. "
                "Stop here; make no changes."
            )
        review = await self.reviewer(plan)
        if review.mode is None:
            feedback = review.feedback.strip() or "(no feedback given)"
            return ToolResult(
                "The user did not approve the plan and wants you to keep planning (plan mode "
                f"stays on). Their feedback: {feedback}"
            )
        self.permissions.mode = review.mode
        return ToolResult(
            f"The user approved the plan; the permission mode is now {review.mode.value}. "
            "Go ahead and carry it out."
        )


__all__ = ["ExitPlanModeTool", "PlanReview", "PlanReviewer"]
