"""The model's task list: ``/tasks`` prints it whole (the app reads it afresh: another
process may share it). The panel above the prompt and Ctrl-T are `cat_code.repl.task_panel`.
"""

from __future__ import annotations

from cat_code.repl.commands.registry import CommandContext, Outcome, Show, SlashCommand


def _tasks(rest: str, ctx: CommandContext) -> Outcome:
    return Show(ctx.tasks())


COMMANDS = (
    SlashCommand(
        "/tasks",
        "the model's task list (Ctrl-T hides or shows it above the prompt)",
        _tasks,
    ),
)
