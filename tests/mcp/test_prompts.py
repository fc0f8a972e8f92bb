"""Prompt arguments as typed after a prompt command, prompt command names, and the checks
on what servers send (`cat_code.mcp.prompts`, `cat_code.mcp.resources`)."""

from __future__ import annotations

from typing import Any

import pytest

from cat_code.host.mcp_tools.prompts import (
    PromptArgumentsError,
    command_names,
    message_text,
    parse_arguments,
    usage,
)
from cat_code.mcp.prompts import valid_prompt
from cat_code.mcp.resources import expand_template, template_prefix, template_variables

REVIEW: Any = {
    "name": "review",
    "arguments": [
        {"name": "path", "required": True},
        {"name": "focus"},
        {"name": "style", "required": True},
    ],
}


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("a.py style=pep8", {"path": "a.py", "style": "pep8"}),
        ("a.py security pep8", {"path": "a.py", "focus": "security", "style": "pep8"}),
        ("style=pep8 path=a.py", {"path": "a.py", "style": "pep8"}),
        (
            '"my file.py" focus="two words" x',
            {"path": "my file.py", "focus": "two words", "style": "x"},
        ),
        ("style='a=b' a.py", {"path": "a.py", "style": "a=b"}),
        ("a.py x 1+1=2", {"path": "a.py", "focus": "x", "style": "1+1=2"}),  # not a name
        ("a.py x -- other=1", {"path": "a.py", "focus": "x", "style": "other=1"}),
        ("-- focus=1 a b", {"path": "focus=1", "focus": "a", "style": "b"}),
    ],
)
def test_arguments_come_by_position_or_by_name_with_shell_quoting(
    typed: str, expected: dict[str, str]
) -> None:
    assert parse_arguments(REVIEW, typed) == expected


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("", "missing required arguments: path, style"),
        ("focus=x a.py", "missing required argument: style"),
        ("a.py pep8", "missing required argument: style"),  # by position: path, focus
        ("a b c d", "too many arguments: d (the prompt takes: path, focus, style)"),
        ("path=a path=b x", "argument 'path' is given twice"),
        ('"unclosed', "cannot read the arguments (No closing quotation)"),
        (
            "a.py x bogus=1",
            "unknown argument 'bogus' (the prompt takes: path, focus, style);"
            " to send 'bogus=1' as a value, put it after --",
        ),
    ],
)
def test_bad_arguments_are_named(typed: str, message: str) -> None:
    with pytest.raises(PromptArgumentsError) as caught:
        parse_arguments(REVIEW, typed)
    assert str(caught.value) == message


def test_usage_shows_required_arguments_bare_and_optional_ones_in_brackets() -> None:
    assert usage("/mcp__s__review", REVIEW) == "/mcp__s__review path [focus] style"


def test_prompt_commands_are_named_like_tools_and_stay_unique() -> None:
    known: Any = [
        ("my server", {"name": "a.b"}),
        ("my server", {"name": "a_b"}),
        ("x", {"name": "p"}),
    ]
    names = command_names(known)
    assert "/mcp__my_server__a_b" in names and "/mcp__x__p" in names
    assert names["/mcp__my_server__a_b"][1] == {"name": "a_b"}  # the exact name wins
    assert len(names) == 3


def test_a_listed_prompt_keeps_only_well_formed_fields() -> None:
    raw = {
        "name": "p",
        "title": 3,
        "description": "d",
        "arguments": [
            {"name": "a", "required": "yes"},
            {"required": True},
            {"name": "b", "required": True},
        ],
    }
    assert valid_prompt(raw, "s") == {
        "name": "p",
        "description": "d",
        "arguments": [{"name": "a"}, {"name": "b", "required": True}],
    }
    assert valid_prompt({"title": "nameless"}, "s") is None


def test_prompt_messages_become_text_with_resources_inline_and_binaries_described() -> None:
    text: Any = {"role": "user", "content": {"type": "text", "text": "hi"}}
    embedded: Any = {
        "role": "user",
        "content": {"type": "resource", "resource": {"uri": "a://1", "text": "body"}},
    }
    blob: Any = {
        "role": "user",
        "content": {
            "type": "resource",
            "resource": {"uri": "a://2", "mimeType": "x/y", "blob": "aGk="},
        },
    }
    image: Any = {
        "role": "user",
        "content": {"type": "image", "mimeType": "image/png", "data": "aGk="},
    }
    assert message_text(text) == "hi"
    assert message_text(embedded) == "[resource a://1]\nbody"
    assert message_text(blob) == "[binary resource a://2: x/y, 2 bytes]"
    blob["content"]["resource"]["mimeType"] = "application/json; charset=utf-8"
    assert message_text(blob) == "[resource a://2]\nhi"
    assert message_text(image) == "[image: image/png, 2 bytes]"


def test_templates_name_their_variables_and_fill_the_simple_ones() -> None:
    template = "file:///{dir}/{name}{?rev,mode}"
    assert template_variables(template) == ["dir", "name", "rev", "mode"]
    assert template_prefix(template) == "file:///"
    assert expand_template(template, {"dir": "src"}) == "file:///src/{name}{?rev,mode}"
