"""The definitions as ``/agents`` and ``cat-code agents [--json]`` list them, with their source.

Names, descriptions and paths come from files a repository may hold: the text form goes
through `safe_line` (no escape sequence reaches the terminal), the JSON form through the
caller's `safe_json`.
"""

from __future__ import annotations

from typing import Any

from cat_code.agent.subagents.definitions import AgentDefinition, Catalogue
from cat_code.base.safe_text import safe_line


def _tools(definition: AgentDefinition) -> str:
    if definition.tools is None:
        tools = "the session's tools"
    else:
        tools = ", ".join(definition.tools) or "none"
    if definition.disallowed_tools:
        tools += f" except {', '.join(definition.disallowed_tools)}"
    return tools


def describe_catalogue(catalogue: Catalogue) -> str:
    """One entry per definition (two or three lines), then the shadowed ones and problems."""
    lines: list[str] = []
    for definition in catalogue.definitions.values():
        lines.append(safe_line(f"{definition.name}  ({definition.where})"))
        lines.append(safe_line(f"  {definition.description}"))
        details = [f"tools: {_tools(definition)}"]
        if definition.model:
            details.append(f"model: {definition.model}")
        if definition.max_turns:
            details.append(f"maxTurns: {definition.max_turns}")
        if definition.permission_mode is not None:
            details.append(f"permissionMode: {definition.permission_mode.setting}")
        lines.append(safe_line("  " + " · ".join(details)))
    for old in catalogue.shadowed:
        lines.append(safe_line(f"(not used: {old.name} from {old.where}, replaced by a later one)"))
    for warning in catalogue.warnings:
        lines.append(safe_line(f"warning: {warning}"))
    return "\n".join(lines)


def catalogue_json(catalogue: Catalogue) -> dict[str, Any]:
    """``cat-code agents --json``: every definition with its source, and the problems."""

    def entry(definition: AgentDefinition, *, used: bool) -> dict[str, Any]:
        return {
            "name": definition.name,
            "description": definition.description,
            "source": definition.source.name.lower(),
            "path": str(definition.path) if definition.path is not None else None,
            "tools": list(definition.tools) if definition.tools is not None else None,
            "disallowedTools": list(definition.disallowed_tools),
            "model": definition.model,
            "maxTurns": definition.max_turns,
            "permissionMode": (
                definition.permission_mode.setting if definition.permission_mode else None
            ),
            "used": used,
        }

    return {
        "agents": [entry(d, used=True) for d in catalogue.definitions.values()]
        + [entry(d, used=False) for d in catalogue.shadowed],
        "warnings": list(catalogue.warnings),
    }


__all__ = ["catalogue_json", "describe_catalogue"]
