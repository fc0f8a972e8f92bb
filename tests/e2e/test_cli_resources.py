"""The real ``cat-code mcp resources | read | prompts`` commands, run as processes against the
`mcp` SDK's resource server (2026-07-28 over stdio) and server-everything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EVERYTHING_SERVER, node_available
from scripted.model_api import ScriptedModelApi, openai_text, openai_tool_call

RESOURCE_SERVER = Path(__file__).resolve().parents[1] / "servers" / "resource_server.py"
NOTES = {"command": sys.executable, "args": [str(RESOURCE_SERVER)]}
EVERYTHING = {"command": "node", "args": [str(EVERYTHING_SERVER), "stdio"]}

needs_everything = pytest.mark.skipif(
    not node_available(), reason="node or server-everything is missing (run `npm ci`)"
)


def cat_code(config: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "cat_code", "--mcp-config", str(config), "mcp", *args],
        cwd=config.parent,
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"notes": NOTES}}))
    return path


def test_mcp_resources_lists_resources_and_templates_in_columns(config: Path) -> None:
    run = cat_code(config, "resources")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.decode().splitlines()
    assert lines[0] == "MCP resources:"
    assert "  notes  note://readme  readme  text/markdown" in lines
    assert "MCP resource templates:" in lines
    assert "  notes  colour://{name}  colour  text/plain" in lines


def test_mcp_resources_json_carries_the_server_of_every_entry(config: Path) -> None:
    run = cat_code(config, "resources", "notes", "--json")
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert len(document["resources"]) == 6
    assert {"server": "notes", "uri": "note://logo", "name": "logo", "mimeType": "image/png"} in [
        {k: r[k] for k in ("server", "uri", "name", "mimeType")} for r in document["resources"]
    ]
    [template] = document["resourceTemplates"]
    assert (template["server"], template["uriTemplate"]) == ("notes", "colour://{name}")


def test_mcp_read_prints_text_as_is_and_blobs_as_bytes_when_piped(config: Path) -> None:
    text = cat_code(config, "read", "notes", "note://readme")
    # Text gets the final newline it lacks (blobs' bytes stay exact).
    assert (text.returncode, text.stdout) == (0, b"# Read me\nThe notes server.\n")
    blob = cat_code(config, "read", "notes", "note://logo")
    assert (blob.returncode, blob.stdout) == (0, b"\x89PNG\r\n\x1a\nfake")
    wire = cat_code(config, "read", "notes", "note://logo", "--json")
    [contents] = json.loads(wire.stdout)["contents"]
    assert contents["blob"] == "iVBORw0KGgpmYWtl" and contents["mimeType"] == "image/png"


def test_mcp_read_failures_name_the_server_and_the_uri(config: Path) -> None:
    missing = cat_code(config, "read", "notes", "note://gone")
    assert missing.returncode == 1
    assert b"note://gone" in missing.stderr and b"'notes'" in missing.stderr
    unknown = cat_code(config, "read", "ghost", "note://readme")
    assert unknown.returncode == 2
    assert unknown.stderr == b"cat-code: no MCP server named 'ghost' (configured: notes)\n"


def test_mcp_prompts_shows_each_prompt_as_its_repl_command(config: Path) -> None:
    run = cat_code(config, "prompts")
    assert run.returncode == 0, run.stderr
    out = run.stdout.decode()
    assert "/mcp__notes__review path [focus]  Review a file with attention to one topic" in out
    listed: list[dict[str, Any]] = json.loads(cat_code(config, "prompts", "--json").stdout)
    review = next(p for p in listed if p["name"] == "review")
    assert review["server"] == "notes" and review["command"] == "/mcp__notes__review"
    assert review["arguments"][0] == {"name": "path", "required": True}


def test_a_server_that_fails_to_start_makes_the_listing_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    servers = {"notes": NOTES, "dead": {"command": str(tmp_path / "missing")}}
    path.write_text(json.dumps({"mcpServers": servers}))
    run = cat_code(path, "resources")
    assert run.returncode == 1
    assert b"note://readme" in run.stdout and b"MCP server 'dead' failed" in run.stderr


@needs_everything
def test_server_everything_resources_read_and_prompts(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"everything": EVERYTHING}}))
    resources = cat_code(path, "resources")
    assert b"demo://resource/static/document/features.md" in resources.stdout
    assert b"demo://resource/dynamic/blob/{resourceId}" in resources.stdout
    read = cat_code(path, "read", "everything", "demo://resource/dynamic/text/7")
    assert read.stdout.startswith(b"Resource 7: This is a plaintext resource")
    prompts = cat_code(path, "prompts", "everything")
    assert b"/mcp__everything__args-prompt city [state]" in prompts.stdout


def test_one_shot_gives_the_model_the_resource_tools_without_asking(config: Path) -> None:
    """``-p`` through the OpenAI path: the read-only resource tools run with no approval."""

    def listed(request: dict[str, Any]) -> dict[str, Any]:
        assert "note://readme" in request["messages"][-1]["content"]
        return openai_tool_call(
            "read_mcp_resource", '{"server": "notes", "uri": "note://readme"}', call_id="c2"
        )

    def read(request: dict[str, Any]) -> dict[str, Any]:
        assert request["messages"][-1] == {
            "role": "tool",
            "tool_call_id": "c2",
            "content": "# Read me\nThe notes server.",
        }
        return openai_text("It is a readme.")

    script = [openai_tool_call("list_mcp_resources", "{}", call_id="c1"), listed, read]
    with ScriptedModelApi(script) as api:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
        env.update(OPENAI_BASE_URL=api.url + "/v1", HOME=str(config.parent))
        run = subprocess.run(
            [sys.executable, "-m", "cat_code", "-p", "what is in the readme?",
             "--model", "openai:local", "--mcp-config", str(config)],
            cwd=config.parent, env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    assert run.stdout == "It is a readme.\n"
    assert "⏺ read_mcp_resource" in run.stderr
