"""The command line comes down as one frozen `Options`, built from argparse's namespace."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from cat_code.cli.options import Options, from_namespace
from cat_code.cli.parser import build_parser
from cat_code.cli.verbs.base import merge_levels


def parsed(*argv: str) -> Options:
    args = build_parser().parse_args(list(argv))
    merge_levels(args)
    return from_namespace(args)


@pytest.mark.parametrize(
    "argv",
    [
        (),
        ("-p", "hi", "--output-format", "json", "--allow-tool", "a*", "--max-turns", "3"),
        ("sessions", "--json"),
        ("project",),
        ("project", "approve", "rules"),
        ("mcp", "list", "--json"),
        ("mcp", "tools", "echo"),
        ("mcp", "call", "mcp__echo__echo", "{}"),
        ("mcp", "login", "docs", "--no-browser"),
        ("mcp", "logout", "docs"),
        ("mcp", "approve", "--all"),
        ("mcp", "reject", "a", "b"),
        ("mcp", "add", "-s", "user", "echo", "--", "python3", "x.py"),
        ("mcp", "remove", "echo", "--scope", "project"),
        ("mcp", "get", "echo", "--json"),
        ("mcp", "enable", "echo"),
        ("mcp", "disable", "echo"),
        ("mcp", "import", "--from", "cursor", "--dry-run"),
        ("mcp", "resources", "echo"),
        ("mcp", "read", "echo", "file:///a"),
        ("mcp", "prompts"),
        ("mcp", "skills", "--json"),
    ],
)
def test_every_verbs_command_line_becomes_options_with_its_run_function(
    argv: tuple[str, ...],
) -> None:
    options = parsed(*argv)
    assert (options.run is None) == (not argv or argv[0] == "-p")


def test_common_options_given_at_two_levels_add_up_in_the_options(tmp_path: Path) -> None:
    options = parsed("-v", "--mcp-config", "a.json", "mcp", "-v", "list", "--mcp-config", "b.json")
    assert options.verbose == 2 and options.mcp_config == ("a.json", "b.json")
    assert options.config_paths == [Path("a.json"), Path("b.json")]


def test_options_are_frozen_and_lists_come_as_tuples() -> None:
    options = parsed("--allow-tool", "x", "--allow-tool", "y")
    assert options.allow_tool == ("x", "y")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.yes = True  # type: ignore[misc]


def test_a_parser_argument_without_an_options_field_is_refused() -> None:
    with pytest.raises(TypeError, match="surprise"):
        from_namespace(argparse.Namespace(surprise=1))
