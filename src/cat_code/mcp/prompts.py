"""Prompts: ready-made messages a server offers, checked, filled in, and turned into text.

Every entry of ``prompts/list``, every message of ``prompts/get`` and every
``completion/complete`` answer is checked here, where it crosses into our code (bad
entries are left out with a warning naming the server). `parse_arguments` reads what a
user typed after a prompt command — values by position (in the prompt's argument
order) or as ``name=value``, with shell-like quoting — and names every required argument
left out. `message_text` gives a prompt message as the text the model reads: text as it
is, an embedded text resource as its text, a blob, image or audio as a placeholder.
"""

from __future__ import annotations

import logging
import shlex
from typing import Any, cast

from cat_code.mcp.adapter import assign_names, flatten_block
from cat_code.mcp.resources import decoded_text, describe_blob
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


class PromptArgumentsError(ValueError):
    """What the user typed after a prompt command does not fit its arguments."""


def argument_names(prompt: Prompt) -> list[str]:
    return [a["name"] for a in prompt.get("arguments", [])]


def required_arguments(prompt: Prompt) -> list[str]:
    return [a["name"] for a in prompt.get("arguments", []) if a.get("required") is True]


def parse_arguments(prompt: Prompt, text: str) -> dict[str, str]:
    """The prompt's arguments from ``text``: ``a b`` by position, ``name=value`` by name,
    quotes as in a shell. Raises `PromptArgumentsError` naming what is wrong or missing.

    A word ``key=value`` whose ``key`` is an identifier must name one of the prompt's
    arguments (a typo is refused rather than sent as a value); one whose left side is not
    an identifier (``1+1=2``) is a value, and every word after ``--`` is a value."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise PromptArgumentsError(f"cannot read the arguments ({exc})") from None
    names = argument_names(prompt)
    values: dict[str, str] = {}
    positional: list[str] = []
    takes = ", ".join(names) if names else "no arguments"
    named = True
    for word in words:
        if named and word == "--":
            named = False
            continue
        key, equals, value = word.partition("=")
        if named and equals and key.isidentifier() and key not in names:
            raise PromptArgumentsError(
                f"unknown argument {key!r} (the prompt takes: {takes}); "
                f"to send {word!r} as a value, put it after --"
            )
        if named and equals and key in names:
            if key in values:
                raise PromptArgumentsError(f"argument {key!r} is given twice")
            values[key] = value
        else:
            positional.append(word)
    free = [n for n in names if n not in values]
    if len(positional) > len(free):
        extra = " ".join(shlex.quote(w) for w in positional[len(free) :])
        raise PromptArgumentsError(f"too many arguments: {extra} (the prompt takes: {takes})")
    values.update(zip(free, positional, strict=False))
    missing = [n for n in required_arguments(prompt) if n not in values]
    if missing:
        what = "argument" if len(missing) == 1 else "arguments"
        raise PromptArgumentsError(f"missing required {what}: {', '.join(missing)}")
    return values


def usage(command: str, prompt: Prompt) -> str:
    """``/mcp__s__p CITY [STATE]``: required arguments bare, optional ones in brackets."""
    parts = [command]
    for argument in prompt.get("arguments", []):
        name = argument["name"]
        parts.append(name if argument.get("required") else f"[{name}]")
    return " ".join(parts)


# -- messages as text ---------------------------------------------------------------------


def message_text(message: PromptMessage) -> str:
    """One prompt message's content as the text the model reads."""
    block = message["content"]
    if block.get("type") == "resource":
        resource = block.get("resource")
        if isinstance(resource, dict) and isinstance(resource.get("uri"), str):
            body = decoded_text(resource)  # type: ignore[arg-type]
            if body is None:
                return describe_blob(resource)  # type: ignore[arg-type]
            return f"[resource {resource['uri']}]\n{body}"
    return flatten_block(block) or ""


__all__ = [
    "MAX_COMPLETIONS",
    "PromptArgumentsError",
    "argument_names",
    "command_names",
    "message_text",
    "parse_arguments",
    "required_arguments",
    "usage",
    "valid_completion",
    "valid_prompt",
    "valid_prompt_result",
]


def command_names(known: list[tuple[str, Prompt]]) -> dict[str, tuple[str, Prompt]]:
    """``/mcp__<server>__<prompt>`` → (server, prompt) for every prompt, named like tools
    (sanitised, at most 64 characters, collisions resolved the same way every time)."""
    by_server: dict[str, dict[str, Prompt]] = {}
    for server, prompt in known:
        by_server.setdefault(server, {})[prompt["name"]] = prompt
    commands: dict[str, tuple[str, Prompt]] = {}
    taken: set[str] = set()
    for server, prompts in by_server.items():
        for original, name in assign_names(server, prompts, taken).items():
            taken.add(name)
            commands[f"/{name}"] = (server, prompts[original])
    return commands
