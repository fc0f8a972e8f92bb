"""The real ``cat-code mcp`` command, run as a process, against real MCP servers over stdio:
the bundled ``examples/echo_server.py`` and the npm ``@modelcontextprotocol/server-everything``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ECHO_SERVER, EVERYTHING_SERVER, REPO, node_available

SERVERS = Path(__file__).resolve().parent.parent / "servers"

needs_everything = pytest.mark.skipif(
    not node_available(),
    reason="node or node_modules/@modelcontextprotocol/server-everything is missing "
    "(run `npm ci` at the repository root; CI installs it)",
)


def cat_code(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``cat-code ARGS`` to completion (bounded) and return what it printed."""
    return subprocess.run(
        [sys.executable, "-m", "cat_code", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def config_file(path: Path, servers: dict[str, Any]) -> str:
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


ECHO = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
EVERYTHING = {"command": "node", "args": [str(EVERYTHING_SERVER), "stdio"]}


@pytest.fixture
def echo_config(tmp_path: Path) -> str:
    return config_file(tmp_path / "echo.json", {"echo": ECHO})


# -- mcp list ----------------------------------------------------------------------------


def test_mcp_list_prints_every_server_in_aligned_columns(tmp_path: Path) -> None:
    config = config_file(tmp_path / "mcp.json", {"echo": ECHO, "another-echo": ECHO})

    run = cat_code("--mcp-config", config, "mcp", "list", cwd=tmp_path)

    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "MCP servers:"
    target = f"{sys.executable} {ECHO_SERVER}"
    assert lines[1:] == [
        f"  echo          CONNECTED  6 tool(s)  (stdio: {target})",
        f"  another-echo  CONNECTED  6 tool(s)  (stdio: {target})",
    ]


def test_mcp_list_shows_a_broken_server_as_failed_with_its_reason_and_exits_1(
    tmp_path: Path,
) -> None:
    config = config_file(tmp_path / "mcp.json", {
        "echo": ECHO,
        "broken": {"command": "./nope-not-here"},
        "crashing": {"command": sys.executable,
                     "args": [str(SERVERS / "misbehaving_server.py"), "--exit-at-start", "3"]},
        "unset": {"command": "${CAT_CODE_TEST_UNSET_VAR}"},
        "nothing": {"args": ["--x"]},
    })  # fmt: skip

    run = cat_code("--mcp-config", config, "mcp", "list", cwd=tmp_path)

    assert run.returncode == 1
    lines = {line.split()[0]: line for line in run.stdout.splitlines()[1:] if line[2:3] != " "}
    assert re.match(r"  echo +CONNECTED +6 tool\(s\)", lines["echo"])
    assert re.match(r"  broken +FAILED +\(stdio: \./nope-not-here\) — ", lines["broken"])
    assert lines["broken"].endswith("command not found: ./nope-not-here")
    assert "exited with code 3" in lines["crashing"]
    assert "fatal: cannot start (exit 3)" in run.stdout  # the stderr tail, for the operator
    assert "FAILED" in lines["unset"] and "CAT_CODE_TEST_UNSET_VAR" in lines["unset"]
    assert re.match(r"  nothing +FAILED +\S+: server 'nothing': needs either", lines["nothing"])
    # Columns line up: every state starts at the same column.
    state_columns = {line.index(s) for line in lines.values() for s in ("CONNECTED", "FAILED")
                     if s in line}  # fmt: skip
    assert len(state_columns) == 1


def test_mcp_list_json_has_the_documented_fields(tmp_path: Path) -> None:
    config = config_file(tmp_path / "mcp.json", {"echo": ECHO, "broken": {"command": "./nope"}})

    run = cat_code("--mcp-config", config, "mcp", "list", "--json", cwd=tmp_path)

    assert run.returncode == 1
    by_name = {s["name"]: s for s in json.loads(run.stdout)}
    echo, broken = by_name["echo"], by_name["broken"]
    assert {k: echo[k] for k in ("state", "tools", "transport", "error", "protocolVersion")} == {
        "state": "CONNECTED", "tools": 6, "transport": "stdio", "error": None,
        "protocolVersion": "2025-11-25",
    }  # fmt: skip
    assert echo["target"] == f"{sys.executable} {ECHO_SERVER}"
    assert broken["state"] == "FAILED"
    assert broken["tools"] == 0
    assert broken["error"] == "command not found: ./nope"
    assert (broken["transport"], broken["target"]) == ("stdio", "./nope")


def test_mcp_list_with_no_servers_says_so(tmp_path: Path) -> None:
    run = cat_code("mcp", "list", cwd=tmp_path)
    assert run.returncode == 0
    assert run.stdout.startswith("MCP servers: none configured")


def test_mcp_list_with_no_servers_names_the_files_it_read_as_the_place_to_add_them(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "team.json"
    empty.write_text('{"mcpServers": {}}')
    run = cat_code("--mcp-config", str(empty), "mcp", "list", cwd=tmp_path)
    assert run.returncode == 0
    assert f"add servers to {empty}, in the" in run.stdout
    assert ".cat-code" not in run.stdout


def test_an_unparseable_config_file_is_a_warning_and_the_program_carries_on(
    tmp_path: Path,
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {\n  "a": }\n}')
    good = config_file(tmp_path / "good.json", {"echo": ECHO})

    run = cat_code("--mcp-config", str(broken), "--mcp-config", good, "mcp", "list", cwd=tmp_path)

    assert run.returncode == 0
    assert f"{broken}:2:" in run.stderr
    assert "echo" in run.stdout and "CONNECTED" in run.stdout


def test_mcp_list_with_only_an_unreadable_config_says_so_and_exits_1(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {\n  "a": }\n}')

    run = cat_code("--mcp-config", str(broken), "mcp", "list", cwd=tmp_path)

    assert run.returncode == 1
    assert f"{broken}:2:" in run.stderr
    assert run.stdout == (
        f"MCP servers: none loaded — could not read {broken} (see the warning above)\n"
    )


def test_the_default_config_files_are_read_and_a_project_entry_never_takes_a_users_name(
    tmp_path: Path, cat_code_home: Path
) -> None:
    config_file(cat_code_home / "mcp.json", {"shared": {"command": "./user-version"}, "user": ECHO})
    config_file(tmp_path / ".mcp.json", {"shared": ECHO, "project": ECHO})

    run = cat_code("mcp", "list", "--json", "--trust-project", cwd=tmp_path)

    by_name = {s["name"]: s for s in json.loads(run.stdout)}
    assert by_name["shared"]["state"] == "FAILED"  # the user's entry, not the project's
    assert by_name["shared"]["target"] == "./user-version"
    assert by_name["user"]["state"] == "CONNECTED"
    assert by_name["project"]["state"] == "CONNECTED"
    assert "project server 'shared' is not used" in run.stderr
    assert run.returncode == 1


def test_verbose_logging_shows_server_stderr_on_our_stderr(
    tmp_path: Path, echo_config: str
) -> None:
    run = cat_code("-v", "--mcp-config", echo_config, "mcp", "list", cwd=tmp_path)
    assert run.returncode == 0
    assert "echo server ready" in run.stderr
    assert "echo server ready" not in run.stdout


def test_verbose_logging_shows_the_mcp_traffic_and_not_asyncios_selector(
    tmp_path: Path, echo_config: str
) -> None:
    run = cat_code("-v", "--mcp-config", echo_config, "mcp", "list", cwd=tmp_path)
    assert run.returncode == 0
    # The era probe goes first; the echo server knows only the handshake.
    assert 'echo → {"jsonrpc":"2.0","id":1,"method":"server/discover"' in run.stderr
    assert "echo: era handshake (error -32601)" in run.stderr
    assert 'echo → {"jsonrpc":"2.0","id":2,"method":"initialize"' in run.stderr
    assert '"method":"tools/list"' in run.stderr
    assert "Using selector" not in run.stderr


# -- --mcp-config anywhere ---------------------------------------------------------------


@pytest.mark.parametrize(
    "layout",
    [
        ["--mcp-config", "{c}", "mcp", "list"],
        ["mcp", "--mcp-config", "{c}", "list"],
        ["mcp", "list", "--mcp-config", "{c}"],
    ],
)
def test_mcp_config_works_before_and_after_the_subcommand(
    tmp_path: Path, echo_config: str, layout: list[str]
) -> None:
    run = cat_code(*(a.format(c=echo_config) for a in layout), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "  echo  CONNECTED" in run.stdout


def test_mcp_config_given_both_before_and_after_the_subcommand_uses_every_file(
    tmp_path: Path,
) -> None:
    first = config_file(tmp_path / "first.json", {"first": ECHO})
    second = config_file(tmp_path / "second.json", {"second": ECHO})
    third = config_file(tmp_path / "third.json", {"third": ECHO})

    run = cat_code(
        "--mcp-config", first, "mcp", "--mcp-config", second, "list", "--mcp-config", third,
        "--json", cwd=tmp_path,
    )  # fmt: skip

    assert run.returncode == 0, run.stderr
    assert [s["name"] for s in json.loads(run.stdout)] == ["first", "second", "third"]


# -- mcp tools ---------------------------------------------------------------------------


def test_mcp_tools_prints_one_aligned_line_per_tool(tmp_path: Path, echo_config: str) -> None:
    run = cat_code("mcp", "tools", "--mcp-config", echo_config, cwd=tmp_path)

    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "MCP tools:"
    assert "  mcp__echo__echo        Echo back the input text" in lines
    assert len(lines) == 7
    columns = {m.start(2) for line in lines[1:] if (m := re.match(r"  (\S+) +(\S)", line))}
    assert len(columns) == 1  # the descriptions line up


def test_mcp_tools_of_one_server(tmp_path: Path) -> None:
    config = config_file(tmp_path / "mcp.json", {"echo": ECHO, "other": ECHO})

    run = cat_code("--mcp-config", config, "mcp", "tools", "other", cwd=tmp_path)

    assert run.returncode == 0, run.stderr
    names = [line.split()[0] for line in run.stdout.splitlines()[1:]]
    assert names and all(n.startswith("mcp__other__") for n in names)


def test_mcp_tools_lists_the_good_servers_and_exits_1_when_one_failed(tmp_path: Path) -> None:
    config = config_file(tmp_path / "mcp.json", {"echo": ECHO, "broken": {"command": "./nope"}})
    run = cat_code("--mcp-config", config, "mcp", "tools", cwd=tmp_path)
    assert run.returncode == 1
    assert "mcp__echo__echo" in run.stdout
    assert "MCP server 'broken' failed: command not found: ./nope" in run.stderr


def test_mcp_tools_of_an_unknown_server_is_a_usage_error(tmp_path: Path, echo_config: str) -> None:
    run = cat_code("--mcp-config", echo_config, "mcp", "tools", "nope", cwd=tmp_path)
    assert run.returncode == 2
    assert "nope" in run.stderr and "echo" in run.stderr


def test_mcp_tools_json_has_the_documented_fields(tmp_path: Path, echo_config: str) -> None:
    run = cat_code("--mcp-config", echo_config, "mcp", "tools", "--json", cwd=tmp_path)

    assert run.returncode == 0, run.stderr
    tools = {t["name"]: t for t in json.loads(run.stdout)}
    echo = tools["mcp__echo__echo"]
    assert echo == {
        "name": "mcp__echo__echo",
        "server": "echo",
        "tool": "echo",
        "description": "Echo back the input text",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to echo"}},
            "required": ["text"],
        },
        "readOnly": True,
    }
    assert tools["mcp__echo__sleep"]["readOnly"] is False


# -- mcp call ----------------------------------------------------------------------------


def test_mcp_call_prints_the_result_and_exits_0(tmp_path: Path, echo_config: str) -> None:
    run = cat_code(
        "--mcp-config", echo_config, "mcp", "call", "mcp__echo__echo", '{"text": "hi there"}',
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout == "hi there\n"


def test_mcp_call_json_prints_the_raw_result(tmp_path: Path, echo_config: str) -> None:
    run = cat_code(
        "mcp", "call", "mcp__echo__add", '{"a": 2, "b": 3}', "--json",
        "--mcp-config", echo_config, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {
        "content": [{"type": "text", "text": "5"}],
        "structuredContent": {"sum": 5},
    }


def test_mcp_call_of_a_tool_that_reports_an_error_exits_1(tmp_path: Path, echo_config: str) -> None:
    run = cat_code("--mcp-config", echo_config, "mcp", "call", "mcp__echo__fail", cwd=tmp_path)
    assert run.returncode == 1
    assert run.stdout == "this tool always fails\n"


def test_mcp_call_that_times_out_exits_1(tmp_path: Path) -> None:
    config = config_file(tmp_path / "mcp.json", {"echo": {**ECHO, "requestTimeoutMs": 200}})
    run = cat_code(
        "--mcp-config", config, "mcp", "call", "mcp__echo__sleep", '{"seconds": 30}', cwd=tmp_path
    )
    assert run.returncode == 1
    assert "Error: MCP tool 'mcp__echo__sleep' failed: " in run.stderr
    assert "timed out" in run.stderr


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("mcp__echo__nope", "{}", "unknown tool 'mcp__echo__nope'"),
        ("mcp__elsewhere__echo", "{}", "unknown tool 'mcp__elsewhere__echo'"),
        ("mcp__echo__echo", '["text", "hi"]', "must be a JSON object"),
        ("mcp__echo__echo", '"hi"', "must be a JSON object"),
        ("mcp__echo__echo", "{text: hi}", "not valid JSON"),
        (
            "mcp__echo__echo",
            '{"text": "hi',
            "not valid JSON (Unterminated string starting at: column 10)",
        ),
    ],
)
def test_mcp_call_usage_errors_exit_2(
    tmp_path: Path, echo_config: str, tool: str, arguments: str, message: str
) -> None:
    run = cat_code("--mcp-config", echo_config, "mcp", "call", tool, arguments, cwd=tmp_path)
    assert run.returncode == 2
    assert message in run.stderr
    assert run.stdout == ""


@pytest.mark.parametrize("typed", ["echo", "echo__echo", "mcp__echo__ecko"])
def test_mcp_call_of_an_unknown_tool_suggests_the_registered_name_meant(
    tmp_path: Path, echo_config: str, typed: str
) -> None:
    run = cat_code("--mcp-config", echo_config, "mcp", "call", typed, cwd=tmp_path)
    assert run.returncode == 2
    assert f"unknown tool '{typed}' — did you mean 'mcp__echo__echo'?" in run.stderr


def test_mcp_call_of_a_tool_whose_server_failed_exits_1_with_the_reason(tmp_path: Path) -> None:
    config = config_file(tmp_path / "mcp.json", {"echo": ECHO, "broken": {"command": "./nope"}})
    run = cat_code("--mcp-config", config, "mcp", "call", "mcp__broken__echo", cwd=tmp_path)
    assert run.returncode == 1
    assert "MCP server 'broken' failed: command not found: ./nope" in run.stderr


def test_mcp_call_and_tools_of_a_disabled_server_say_it_is_disabled(tmp_path: Path) -> None:
    config = config_file(
        tmp_path / "mcp.json", {"echo": ECHO, "paused": {**ECHO, "disabled": True}}
    )
    enable = "MCP server 'paused' is disabled (cat-code mcp enable paused)"

    call = cat_code("--mcp-config", config, "mcp", "call", "mcp__paused__echo", "{}", cwd=tmp_path)
    assert call.returncode == 1
    assert call.stderr == f"cat-code: {enable}\n"

    tools = cat_code("--mcp-config", config, "mcp", "tools", "paused", cwd=tmp_path)
    assert tools.returncode == 1
    assert (tools.stdout, tools.stderr) == ("", f"cat-code: {enable}\n")


def test_the_bundled_example_config_works_from_the_repository_root() -> None:
    run = cat_code(
        "--mcp-config", "examples/mcp.json", "mcp", "call", "mcp__echo__echo", '{"text":"hi"}',
        cwd=REPO,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout == "hi\n"


def test_no_server_process_outlives_the_command(tmp_path: Path) -> None:
    pid_file, grandchild_file = tmp_path / "server.pid", tmp_path / "grandchild.pid"
    config = config_file(tmp_path / "mcp.json", {"stubborn": {
        "command": sys.executable,
        "args": [str(SERVERS / "misbehaving_server.py"), "--ignore-eof", "--pid-file",
                 str(pid_file), "--grandchild-pid-file", str(grandchild_file)],
    }})  # fmt: skip

    run = cat_code("--mcp-config", config, "mcp", "list", cwd=tmp_path)

    assert run.returncode == 0, run.stderr
    for pid in (int(pid_file.read_text()), int(grandchild_file.read_text())):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        stat = Path(f"/proc/{pid}/stat").read_text()
        assert stat[stat.rfind(")") + 2] == "Z", f"process {pid} outlived cat-code"


# -- against @modelcontextprotocol/server-everything -------------------------------------


@pytest.fixture
def everything_config(tmp_path: Path) -> str:
    return config_file(tmp_path / "everything.json", {"everything": EVERYTHING})


@needs_everything
def test_everything_server_lists_as_connected(tmp_path: Path, everything_config: str) -> None:
    run = cat_code("--mcp-config", everything_config, "mcp", "list", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (status,) = json.loads(run.stdout)
    assert status["state"] == "CONNECTED"
    assert status["protocolVersion"] == "2025-11-25"
    assert status["tools"] >= 5
    assert status["error"] is None


@needs_everything
def test_everything_server_tools_are_listed(tmp_path: Path, everything_config: str) -> None:
    run = cat_code("--mcp-config", everything_config, "mcp", "tools", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    tools = {t["name"]: t for t in json.loads(run.stdout)}
    echo = tools["mcp__everything__echo"]
    assert (echo["server"], echo["tool"]) == ("everything", "echo")
    assert "message" in echo["inputSchema"]["properties"]
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name) for name in tools)


@needs_everything
def test_everything_server_echo_is_called(tmp_path: Path, everything_config: str) -> None:
    run = cat_code(
        "--mcp-config", everything_config, "mcp", "call", "mcp__everything__echo",
        '{"message": "hello from cat-code"}', cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout == "Echo: hello from cat-code\n"


@needs_everything
def test_everything_server_image_is_flattened_to_a_placeholder(
    tmp_path: Path, everything_config: str
) -> None:
    run = cat_code(
        "--mcp-config", everything_config, "mcp", "call", "mcp__everything__get-tiny-image",
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert re.search(r"\[image: image/png, [0-9.]+ (bytes|KiB)\]", run.stdout)


@needs_everything
def test_everything_server_rejects_bad_arguments_with_exit_1(
    tmp_path: Path, everything_config: str
) -> None:
    run = cat_code(
        "--mcp-config", everything_config, "mcp", "call", "mcp__everything__get-sum",
        '{"a": "not a number"}', cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 1


# -- against mcp-server-time (the `mcp` SDK over stdio, 2026-07-28) ---------------------


def test_mcp_server_time_lists_as_a_modern_server(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "mcp-server-time"
    if not exe.exists():
        pytest.skip("mcp-server-time is not installed in this environment")
    config = config_file(tmp_path / "time.json", {"time": {"command": str(exe)}})
    run = cat_code("--mcp-config", config, "mcp", "list", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (status,) = json.loads(run.stdout)
    assert status["state"] == "CONNECTED"
    assert (status["protocolVersion"], status["era"]) == ("2026-07-28", "modern")
