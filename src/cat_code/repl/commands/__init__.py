"""REPL slash commands, each declared once (`SlashCommand`) in a topic module.

`REGISTRY` joins the topics' ``COMMANDS`` in /help order and the servers' prompt commands;
`handle_command` (a line in, an outcome out: pure, never prints) and `complete` (Tab) read
it. To add a command, declare it in the topic module it belongs to (see
docs/architecture.md, "Adding a slash command"); a new topic module is also listed here.
"""

from __future__ import annotations

from cat_code.repl.commands import (
    agents,
    help,
    jobs,
    mcp,
    mcp_servers,
    permissions,
    prompts_resources,
    session,
    tasks,
)
from cat_code.repl.commands.mcp import CallTool, resolve_tool_name
from cat_code.repl.commands.mcp_servers import (
    DecideProject,
    Login,
    Logout,
    ManageServer,
    ReloadConfig,
)
from cat_code.repl.commands.permissions import AddDir, RemoveRule
from cat_code.repl.commands.registry import (
    KEYS_HELP,
    CommandContext,
    CommandRegistry,
    Effect,
    Exit,
    Outcome,
    Show,
    SlashCommand,
)
from cat_code.repl.commands.session import (
    ClearConversation,
    Compact,
    ResumeSession,
    SwitchModel,
    model_text,
    tools_text,
)

#: Every command, in /help order: the topics in this order, each in its own.
REGISTRY = CommandRegistry(
    (
        *help.COMMANDS,
        *mcp.COMMANDS,
        *prompts_resources.COMMANDS,
        *mcp_servers.COMMANDS,
        *permissions.COMMANDS,
        *session.COMMANDS,
        *jobs.COMMANDS,
        *tasks.COMMANDS,
        *agents.COMMANDS,
    ),
    families=(prompts_resources.PROMPT_COMMANDS,),
)


def is_command(line: str) -> bool:
    return line.lstrip().startswith("/")


def handle_command(line: str, ctx: CommandContext) -> Outcome:
    """What a slash-command line means."""
    return REGISTRY.handle(line, ctx)


def complete(text: str, ctx: CommandContext) -> list[str]:
    """Completions for the line typed so far (the whole word being typed, replaced)."""
    return REGISTRY.complete(text, ctx)


def help_text() -> str:
    return REGISTRY.help_text()


__all__ = [
    "KEYS_HELP",
    "REGISTRY",
    "AddDir",
    "CallTool",
    "ClearConversation",
    "CommandContext",
    "Compact",
    "DecideProject",
    "Effect",
    "Exit",
    "Login",
    "Logout",
    "ManageServer",
    "Outcome",
    "ReloadConfig",
    "RemoveRule",
    "ResumeSession",
    "Show",
    "SlashCommand",
    "SwitchModel",
    "complete",
    "handle_command",
    "help_text",
    "is_command",
    "model_text",
    "resolve_tool_name",
    "tools_text",
]
