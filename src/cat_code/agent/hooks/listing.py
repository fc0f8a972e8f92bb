"""Every configured hook as the user reads it (``/hooks``, ``cat-code hooks [--json]``).

One line per hook: its event, matcher, command as written, timeout, whether it runs or
waits for approval (a project's), and the file it comes from. Commands and matchers are
escaped (`safe_line`): a project's are repository content.
"""

from __future__ import annotations

from typing import Any

from cat_code.agent.hooks.config import DEFAULT_TIMEOUT_S, HookCommand, HookConfig
from cat_code.base.safe_text import safe_line

APPROVE_COMMAND = "cat-code project approve hooks"


def state(hook: HookCommand, config: HookConfig) -> str:
    if hook.approved:
        return "ACTIVE"
    return "REJECTED" if config.rejected else "NEEDS_APPROVAL"


def hook_lines(config: HookConfig) -> list[str]:
    """The listing: one line per hook, then what to do about waiting ones and warnings."""
    if not config.hooks:
        lines = ['No hooks configured (settings.json "hooks"; see docs/hooks.md).']
    else:
        lines = [_line(hook, config) for hook in config.hooks]
    if config.withheld and not config.rejected:
        lines.append(
            f"Project hooks do not run until you approve them: {APPROVE_COMMAND} "
            "(or /hooks approve in the REPL)."
        )
    lines += [f"warning: {safe_line(w)}" for w in config.warnings]
    return lines


def _line(hook: HookCommand, config: HookConfig) -> str:
    matcher = f" [{safe_line(hook.matcher)}]" if hook.matcher.strip() else ""
    timeout = "" if hook.timeout_s == DEFAULT_TIMEOUT_S else f" (timeout {hook.timeout_s:g} s)"
    return (
        f"{state(hook, config):<14} {hook.event}{matcher}: {safe_line(hook.command)}{timeout}"
        f"  — {hook.file}"
    )


def hooks_json(config: HookConfig) -> list[dict[str, Any]]:
    """The listing as JSON objects (``cat-code hooks --json``)."""
    return [{**hook.as_json(), "state": state(hook, config)} for hook in config.hooks]
