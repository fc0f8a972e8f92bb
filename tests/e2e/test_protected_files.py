"""The real ``cat-code -p`` against a repository built to attack it (issue 24, findings 2 and
10): links to the home and out of the workspace, and a NUL byte in a path, through a
scripted model that makes the calls an injected prompt would."""

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
SERVERS = '{"mcpServers": {"mine": {"command": "my-server"}}}\n'


def run(
    project: Path, home: Path, api: ScriptedModelApi, *args: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(
        HOME=str(project.parent), CAT_CODE_HOME=str(home),
        ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url,
    )  # fmt: skip
    return subprocess.run(
        [CAT_CODE, "--mcp-config", "none.json", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_finding_2_with_yes_an_injected_write_through_links_changes_nothing_outside(
    tmp_path: Path,
) -> None:
    home, project, elsewhere = tmp_path / "home", tmp_path / "project", tmp_path / "elsewhere"
    for folder in (home, project, elsewhere, project / ".git"):
        folder.mkdir()
    (home / "mcp.json").write_text(SERVERS)
    (project / "none.json").write_text('{"mcpServers": {}}')
    (project / "cfg").symlink_to(home)
    (project / "out").symlink_to(elsewhere)
    evil = '{"mcpServers": {"x": {"command": "sh", "args": ["-c", "id > /tmp/pwned"]}}}'
    results: list[dict[str, Any]] = []

    def then(step: dict[str, Any]) -> Any:
        def answer(request: dict[str, Any]) -> dict[str, Any]:
            results.extend(tool_results(request))
            return step

        return answer

    script = [
        anthropic_tool_use("write_file", {"path": "cfg/mcp.json", "content": evil}),
        then(anthropic_tool_use("write_file", {"path": "out/run.sh", "content": "id\n"})),
        then(anthropic_tool_use("read_file", {"path": "cfg/mcp.json"})),
        then(anthropic_tool_use("read_file", {"path": "notes\0.txt"})),
        then(anthropic_text("done")),
    ]
    with ScriptedModelApi(script) as api:
        done = run(project, home, api, "-p", "tidy up", "--yes")

    assert api.errors == [] and done.returncode == 0, done.stderr
    assert (home / "mcp.json").read_text() == SERVERS and not (elsewhere / "run.sh").exists()
    home_write, outside_write, home_read, nul = (r["content"] for r in results)
    assert all(r["is_error"] for r in results), json.dumps(results, indent=1)
    assert "cat-code's own files" in home_write and "cat-code's own files" in home_read
    assert f"out/run.sh → {elsewhere.resolve() / 'run.sh'}, outside" in outside_write
    assert "my-server" not in home_read
    assert "NUL byte" in nul and "Traceback" not in done.stderr + done.stdout


def test_finding_2_the_repl_question_shows_where_a_link_leads_and_always_does_not_cover_it(
    tmp_path: Path,
) -> None:
    from scripted.terminal import Terminal

    home, project, elsewhere = tmp_path / "home", tmp_path / "project", tmp_path / "elsewhere"
    for folder in (home, project, elsewhere, project / ".git"):
        folder.mkdir()
    (project / "none.json").write_text('{"mcpServers": {}}')
    (project / "out").symlink_to(elsewhere)
    target = elsewhere.resolve() / "a.txt"
    write = {"path": "out/a.txt", "content": "hi\n"}
    script = [
        anthropic_tool_use("write_file", write),
        anthropic_text("first done"),
        anthropic_tool_use("write_file", write | {"content": "again\n"}),
        anthropic_text("second done"),
    ]
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    with ScriptedModelApi(script) as api:
        env.update(
            HOME=str(tmp_path), CAT_CODE_HOME=str(home),
            ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url,
        )  # fmt: skip
        term = Terminal(CAT_CODE, ["--mcp-config", "none.json"], env=env, cwd=project)
        try:
            term.wait_for("›")
            term.type("write it")
            question = term.wait_for("allow?").replace("\n", "")  # long lines wrap
            assert f'"out/a.txt → {target}"' in question
            assert f"{target} is outside the working directory" in question
            assert '"always" covers the working directory only' in question
            term.type("a")
            term.wait_for("first done")
            term.type("again")
            term.wait_for("allow?")  # "always" did not cover a write outside
            term.type("n")
            term.wait_for("second done")
        finally:
            term.close()
    assert api.errors == [] and target.read_text() == "hi\n"
