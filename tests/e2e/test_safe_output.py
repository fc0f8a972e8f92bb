"""No escape sequence a server (or the model) supplies reaches the terminal raw.

The real ``cat-code`` against `hostile_server.py`, which puts ESC and C1 sequences in its
name, tool description, results, errors, log notifications, progress, stderr, resources
and prompts: every ``mcp`` verb, ``-p`` and the REPL show them escaped (``\\x1b``), and
``mcp read`` to a pipe still writes the resource exactly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use
from scripted.processes import REPO
from scripted.terminal import Terminal

HOSTILE = REPO / "tests" / "servers" / "hostile_server.py"
CAT_CODE = str(Path(sys.executable).parent / "cat-code")
EVIL = "\x1b]0;PWNED\x07\x1b[2J\x9b2J\x9d0;PWNED\x9c"
TAIL = "\\x1b[2J\\x9b2J\\x9d0;PWNED\\x9c"
SHOWN = "\\x1b]0;PWNED\\x07" + TAIL
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_CONFIG_DIR",
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


def raw_controls(text: str) -> list[str]:
    """The ESC, C1 and other control characters (not tab, newline) in ``text``."""
    return [c for c in text if (c < " " and c not in "\t\n") or "\x7f" <= c <= "\x9f"]


def hostile_config(tmp_path: Path) -> str:
    path = tmp_path / "mcp.json"
    servers = {
        "hostile": {"command": sys.executable, "args": [str(HOSTILE)]},
        "dead": {"command": sys.executable, "args": [str(HOSTILE), "--exit-at-start"]},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


def run(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CAT_CODE, "-v", "--mcp-config", hostile_config(tmp_path), *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.parametrize(
    "verb",
    [
        ["mcp", "list"],
        ["mcp", "list", "--json"],
        ["mcp", "tools"],
        ["mcp", "tools", "--json"],
        ["mcp", "call", "mcp__hostile__show", "{}"],
        ["mcp", "call", "mcp__hostile__fail", "{}"],
        ["mcp", "call", "mcp__hostile__broken", "{}"],
        ["mcp", "resources"],
        ["mcp", "resources", "--json"],
        ["mcp", "prompts"],
        ["mcp", "prompts", "--json"],
    ],
    ids=" ".join,
)
def test_every_mcp_verb_shows_a_servers_escape_sequences_escaped(
    tmp_path: Path, verb: list[str]
) -> None:
    done = run(tmp_path, *verb)

    assert raw_controls(done.stdout) == [] and raw_controls(done.stderr) == []
    shown = done.stdout + done.stderr
    assert "PWNED" in shown  # shown (escaped), not dropped


def test_mcp_list_shows_the_stderr_tail_and_names_escaped_one_line_each(tmp_path: Path) -> None:
    done = run(tmp_path, "mcp", "list")

    assert f"last stderr: starting {SHOWN}" in done.stdout
    assert raw_controls(done.stdout) == []


def test_a_tool_result_log_notification_and_progress_are_printed_escaped(tmp_path: Path) -> None:
    done = run(tmp_path, "mcp", "call", "mcp__hostile__show", "{}")

    assert done.returncode == 0, done.stderr
    assert done.stdout == f"result {SHOWN} end\n"
    assert f"log {SHOWN}" in done.stderr


def test_json_output_escapes_c1_too_and_stays_the_same_json(tmp_path: Path) -> None:
    done = run(tmp_path, "mcp", "call", "mcp__hostile__show", "{}", "--json")

    assert raw_controls(done.stdout) == []
    assert json.loads(done.stdout)["content"][0]["text"] == f"result {EVIL} end"


def test_mcp_read_to_a_pipe_writes_the_resource_exactly(tmp_path: Path) -> None:
    done = run(tmp_path, "mcp", "read", "hostile", f"evil://r{EVIL}")

    assert done.returncode == 0, done.stderr
    assert done.stdout == f"text {EVIL}\n"  # a pipe is for a file: byte-exact


def test_mcp_get_shows_a_failing_servers_stderr_escaped(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "mcp.json").write_text(
        json.dumps({"mcpServers": {"dead": {"command": sys.executable,
                                             "args": [str(HOSTILE), "--exit-at-start"]}}})
    )  # fmt: skip
    env = {**os.environ, "CAT_CODE_HOME": str(home)}
    done = subprocess.run(
        [CAT_CODE, "mcp", "get", "dead"], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=60, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip

    assert "PWNED" in done.stdout + done.stderr
    assert raw_controls(done.stdout) == [] and raw_controls(done.stderr) == []


def model_env(tmp_path: Path, api: ScriptedModelApi) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    return env


def test_one_shot_prints_the_tool_line_and_the_models_own_answer_escaped(tmp_path: Path) -> None:
    script = [
        anthropic_tool_use("mcp__hostile__show", {}),
        anthropic_text(f"the answer {EVIL} done"),
    ]
    with ScriptedModelApi(script) as api:
        done = run(tmp_path, "-p", "go", "--yes", env=model_env(tmp_path, api))

    assert api.errors == []
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"the answer {SHOWN} done\n"
    assert f"→ result {SHOWN} end" in done.stderr
    assert raw_controls(done.stderr) == []


def test_the_repl_shows_status_tools_results_and_the_answer_escaped(tmp_path: Path) -> None:
    script = [
        anthropic_tool_use("mcp__hostile__show", {}),
        anthropic_text(f"the **answer** {EVIL} done"),
    ]
    with ScriptedModelApi(script) as api:
        term = Terminal(CAT_CODE, ["--mcp-config", hostile_config(tmp_path)],
                        env=model_env(tmp_path, api), cwd=tmp_path)  # fmt: skip
        try:
            term.wait_for("MCP: 1 server(s), 4 tool(s) registered, 1 failed")
            term.type("/mcp")
            # "last stderr:", whichever way the long line wraps (the paths' length varies).
            assert term.wait_for("stderr:").split()[-1:] == ["last"]
            term.wait_for("\\x9d0;PWNED\\x9c")  # the line is long: it may wrap before
            term.type("/mcp tools")
            term.wait_for(f"shows {SHOWN} text")
            term.type("go")
            term.wait_for("allow?")
            term.type("y")
            # Rich drops a BEL itself; the console shows the rest escaped.
            term.wait_for(f"result \\x1b]0;PWNED{TAIL} end")
            term.wait_for(f"the answer \\x1b]0;PWNED{TAIL} done")  # Markdown still rendered
            term.press("\x04")
            assert term.wait_for_exit() == 0
        finally:
            term.close()
    assert api.errors == []
    # The REPL draws with its own escapes; none of the server's or the model's got through.
    assert "\x1b]0;PWNED" not in term.raw and "PWNED\x07" not in term.raw
    assert not any("\x80" <= c <= "\x9f" for c in term.raw)
