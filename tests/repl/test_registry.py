"""The slash-command registry: help, Tab, "did you mean" and dispatch come from the
declarations alone."""

from __future__ import annotations

import pytest

from cat_code.repl.commands import REGISTRY, CommandContext, Show, handle_command
from cat_code.repl.commands.registry import CommandRegistry, SlashCommand, only_argument
from cat_code.tools.registry import ToolRegistry


def _echo(rest: str, ctx: CommandContext) -> Show:
    return Show(f"echo:{rest}")


def _pick(rest: str, ctx: CommandContext) -> Show:
    return Show(f"pick:{rest}")


@pytest.fixture
def registry() -> CommandRegistry:
    return CommandRegistry(
        [
            SlashCommand("/echo", "say it back", _echo, args="TEXT", aliases=("/say", "/!")),
            SlashCommand(
                "/echo pick", "pick one", _pick, args="NAME",
                complete=only_argument(lambda ctx: ["apple", "apricot", "banana"]),
            ),
        ]
    )  # fmt: skip


@pytest.fixture
def ctx() -> CommandContext:
    return CommandContext(registry=ToolRegistry([]))


def test_a_declared_command_is_dispatched_by_its_name_and_its_aliases(
    registry: CommandRegistry, ctx: CommandContext
) -> None:
    assert registry.handle("/echo hi there", ctx) == Show("echo:hi there")
    assert registry.handle("/SAY hi", ctx) == Show("echo:hi")
    assert registry.handle("/!", ctx) == Show("echo:")


def test_a_subcommand_is_found_before_its_parent(
    registry: CommandRegistry, ctx: CommandContext
) -> None:
    assert registry.handle("/echo pick  apple", ctx) == Show("pick:apple")
    assert registry.handle("/echo picky", ctx) == Show("echo:picky")


def test_help_has_one_aligned_line_per_declaration_in_declared_order(
    registry: CommandRegistry,
) -> None:
    lines = registry.help_text().splitlines()
    assert lines[1:3] == ["  /echo TEXT       say it back", "  /echo pick NAME  pick one"]


def test_tab_offers_names_word_aliases_subcommands_and_arguments(
    registry: CommandRegistry, ctx: CommandContext
) -> None:
    assert registry.complete("/", ctx) == ["/echo", "/say"]  # not the punctuation alias
    assert registry.complete("/echo p", ctx) == ["pick"]
    assert registry.complete("/echo pick ap", ctx) == ["apple", "apricot"]


def test_an_unknown_command_names_the_nearest_declared_one(
    registry: CommandRegistry, ctx: CommandContext
) -> None:
    shown = registry.handle("/ecko", ctx)
    assert shown == Show("unknown command /ecko — did you mean /echo? /help lists the commands",
                         "error")  # fmt: skip


def test_a_name_declared_twice_is_refused() -> None:
    twice = [SlashCommand("/a", "x", _echo), SlashCommand("/b", "y", _echo, aliases=("/a",))]
    with pytest.raises(ValueError, match="/a is declared twice"):
        CommandRegistry(twice)


def test_every_shipped_command_has_a_help_line_and_help_lists_it(ctx: CommandContext) -> None:
    text = handle_command("/help", ctx)
    assert isinstance(text, Show)
    for name, command in REGISTRY.commands.items():
        assert command.help and f"  {name}" in text.text
