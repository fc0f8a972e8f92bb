"""Whether a hook's ``matcher`` covers what happened.

A matcher is matched against a subject: the tool name for ``PreToolUse`` /
``PostToolUse`` (an MCP tool is ``mcp__<server>__<tool>``, as registered), the
``source`` for ``SessionStart``, the ``trigger`` for ``PreCompact``; the other events have
no subject and every hook of theirs runs. Empty or ``*`` matches everything; a name or
``A|B`` of names matches exactly; anything else is a regular expression that must match
the whole subject. A built-in tool also answers to Claude Code's name for it (``Bash``
is ``shell``, ``Edit`` is ``edit_file``…), so a matcher written for Claude Code works.
A matcher that is not a valid expression matches nothing (named once in a warning).
"""

from __future__ import annotations

import functools
import logging
import re

logger = logging.getLogger(__name__)

#: Claude Code's tool names for cat-code's built-in tools.
CLAUDE_NAMES: dict[str, tuple[str, ...]] = {
    "shell": ("Bash",),
    "read_file": ("Read",),
    "write_file": ("Write",),
    "edit_file": ("Edit", "MultiEdit"),
    "grep": ("Grep",),
    "glob": ("Glob",),
}

_NAMES = re.compile(r"[A-Za-z0-9_\-]+(\|[A-Za-z0-9_\-]+)*")


def matches(matcher: str, subject: str | None) -> bool:
    """Whether ``matcher`` covers ``subject`` (None: an event without one, always)."""
    matcher = matcher.strip()
    if subject is None or matcher in ("", "*"):
        return True
    names = (subject, *CLAUDE_NAMES.get(subject, ()))
    if _NAMES.fullmatch(matcher):
        wanted = set(matcher.split("|"))
        return any(name in wanted for name in names)
    pattern = _compiled(matcher)
    return pattern is not None and any(pattern.fullmatch(name) for name in names)


def valid_matcher(matcher: str) -> bool:
    """Whether ``matcher`` can match anything (an expression that does not compile cannot)."""
    matcher = matcher.strip()
    return matcher in ("", "*") or bool(_NAMES.fullmatch(matcher)) or _valid(matcher)


def _valid(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


@functools.lru_cache(maxsize=256)
def _compiled(matcher: str) -> re.Pattern[str] | None:
    try:
        return re.compile(matcher)
    except re.error as exc:
        logger.warning("hook matcher %r is not a valid regular expression (%s)", matcher, exc)
        return None
