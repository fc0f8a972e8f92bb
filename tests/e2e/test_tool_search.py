"""Tool search end to end: the real ``cat-code -p``, real stdio servers with 500 tools between
them, and the scripted model API, whose recorded request bodies say what the model was sent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from scripted.model_api import (
    ScriptedModelApi,
    anthropic_text,
    anthropic_tool_use,
    openai_text,
    openai_tool_call,
    tool_results,
)
from scripted.processes import ECHO_SERVER, REPO
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
CATALOG_SERVER = REPO / "tests" / "servers" / "catalog_server.py"
#: Built-in tools as -p registers them with MCP servers configured (the resource tools too).
BUILTINS = [
    *("shell", "read_file", "write_file", "edit_file", "grep", "glob", "job_output", "job_stop"),
    *("task_create", "task_update", "task_get", "task_list", "agent"),
    *("list_mcp_resources", "read_mcp_resource"),
]
ECHO_TOOLS = ["add", "echo", "fail", "reverse", "sleep", "word_count"]
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
    "CAT_CODE_TOOL_SEARCH",
)  # fmt: skip


def write_config(folder: Path) -> Path:
    """Two servers of 250 catalog tools each, and the echo server marked alwaysLoad."""
    servers = {
        "biz": {"command": sys.executable, "args": [str(CATALOG_SERVER), "0", "250"]},
        "ops": {"command": sys.executable, "args": [str(CATALOG_SERVER), "250", "250"]},
        "pinned": {"command": sys.executable, "args": [str(ECHO_SERVER)], "alwaysLoad": True},
    }
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def run_cat_code(tmp_path: Path, api: ScriptedModelApi, *args: str, **env: str) -> Any:
    environ = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    environ.update(HOME=str(tmp_path), **env)
    if "OPENAI_BASE_URL" not in env:
        environ.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    config = write_config(tmp_path)
    return subprocess.run(
        [CAT_CODE, "-p", *args, "--mcp-config", str(config)],
        cwd=REPO,
        env=environ,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def names(request: dict[str, Any]) -> list[str]:
    return [t["name"] for t in request["tools"]]


def test_the_model_finds_a_tool_among_500_with_search_tools_and_calls_it(
    tmp_path: Path,
) -> None:
    def search(request: dict[str, Any]) -> dict[str, Any]:
        return anthropic_tool_use("search_tools", {"query": "restore a backup"}, call_id="t1")

    def call_the_best(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["tool_use_id"] == "t1" and result["is_error"] is False
        best = json.loads(result["content"].partition("\n")[2])[0]
        return anthropic_tool_use(best["name"], {"id": "b-1"}, call_id="t2")

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        return anthropic_text(f"{result['is_error']}: {result['content']}")

    with ScriptedModelApi([search, call_the_best, answer]) as api:
        run = run_cat_code(tmp_path, api, "restore backup b-1", "--allow-tool", "mcp__ops__*")

    assert api.errors == []
    assert run.returncode == 0, run.stderr
    assert run.stdout == 'False: restore_backup done: {"id": "b-1"}\n'
    first, second, third = api.requests
    # Built-ins and the alwaysLoad server's tools, then search_tools; none of the 500.
    assert names(first) == [*BUILTINS, *(f"mcp__pinned__{t}" for t in ECHO_TOOLS), "search_tools"]
    search_tool = first["tools"][-1]
    assert "500 more tools of MCP servers" in search_tool["description"]
    assert "biz (250), ops (250)" in search_tool["description"]
    assert search_tool["input_schema"]["required"] == ["query"]
    # The five found tools are sent from the next request on, with their full schemas.
    found = names(second)[len(names(first)) :]
    assert len(found) == 5 and "mcp__ops__restore_backup" in found
    restore = next(t for t in second["tools"] if t["name"] == "mcp__ops__restore_backup")
    assert restore["input_schema"]["required"] == ["id"]
    assert restore["description"].startswith("Restore an archived or deleted backup.")
    assert names(third) == names(second)
    assert '⏺ mcp__ops__restore_backup {"id":"b-1"}' in run.stderr


def test_search_off_sends_every_definition(tmp_path: Path) -> None:
    with ScriptedModelApi([anthropic_text("fine")]) as api:
        run = run_cat_code(tmp_path, api, "hi", CAT_CODE_TOOL_SEARCH="off")
    assert run.returncode == 0, run.stderr
    [request] = api.requests
    assert len(request["tools"]) == len(BUILTINS) + len(ECHO_TOOLS) + 500
    assert "search_tools" not in names(request)


def test_a_bad_mode_warns_and_auto_applies_on_the_openai_path(tmp_path: Path) -> None:
    def check(request: dict[str, Any]) -> dict[str, Any]:
        tool_message = request["messages"][-1]
        assert tool_message["role"] == "tool"
        assert tool_message["content"].startswith("1 tool(s) selected. You can call them now")
        return openai_text("found it")

    search = openai_tool_call(
        "search_tools", '{"query": "select:mcp__biz__get_invoice"}', call_id="c1"
    )
    with ScriptedModelApi([search, check]) as api:
        url = api.url + "/v1"
        run = run_cat_code(
            tmp_path, api, "hi", "--model", "openai:local", OPENAI_BASE_URL=url,
            CAT_CODE_TOOL_SEARCH="maybe",
        )  # fmt: skip
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    assert "CAT_CODE_TOOL_SEARCH='maybe' is not auto, on or off; using auto" in run.stderr
    first, second = ([t["function"]["name"] for t in r["tools"]] for r in api.requests)
    assert first[-1] == "search_tools" and len(first) == len(BUILTINS) + len(ECHO_TOOLS) + 1
    assert second == [*first, "mcp__biz__get_invoice"]


def test_tools_in_the_repl_says_search_is_on_and_clear_forgets_what_was_found(
    tmp_path: Path,
) -> None:
    select = anthropic_tool_use("search_tools", {"query": "select:mcp__biz__get_invoice"})
    with ScriptedModelApi([select, anthropic_text("loaded it")]) as api:
        environ = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
        environ.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=api.url)
        config = write_config(tmp_path)
        term = Terminal(CAT_CODE, ["--mcp-config", str(config)], env=environ, cwd=REPO)
        try:
            term.wait_for("MCP: 3 server(s), 506 tool(s) registered")
            term.type("/tools")
            term.wait_for("tool search: on (auto: MCP tool definitions ≈ ")
            term.wait_for(" tokens > 10% of 200,000)")
            term.wait_for("500 MCP tool(s) are sent only once search_tools finds them; 0 found")
            term.type("load the invoice tool")
            term.wait_for("⏺ search_tools")
            term.wait_for("loaded it")
            term.type("/tools")
            term.wait_for("search_tools finds them; 1 found in this conversation")
            term.type("/clear")
            term.wait_for("conversation cleared")
            term.type("/tools")
            term.wait_for("search_tools finds them; 0 found in this conversation")
            term.type("/exit")
            assert term.wait_for_exit() == 0
        finally:
            term.close()
    assert api.errors == []
    assert "mcp__biz__get_invoice" in names(api.requests[1])
