"""The real ``cat-code mcp skills`` and ``-p`` with ``load_mcp_skill``, run as processes
against the scripted stdio skills server (`servers/skills_server.py`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, openai_text, openai_tool_call

SKILLS_SERVER = Path(__file__).resolve().parents[1] / "servers" / "skills_server.py"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "mcp.json"
    entry = {
        "command": sys.executable,
        "args": [str(SKILLS_SERVER)],
        "env": {"SKILLS_LOG": str(tmp_path / "requests.log")},
    }
    path.write_text(json.dumps({"mcpServers": {"kit": entry}}))
    return path


def reads(config: Path) -> list[str]:
    log = config.parent / "requests.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split(" ", 1)[1] for line in lines if line.startswith("resources/read")]


def cat_code(config: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "cat_code", "--mcp-config", str(config), "mcp", *args],
        cwd=config.parent,
        capture_output=True,
        timeout=60,
        check=False,
    )


def test_mcp_skills_json_gives_each_entry_as_listed_with_its_server(config: Path) -> None:
    run = cat_code(config, "skills", "--json")
    assert run.returncode == 0, run.stderr
    listed = json.loads(run.stdout)
    assert [(s["server"], s["frontmatter"]["name"]) for s in listed] == [
        ("kit", "pdf-processing"),
        ("kit", "bad-digest"),
        ("kit", "bad-size"),
        ("kit", "bad-frontmatter"),
    ]
    assert listed[0]["uri"] == "skill://pdf-processing/SKILL.md"
    assert [f["uri"] for f in listed[0]["resources"]] == [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
    ]
    assert reads(config) == []  # a listing reads no file


def test_mcp_skills_shows_name_files_and_description(config: Path) -> None:
    run = cat_code(config, "skills", "kit")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.decode().splitlines()
    assert lines[0].startswith("MCP skills")
    assert "  kit  pdf-processing   2 files  Extract, fill, and assemble PDF documents" in lines
    unknown = cat_code(config, "skills", "ghost")
    assert unknown.returncode == 2 and b"'ghost'" in unknown.stderr


def test_the_model_sees_the_skills_and_loads_one_verified_through_the_tool(config: Path) -> None:
    """``-p``: the system prompt names the skills; ``load_mcp_skill`` reads SKILL.md, then a
    file on demand; a tampered skill comes back as an error naming the check."""

    def first(request: dict[str, Any]) -> dict[str, Any]:
        system = request["messages"][0]["content"]
        assert "Skills from MCP servers" in system
        assert "- server 'kit', skill 'pdf-processing': Extract, fill, and assemble PDF" in system
        assert "load_mcp_skill" in [t["function"]["name"] for t in request["tools"]]
        return openai_tool_call(
            "load_mcp_skill", '{"server": "kit", "name": "pdf-processing"}', call_id="c1"
        )

    def loaded(request: dict[str, Any]) -> dict[str, Any]:
        result = request["messages"][-1]["content"]
        assert result.startswith("Skill 'pdf-processing' from MCP server 'kit'")
        assert "the answer to everything is 42" in result
        assert "- references/FORMS.md (35 bytes)" in result
        arguments = {"server": "kit", "name": "pdf-processing", "file": "references/FORMS.md"}
        return openai_tool_call("load_mcp_skill", json.dumps(arguments), call_id="c2")

    def forms(request: dict[str, Any]) -> dict[str, Any]:
        assert "Form fields are numbered from one." in request["messages"][-1]["content"]
        return openai_tool_call(
            "load_mcp_skill", '{"server": "kit", "name": "bad-digest"}', call_id="c3"
        )

    def refused(request: dict[str, Any]) -> dict[str, Any]:
        result = request["messages"][-1]["content"]
        assert "skill 'bad-digest'" in result and "digest check failed" in result
        assert "Evil body" not in result
        return openai_text("The answer is 42.")

    with ScriptedModelApi([first, loaded, forms, refused]) as api:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
        env.update(OPENAI_BASE_URL=api.url + "/v1", HOME=str(config.parent))
        run = subprocess.run(
            [sys.executable, "-m", "cat_code", "-p", "fill in the PDF form",
             "--model", "openai:local", "--mcp-config", str(config)],
            cwd=config.parent, env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    assert run.stdout == "The answer is 42.\n"
    assert reads(config) == [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "skill://bad-digest/SKILL.md",
    ]
