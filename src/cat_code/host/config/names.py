"""Server names that clean up alike: two servers whose tools would share a name prefix.

A server's tools are registered as ``mcp__<sanitised server>__<tool>`` and permission
rules (``mcp__<server>__*``, "always allow this tool") are matched against those names. So
``echo.srv`` and ``echo_srv`` are one server to the rules, and so are ``a`` and ``a__b``
(``mcp__a__b__c`` is ``a``'s tool ``b__c`` or ``a__b``'s tool ``c``). A project entry that
clashes so with one of the user's servers is refused (`cat_code.host.config.load`), as
one with an equal name is, so the user's rules and sign-ins never reach it.
"""

from __future__ import annotations

from collections.abc import Iterable

from cat_code.host.mcp_tools.tool_adapter import sanitize


def tool_prefix(server: str) -> str:
    """The prefix every tool of ``server`` is registered under."""
    return f"mcp__{sanitize(server)}__"


def clashes(a: str, b: str) -> bool:
    """Whether tools of ``a`` and ``b`` could be taken for each other: the prefixes are
    equal, or one begins the other."""
    first, second = tool_prefix(a), tool_prefix(b)
    return first.startswith(second) or second.startswith(first)


def clashing(name: str, others: Iterable[str]) -> str | None:
    """The first of ``others`` whose tools ``name``'s could be taken for, else None."""
    return next((other for other in others if clashes(name, other)), None)
