"""The real ``cat-code mcp`` command with per-server tool settings and very long results:
``mcp call`` prints a 2 MB result whole; ``mcp tools`` and ``mcp list`` show only the
tools ``includeTools`` / ``excludeTools`` let through."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import cat_code

OUTPUT_SERVER = Path(__file__).resolve().parent.parent / "servers" / "output_server.py"
SRC = str(Path(cat_code.__file__).resolve().parent.parent)


def run_cat_code(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``cat-code ARGS`` to completion (bounded), with the sources under test first on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "cat_code", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def config_file(tmp_path: Path, **fields: Any) -> str:
    path = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": [str(OUTPUT_SERVER)], **fields}
    path.write_text(json.dumps({"mcpServers": {"out": server}}))
    return str(path)


def test_mcp_call_prints_a_2_mb_result_whole_and_saves_nothing(
    tmp_path: Path, cat_code_home: Path
) -> None:
    config = config_file(tmp_path, maxOutputTokens=100)
    arguments = json.dumps({"chars": 2_000_000, "width": 80})

    run = run_cat_code("--mcp-config", config, "mcp", "call", "mcp__out__text", arguments,
                       cwd=tmp_path)  # fmt: skip

    assert run.returncode == 0, run.stderr[-2000:]
    printed = run.stdout.removesuffix("\n")
    assert len(printed) == 2_000_000 and printed.endswith("END")
    assert printed.startswith("line 1 yyy") and "line 12500 yyy" in printed
    assert not (cat_code_home / "tool-output").exists()


def test_mcp_tools_and_list_show_only_the_tools_the_filters_let_through(tmp_path: Path) -> None:
    config = config_file(tmp_path, includeTools=["*e*"], excludeTools=["sleep", "no-such-*"])

    tools = run_cat_code("--mcp-config", config, "mcp", "tools", cwd=tmp_path)
    listing = run_cat_code("--mcp-config", config, "mcp", "list", cwd=tmp_path)
    excluded = run_cat_code("--mcp-config", config, "mcp", "call", "mcp__out__sleep", "{}",
                            cwd=tmp_path)  # fmt: skip

    assert tools.returncode == 0, tools.stderr
    names = [line.split()[0] for line in tools.stdout.splitlines()[1:]]
    assert names == ["mcp__out__generous", "mcp__out__image", "mcp__out__text"]
    assert "excludeTools pattern 'no-such-*' matches none of its 5 tool(s)" in tools.stderr
    assert listing.returncode == 0 and "CONNECTED  3 tool(s)" in listing.stdout
    assert excluded.returncode == 2 and "unknown tool 'mcp__out__sleep'" in excluded.stderr
