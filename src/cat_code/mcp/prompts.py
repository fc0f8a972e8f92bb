"""Prompts: ready-made messages a server offers, checked where they cross into our code.

Every entry of ``prompts/list``, every message of ``prompts/get`` and every
``completion/complete`` answer is checked here (bad entries are left out with a warning
naming the server). What a person does with a prompt — typed arguments, the text a model
reads, command names — is the host's (`cat_code.host.mcp_tools.prompts`).
"""

from __future__ import annotations

import logging
from typing import Any, cast

from cat_code.mcp.wire import Completion, GetPromptResult, Prompt, PromptArgument, PromptMessage

logger = logging.getLogger(__name__)

#: The spec caps a completion at 100 values; more is the server's mistake, not our problem.
MAX_COMPLETIONS = 100


def valid_prompt(entry: Any, server: str) -> Prompt | None:
    """One ``prompts/list`` entry as a `Prompt` (bad arguments dropped), or None (logged)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
        logger.warning("%s: skipping a prompt without a name: %.200r", server, entry)
        return None
    out = {k: v for k, v in entry.items() if k not in ("title", "description", "arguments")}
    for key in ("title", "description"):
        if isinstance(entry.get(key), str):
            out[key] = entry[key]
    arguments: list[PromptArgument] = []
    raw = entry.get("arguments")
    for argument in raw if isinstance(raw, list) else []:
        if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            logger.warning(
                "%s: prompt %r: skipping an argument without a name: %.200r",
                server,
                entry["name"],
                argument,
            )
            continue
        clean: PromptArgument = {"name": argument["name"]}
        for key in ("title", "description"):
            if isinstance(argument.get(key), str):
                clean[key] = argument[key]  # type: ignore[literal-required]
        if argument.get("required") is True:
            clean["required"] = True
        arguments.append(clean)
    if arguments:
        out["arguments"] = arguments
    return cast(Prompt, out)


def valid_prompt_result(result: Any, server: str, name: str) -> GetPromptResult:
    """A ``prompts/get`` result with only usable messages; `ValueError` without a list."""
    if not isinstance(result, dict) or not isinstance(result.get("messages"), list):
        raise ValueError(f"prompts/get of {name!r} has no 'messages' array")
    messages: list[PromptMessage] = []
    for message in result["messages"]:
        if (
            isinstance(message, dict)
            and message.get("role") in ("user", "assistant")
            and isinstance(message.get("content"), dict)
        ):
            messages.append(cast(PromptMessage, message))
        else:
            logger.warning(
                "%s: prompt %r: skipping a malformed message: %.200r", server, name, message
            )
    out: dict[str, Any] = {"messages": messages}
    if isinstance(result.get("description"), str):
        out["description"] = result["description"]
    return cast(GetPromptResult, out)


def valid_completion(result: Any) -> Completion:
    """A ``completion/complete`` answer's values (strings only, at most 100)."""
    completion = result.get("completion") if isinstance(result, dict) else None
    if not isinstance(completion, dict):
        return {"values": []}
    values = completion.get("values")
    out: Completion = {
        "values": [v for v in values if isinstance(v, str)][:MAX_COMPLETIONS]
        if isinstance(values, list)
        else []
    }
    total = completion.get("total")
    if isinstance(total, int) and not isinstance(total, bool):
        out["total"] = total
    if isinstance(completion.get("hasMore"), bool):
        out["hasMore"] = completion["hasMore"]
    return out


# -- what the user typed ----------------------------------------------------------------


__all__ = [
    "MAX_COMPLETIONS",
    "valid_completion",
    "valid_prompt",
    "valid_prompt_result",
]
