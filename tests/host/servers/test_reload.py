"""What a reload changes: entries compared by value, whichever file they came from."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from cat_code.host.config.load import HttpServerConfig, McpConfig, StdioServerConfig
from cat_code.host.servers.reload import ReloadPlan, plan_reload, same_entry

A = Path("a.json")
B = Path("b.json")


def stdio(name: str, source: Path = A, **fields: Any) -> StdioServerConfig:
    return StdioServerConfig(name=name, source=source, command="srv", **fields)


def test_an_entry_moved_to_another_file_unchanged_is_the_same_server() -> None:
    assert same_entry(stdio("x", A), stdio("x", B))
    assert not same_entry(stdio("x"), stdio("x", args=("--flag",)))
    assert not same_entry(stdio("x"), stdio("x", env={"K": "v"}))
    assert not same_entry(stdio("x"), stdio("x", disabled=True))
    url = HttpServerConfig(name="x", source=A, url="http://127.0.0.1:1/mcp")
    assert not same_entry(stdio("x"), url)
    assert not same_entry(url, dataclasses.replace(url, headers={"X-Key": "2"}))


def test_the_plan_sorts_every_name_into_one_kind_in_config_order() -> None:
    running = [stdio("keep"), stdio("change"), stdio("drop"), stdio("move")]
    config = McpConfig(
        servers=[stdio("new"), stdio("change", args=("-v",)), stdio("keep"), stdio("move", B)]
    )

    plan = plan_reload(running, config)

    assert plan == ReloadPlan(
        added=["new"], removed=["drop"], changed=["change"], unchanged=["keep", "move"]
    )
    assert plan.summary() == ("1 added (new), 1 removed (drop), 1 restarted (change), 2 unchanged")
    assert not plan.nothing


def test_the_same_config_again_changes_nothing() -> None:
    running = [stdio("a"), stdio("b")]
    plan = plan_reload(running, McpConfig(servers=list(running)))
    assert plan.nothing and plan.summary() == "2 unchanged"
