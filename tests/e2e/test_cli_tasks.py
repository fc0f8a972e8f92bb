"""Tasks end to end: ``cat-code mcp call`` on a tool the server runs as a task
(``tests/servers/task_server.py``), in both shapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scripted.processes import REPO

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
SERVER = REPO / "tests" / "servers" / "task_server.py"


@pytest.mark.parametrize("mode", ["extension", "experimental"])
def test_mcp_call_waits_for_a_task_past_the_request_timeout_and_shows_its_status(
    tmp_path: Path, mode: str
) -> None:
    # Four polls, at least 250 ms apart (the floor), outlast the 200 ms any one request may take.
    entry = {"command": sys.executable, "args": [str(SERVER), mode], "requestTimeoutMs": 200}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"tasks": entry}}))
    run = subprocess.run(
        [CAT_CODE, "mcp", "call", "mcp__tasks__count_to", '{"n": 4}', "--mcp-config", str(config)],
        cwd=REPO,
        env={**os.environ, "HOME": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "hello after 4\n"
    assert "progress 1: task working: step 1 of 4\n" in run.stderr
    assert "progress 4: task completed\n" in run.stderr
