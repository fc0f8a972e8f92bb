"""Roots and instructions in the REPL on a pty: the real ``@modelcontextprotocol/
server-filesystem`` started with no directory works in the working directory only, then
in a folder added with ``/add-dir``; an SDK server's instructions are in the system
prompt the model API receives; ``--add-dir`` reaches server-everything through
``cat-code mcp call``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EVERYTHING_SERVER, NODE_MODULES
from scripted.model_api import ScriptedModelApi, anthropic_text
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
SERVERS = Path(__file__).resolve().parent.parent / "servers"
FILESYSTEM_SERVER = NODE_MODULES / "@modelcontextprotocol/server-filesystem/dist/index.js"
PROMPT = "›"
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


def environment(tmp_path: Path, api: ScriptedModelApi | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env["HOME"] = str(tmp_path)
    if api is not None:
        env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    # The REPL runs in another folder: a relative PYTHONPATH (src) must still find our code.
    paths = env.get("PYTHONPATH", "").split(os.pathsep)
    env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) for p in paths if p)
    return env


@pytest.mark.skipif(
    not (shutil.which("node") and FILESYSTEM_SERVER.exists()),
    reason="server-filesystem is not installed",
)
def test_add_dir_lets_server_filesystem_into_a_second_folder_and_instructions_reach_the_model(
    tmp_path: Path,
) -> None:
    project, other = tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    (project / "a.txt").write_text("in the project")
    (other / "b.txt").write_text("added later")
    notes = tmp_path / "notes.txt"
    notes.write_text("Always cite the file you read.")
    config = tmp_path / "mcp.json"
    docs = [str(SERVERS / "instructions_server.py"), str(notes)]
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "fs": {"command": shutil.which("node"), "args": [str(FILESYSTEM_SERVER)]},
                    "docs": {"command": sys.executable, "args": docs},
                }
            }
        )
    )

    def check_system(request: dict[str, Any]) -> dict[str, Any]:
        system = request["system"]
        text = system if isinstance(system, str) else " ".join(b["text"] for b in system)
        assert "Instructions from MCP server 'docs':\nAlways cite the file you read." in text
        return anthropic_text("noted")

    with ScriptedModelApi([check_system]) as api:
        term = Terminal(
            CAT_CODE, ["--mcp-config", str(config)], env=environment(tmp_path, api), cwd=project
        )
        try:
            term.wait_for("MCP: 2 server(s)")
            term.type("hello")
            term.wait_for("noted")

            read_b = json.dumps({"path": "../other/b.txt"})  # the server's cwd is ours
            term.type(f"/mcp call mcp__fs__read_text_file {read_b}")
            term.wait_for("→ Access")  # "Access denied - path outside allowed directories"
            term.type(f"/mcp call mcp__fs__read_text_file {json.dumps({'path': 'a.txt'})}")
            term.wait_for("→ in the project")

            term.type("/add-dir ../other")
            # The console wraps long lines at spaces: compare with whitespace collapsed.
            shown = " ".join(term.wait_for("root(s)").split()) + " root(s)"
            assert f"added {other.resolve()} as a root; MCP servers now have 2 root(s)" in shown
            # The server asks for the new list when told, and takes it in the background:
            # ask it (bounded) until it lists the folder.
            for _ in range(50):
                term.type("/mcp call mcp__fs__list_allowed_directories")
                term.wait_for("→ Allowed directories:")
                if str(other.resolve()) in term.wait_for(PROMPT):
                    break
            else:
                raise AssertionError("the server never allowed the added folder")
            term.type(f"/mcp call mcp__fs__read_text_file {read_b}")
            term.wait_for("→ added later")

            term.type("/add-dir missing")
            term.wait_for("/add-dir: missing: no such directory")
            term.type("/exit")
            assert term.wait_for_exit() == 0
        finally:
            term.close()
        assert api.errors == []


@pytest.mark.skipif(not EVERYTHING_SERVER.exists(), reason="server-everything is not installed")
def test_add_dir_on_the_command_line_reaches_the_server_with_the_mcp_commands(
    tmp_path: Path,
) -> None:
    project, docs = tmp_path / "project", tmp_path / "docs"
    project.mkdir()
    docs.mkdir()
    config = tmp_path / "mcp.json"
    entry = {"command": shutil.which("node"), "args": [str(EVERYTHING_SERVER), "stdio"]}
    config.write_text(json.dumps({"mcpServers": {"ev": entry}}))
    env = environment(tmp_path)
    done = subprocess.run(
        [CAT_CODE, "--add-dir", "../docs", "mcp", "--mcp-config", str(config), "call",
         "mcp__ev__get-roots-list"],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Current MCP Roots (2 total)" in done.stdout
    assert f"URI: {project.resolve().as_uri()}\n" in done.stdout
    assert f"URI: {docs.resolve().as_uri()}\n" in done.stdout


@pytest.mark.skipif(
    not (shutil.which("node") and FILESYSTEM_SERVER.exists()),
    reason="server-filesystem is not installed",
)
def test_mcp_call_works_in_the_roots_of_server_filesystem_started_without_a_directory(
    tmp_path: Path,
) -> None:
    """Review 12 finding 3: the server takes our roots in the background after it asked
    for them; the first tool call must not race that (it was "Access denied" about one run
    in two). Each run is a new process and a new server: every one must pass."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.txt").write_text("in the project")
    config = tmp_path / "mcp.json"
    entry = {"command": shutil.which("node"), "args": [str(FILESYSTEM_SERVER)]}
    config.write_text(json.dumps({"mcpServers": {"fs": entry}}))
    env = environment(tmp_path)
    for run in range(4):
        done = subprocess.run(
            [CAT_CODE, "mcp", "--mcp-config", str(config), "call", "mcp__fs__read_text_file",
             json.dumps({"path": "a.txt"})],
            cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert (done.returncode, done.stdout.strip()) == (0, "in the project"), (run, done)


@pytest.mark.skipif(not EVERYTHING_SERVER.exists(), reason="server-everything is not installed")
def test_add_dir_is_taken_after_the_mcp_subcommands_too_and_the_levels_add_up(
    tmp_path: Path,
) -> None:
    """Review 12 finding 4: ``mcp call --add-dir D`` was an unrecognized argument."""
    project = tmp_path / "project"
    folders = [tmp_path / name for name in ("top", "mcp-level", "call-level")]
    for folder in [project, *folders]:
        folder.mkdir()
    config = tmp_path / "mcp.json"
    entry = {"command": shutil.which("node"), "args": [str(EVERYTHING_SERVER), "stdio"]}
    config.write_text(json.dumps({"mcpServers": {"ev": entry}}))
    done = subprocess.run(
        [CAT_CODE, "--add-dir", "../top", "mcp", "--add-dir", "../mcp-level",
         "--mcp-config", str(config), "call", "mcp__ev__get-roots-list",
         "--add-dir", "../call-level"],
        cwd=project, env=environment(tmp_path), stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Current MCP Roots (4 total)" in done.stdout
    listed = [line.split("URI: ", 1)[1] for line in done.stdout.splitlines() if "URI: " in line]
    assert listed == [p.resolve().as_uri() for p in [project, *folders]]

    bad = subprocess.run(
        [CAT_CODE, "mcp", "list", "--add-dir", "../missing"],
        cwd=project, env=environment(tmp_path), stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "argument --add-dir: ../missing: no such directory" in bad.stderr
