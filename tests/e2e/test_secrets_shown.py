"""Status, errors and ``-v`` logs of the real ``cat-code`` show entries as written, masked.

A secret a ``${VAR}`` supplies is never shown expanded — in a URL's path (connection
errors name the URL as written), in a scheme-less URL (the config error quotes it as
written), in a command line logged by ``-v``, in the program or working folder a spawn
error names (``command not found: /opt/${TOK}``) — and a literal credential on a command
line (``--header 'Authorization: Bearer …'``) is masked by ``mcp list`` and ``mcp get``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
SECRETS = {"KEY": "k-SECRETKEY", "TOK": "tok-SECRET", "HOST": "example.com"}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there now: a connection is refused


def cat_code(
    tmp_path: Path, servers: dict[str, Any], *args: str
) -> subprocess.CompletedProcess[str]:
    """``cat-code ARGS`` with ``servers`` as the user's config and the secrets set."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    env = {**os.environ, **SECRETS, "CAT_CODE_HOME": str(home)}
    return subprocess.run(
        [CAT_CODE, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=60, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def shown(run: subprocess.CompletedProcess[str]) -> str:
    return run.stdout + run.stderr


def test_a_key_in_a_urls_path_is_named_as_written_in_the_connection_error(
    tmp_path: Path,
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/api/mcp/${{KEY}}/sse"
    servers = {"remote": {"type": "sse", "url": url}}

    listing = cat_code(tmp_path, servers, "-v", "mcp", "list")
    got = cat_code(tmp_path, servers, "mcp", "get", "remote")

    for run in (listing, got):
        assert "k-SECRETKEY" not in shown(run)
        assert "connection refused by http://127.0.0.1:" in run.stdout
        assert "/api/mcp/${KEY}/sse (is the server running?)" in run.stdout


def test_a_scheme_less_url_is_quoted_as_written_in_the_config_error(tmp_path: Path) -> None:
    servers = {"remote": {"url": "${HOST}/mcp?api_key=${KEY}"}}

    run = cat_code(tmp_path, servers, "-v", "mcp", "list")

    assert run.returncode == 1
    assert "k-SECRETKEY" not in shown(run) and "example.com" not in shown(run)
    assert "must start with http:// or https://, got '${HOST}/mcp?api_key=${KEY}'" in run.stdout


def test_verbose_logs_the_command_line_as_written_not_expanded(tmp_path: Path) -> None:
    servers = {"tool": {"command": "sh", "args": ["-c", "exit 3", "sh", "--token", "${TOK}"]}}

    run = cat_code(tmp_path, servers, "-v", "mcp", "list")

    assert "tok-SECRET" not in shown(run)
    assert "started pid" in run.stderr and "--token ${TOK}" in run.stderr


def test_a_literal_bearer_token_in_the_arguments_is_masked_by_list_and_get(
    tmp_path: Path,
) -> None:
    args = ["-c", "exit 3", "sh", "--header", "Authorization: Bearer ghp_literal123"]
    servers = {"gh": {"command": "sh", "args": args}}

    listing = cat_code(tmp_path, servers, "-v", "mcp", "list")
    got = cat_code(tmp_path, servers, "-v", "mcp", "get", "gh")
    as_json = cat_code(tmp_path, servers, "mcp", "get", "gh", "--json")

    for run in (listing, got, as_json):
        assert "ghp_literal123" not in shown(run)
    assert "--header 'Authorization: ****'" in listing.stdout
    assert "--header 'Authorization: ****'" in got.stdout


def test_spawn_errors_name_the_program_and_folder_as_written_not_expanded(
    tmp_path: Path,
) -> None:
    (tmp_path / "tok-SECRET").write_text("not a program")  # there, but not executable
    servers = {
        "missing": {"command": "/nonexistent/${TOK}"},
        "denied": {"command": str(tmp_path / "${TOK}")},
        "nowhere": {"command": "sh", "args": ["-c", "true"], "cwd": "/nonexistent/${TOK}"},
    }

    listing = cat_code(tmp_path, servers, "mcp", "list")
    verbose = cat_code(tmp_path, servers, "-v", "mcp", "list")
    as_json = cat_code(tmp_path, servers, "mcp", "list", "--json")

    for run in (listing, verbose, as_json):
        assert run.returncode == 1
        assert "tok-SECRET" not in shown(run)
    errors = {entry["name"]: entry["error"] for entry in json.loads(as_json.stdout)}
    assert errors == {
        "missing": "command not found: /nonexistent/${TOK}",
        "denied": f"permission denied running {tmp_path}/${{TOK}}",
        "nowhere": "working directory does not exist: /nonexistent/${TOK}",
    }
    for run in (listing, verbose):
        assert "— command not found: /nonexistent/${TOK}" in run.stdout
    assert "missing: failed: command not found: /nonexistent/${TOK}" in verbose.stderr
