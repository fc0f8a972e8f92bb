"""``/mcp restart``, ``/mcp reload``, ``/mcp disable`` and ``/mcp enable`` in the real REPL on
a pty, with real servers and the scripted model API: processes start and stop as the
commands say, and the model sees the tools of a server the reload added.

Each server writes its pid to a file every time it starts (``exec`` keeps the pid), so
the test knows which process is which across restarts.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use, tool_results
from scripted.processes import ECHO_SERVER, REPO, alive, read_pid
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
PROMPT = "›"
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


def entry(folder: Path, name: str) -> dict[str, Any]:
    """The echo example server, writing its pid to ``NAME.pid`` first."""
    pidfile = shlex.quote(str(folder / f"{name}.pid"))
    script = (
        f"echo $$ > {pidfile}; exec {shlex.quote(sys.executable)} {shlex.quote(str(ECHO_SERVER))}"
    )
    return {"command": "sh", "args": ["-c", script]}


def write_config(path: Path, servers: dict[str, Any]) -> None:
    path.write_text(json.dumps({"mcpServers": servers}))


@pytest.fixture
def api() -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        yield server
    assert server.errors == []


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    started: list[Terminal] = []
    yield started
    for term in started:
        term.close()


def test_restart_reload_disable_and_enable_on_a_running_repl(
    tmp_path: Path, api: ScriptedModelApi, terminals: list[Terminal]
) -> None:
    def check_echo(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["content"] == "from two" and not result["is_error"]
        names = {tool["name"] for tool in request["tools"]}
        assert "mcp__two__echo" in names and "mcp__one__echo" not in names
        return anthropic_text("two answered")

    api.add(anthropic_tool_use("mcp__two__echo", {"text": "from two"}), check_echo)
    config = tmp_path / "mcp.json"
    write_config(config, {"one": entry(tmp_path, "one")})
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    term = Terminal(CAT_CODE, ["--mcp-config", str(config)], env=env, cwd=REPO)
    terminals.append(term)
    term.wait_for(PROMPT)
    term.wait_for("MCP: 1 server(s), 6 tool(s) registered")
    first = read_pid(tmp_path / "one.pid")

    # restart: a new process, the same tools.
    term.type("/mcp restart one")
    term.wait_for("Restarted one: 6 tool(s) registered.")
    second = read_pid(tmp_path / "one.pid")
    assert second != first and alive(second) and not alive(first)

    # reload: a server added to the file starts, the unchanged one goes on.
    write_config(config, {"one": entry(tmp_path, "one"), "two": entry(tmp_path, "two")})
    term.type("/mcp reload")
    term.wait_for("MCP config reloaded: 1 added (two), 1 unchanged")
    two = read_pid(tmp_path / "two.pid")
    assert alive(two) and read_pid(tmp_path / "one.pid") == second
    term.type("/mcp")
    term.wait_for("two  CONNECTED  6 tool(s)")

    # reload: a server removed from the file stops, and its tools go.
    write_config(config, {"two": entry(tmp_path, "two")})
    term.type("/mcp reload")
    term.wait_for("MCP config reloaded: 1 removed (one), 1 unchanged")
    assert not alive(second) and alive(two)

    # A file saved half-edited changes nothing.
    config.write_text('{"mcpServers": {"two": ')
    term.type("/mcp reload")
    term.wait_for("invalid JSON in MCP config")
    term.wait_for("MCP config not reloaded (nothing changed): fix it, then /mcp reload")
    assert alive(two)
    write_config(config, {"two": entry(tmp_path, "two")})

    term.type("use two's echo")
    term.wait_for("two answered")

    # disable and enable, for this session.
    term.type("/mcp disable two")
    term.wait_for("Disabled two for this session; its tools are gone.")
    assert not alive(two)
    term.type("/mcp")
    term.wait_for("two  DISABLED")
    term.type("/mcp enable two")
    term.wait_for("Enabled two: 6 tool(s) registered.")
    enabled = read_pid(tmp_path / "two.pid")
    assert enabled != two and alive(enabled)
    assert json.loads(config.read_text()) == {"mcpServers": {"two": entry(tmp_path, "two")}}

    term.type("/exit")
    assert term.wait_for_exit() == 0
    assert not alive(enabled)
    assert len(api.requests) == 2


def test_a_server_that_crashed_comes_back_on_the_next_call_and_mcp_counts_it(
    tmp_path: Path, terminals: list[Terminal]
) -> None:
    server = REPO / "tests" / "servers" / "misbehaving_server.py"
    config = tmp_path / "mcp.json"
    write_config(
        config,
        {"c": {"command": sys.executable, "args": [str(server), "--tools", "echo,crash"]}},
    )
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env["HOME"] = str(tmp_path)
    term = Terminal(CAT_CODE, ["--mcp-config", str(config)], env=env, cwd=REPO)
    terminals.append(term)
    term.wait_for("MCP: 1 server(s), 2 tool(s) registered")

    term.type('/mcp call mcp__c__crash {"code": 5, "message": "oh no"}')
    term.wait_for("→ Error: MCP tool 'mcp__c__crash' failed: server process exited")
    term.type("/mcp")
    term.wait_for("c  FAILED")
    term.type('/mcp call mcp__c__echo {"text": "back again"}')
    term.wait_for('⏺ mcp__c__echo {"text":"back again"} → back again')
    term.type("/mcp")
    term.wait_for("c  CONNECTED  2 tool(s)  (stdio: ")
    term.wait_for("restarted 1×")

    term.type("/exit")
    assert term.wait_for_exit() == 0
