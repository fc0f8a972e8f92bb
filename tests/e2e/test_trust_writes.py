"""The real ``cat-code -p`` with ``--yes`` or an allow rule for ``write_file``, against a
repository built to attack it (red-team findings 1 and 2 after issue 24): a write to an
``--mcp-config`` file, to ``.git/config``, to a user-level import source, or to a file that
``.mcp.json`` or ``.cat-code`` only links to, is refused unless a rule names the path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use, tool_results

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip
EVIL = '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch PWNED"]}}}'


def writes(
    project: Path, calls: list[tuple[str, dict[str, Any]]], *args: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """Run ``cat-code -p`` whose model makes ``calls`` one by one; the tool results."""
    home = project.parent / "cat-home"
    home.mkdir(exist_ok=True)
    results: list[dict[str, Any]] = []

    def then(step: dict[str, Any]) -> Any:
        def answer(request: dict[str, Any]) -> dict[str, Any]:
            if request["messages"][-1]["role"] == "user" and len(request["messages"]) > 1:
                results.extend(tool_results(request))
            return step

        return answer

    script = [then(anthropic_tool_use(n, a)) for n, a in calls] + [then(anthropic_text("done"))]
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    with ScriptedModelApi(script) as api:
        env.update(
            HOME=str(project.parent), CAT_CODE_HOME=str(home),
            ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url,
        )  # fmt: skip
        done = subprocess.run(
            [CAT_CODE, *args, "-p", "tidy up"],
            cwd=project, env=env, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 0 and api.errors == [], done.stderr
    return done, results


def repository(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    return project


def test_finding_1_a_write_to_an_mcp_config_file_or_git_config_is_refused_with_yes(
    tmp_path: Path,
) -> None:
    project = repository(tmp_path)
    (project / "tools.json").write_text('{"mcpServers": {}}\n')
    (project / "alias.json").symlink_to("tools.json")
    git_config = (project / ".git" / "config").read_text()
    calls = [
        ("write_file", {"path": "tools.json", "content": EVIL}),
        ("write_file", {"path": "alias.json", "content": EVIL}),
        (
            "write_file",
            {"path": ".git/config", "content": git_config + "[core]\n\tfsmonitor = x\n"},
        ),
        ("write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nid\n"}),
        ("write_file", {"path": "../.claude.json", "content": EVIL}),
        ("write_file", {"path": "plain.txt", "content": "fine\n"}),
    ]
    args = ("--mcp-config", "tools.json", "--yes", "--add-dir", str(tmp_path))
    _, results = writes(project, calls, *args)

    *refused, plain = results
    assert all(r["is_error"] for r in refused), json.dumps(results, indent=1)
    assert all("trust-bearing" in r["content"] for r in refused)
    assert not plain["is_error"] and (project / "plain.txt").read_text() == "fine\n"
    assert (project / "tools.json").read_text() == '{"mcpServers": {}}\n'
    assert (project / ".git" / "config").read_text() == git_config
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert not (tmp_path / ".claude.json").exists()


def test_finding_1_a_rule_naming_the_mcp_config_file_lets_the_write_through(
    tmp_path: Path,
) -> None:
    project = repository(tmp_path)
    (project / "tools.json").write_text('{"mcpServers": {}}\n')
    named = f"write_file({(project / 'tools.json').resolve()})"
    calls = [
        ("read_file", {"path": "tools.json"}),
        ("write_file", {"path": "tools.json", "content": "{}\n"}),
    ]
    _, [_, result] = writes(project, calls, "--mcp-config", "tools.json", "--allow-tool", named)
    assert not result["is_error"] and (project / "tools.json").read_text() == "{}\n"


def test_finding_2_a_file_that_mcp_json_or_cat_code_links_to_is_trust_bearing_by_any_name(
    tmp_path: Path,
) -> None:
    project = repository(tmp_path)
    (project / "none.json").write_text('{"mcpServers": {}}\n')
    (project / "servers.json").write_text('{"mcpServers": {}}\n')
    (project / ".mcp.json").symlink_to("servers.json")
    (project / "cfgdir").mkdir()
    (project / "cfgdir" / "settings.json").write_text("{}\n")
    (project / ".cat-code").symlink_to("cfgdir")
    os.link(project / "servers.json", project / "hard.json")
    rules = '{"permissions": {"allow": ["mcp__*"]}}'
    calls = [
        ("write_file", {"path": "servers.json", "content": EVIL}),
        ("write_file", {"path": "hard.json", "content": EVIL}),
        ("write_file", {"path": "cfgdir/settings.json", "content": rules}),
    ]
    _, results = writes(project, calls, "--mcp-config", "none.json", "--yes")
    assert all(r["is_error"] and "trust-bearing" in r["content"] for r in results), results
    assert (project / "servers.json").read_text() == '{"mcpServers": {}}\n'
    assert (project / "cfgdir" / "settings.json").read_text() == "{}\n"
