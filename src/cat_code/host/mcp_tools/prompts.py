"""Prompts as a person uses them: typed arguments parsed, messages as text, command names.

`parse_arguments` reads what a user typed after a prompt command — values by position (in
the prompt's argument order) or as ``name=value``, with shell-like quoting — and names every
required argument left out. `message_text` gives a prompt message as the text the model
reads: text as it is, an embedded text resource as its text, a blob, image or audio as a
placeholder. `command_names` gives each server's prompts their REPL command names. The
checks of what servers send are the library's (`cat_code.mcp.prompts`).
"""

from __future__ import annotations

import shlex

from cat_code.host.mcp_tools.tool_adapter import assign_names, flatten_block
from cat_code.mcp.resources import decoded_text, describe_blob
from cat_code.mcp.wire import Prompt, PromptMessage


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
