"""URL-mode elicitation end to end: the real ``cat-code`` and a server that sends the user to
web pages (``tests/servers/url_server.py``). ``BROWSER`` is a script that records each URL
it is given, so a test sees whether (and what) a browser was asked to open."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use, tool_results
from scripted.processes import REPO, pid_recording_config
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
URL_SERVER = REPO / "tests" / "servers" / "url_server.py"
PAGE = "https://pay.example.com/checkout?order=7"
CONNECT = "https://auth.example.com/connect?account=9"
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


def browser(tmp_path: Path) -> tuple[Path, Path]:
    """A ``BROWSER`` command that appends each URL to a file, and that file."""
    marks = tmp_path / "opened.txt"
    script = tmp_path / "browser.sh"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> "{marks}"\n')
    script.chmod(0o755)
    return script, marks


def environment(tmp_path: Path, api: ScriptedModelApi, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    env.update(extra)
    return env


def test_the_repl_shows_who_asks_and_the_whole_url_and_opens_it_only_after_a_yes(
    tmp_path: Path,
) -> None:
    script, marks = browser(tmp_path)

    def first_accepted(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["content"] == "accept"
        # (Not the browser's mark here: it is started on a thread, and may not have run yet;
        # the end of the test checks it opened once.)
        return anthropic_tool_use("mcp__url__open_page", {})

    def then_declined(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["content"] == "decline"
        return anthropic_text("Not paying, then.")

    config, _ = pid_recording_config(tmp_path, {"url": URL_SERVER})
    with ScriptedModelApi(
        [anthropic_tool_use("mcp__url__open_page", {}), first_accepted, then_declined]
    ) as api:
        env = environment(tmp_path, api, BROWSER=str(script))
        term = Terminal(CAT_CODE, ["--mcp-config", str(config)], env=env, cwd=REPO)
        try:
            term.wait_for("MCP: 1 server(s), 2 tool(s) registered")
            term.type("pay for my order")
            term.wait_for("MCP server 'url' asks you to open a web page: Pay for it")
            term.wait_for(PAGE)
            term.wait_for("site: example.com (host pay.example.com)")
            term.wait_for("open it? y open in the browser · c copy it myself · n decline")
            assert not marks.exists()  # nothing opened before the answer
            term.type("y")
            term.wait_for("opened in your browser")
            term.wait_for("⏺ mcp__url__open_page {} → accept")
            term.wait_for("open it? y open in the browser", timeout=15)
            term.type("n")
            term.wait_for("⏺ mcp__url__open_page {} → decline")
            term.wait_for("Not paying, then.")
            term.type("/exit")
            assert term.wait_for_exit() == 0
        finally:
            term.close()
    assert api.errors == []
    assert marks.read_text() == PAGE + "\n"  # the "n" opened nothing


def test_one_shot_declines_a_url_request_naming_the_url_and_opens_nothing(
    tmp_path: Path,
) -> None:
    script, marks = browser(tmp_path)

    def check_declined(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["content"] == "decline"
        return anthropic_text("Declined.")

    config, _ = pid_recording_config(tmp_path, {"url": URL_SERVER})
    with ScriptedModelApi([anthropic_tool_use("mcp__url__open_page", {}), check_declined]) as api:
        run = subprocess.run(
            [CAT_CODE, "-p", "pay", "--mcp-config", str(config)],
            cwd=REPO,
            env=environment(tmp_path, api, BROWSER=str(script)),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    assert f"MCP server 'url' asked you to open {PAGE} (Pay for it)" in run.stderr
    assert "declined in -p mode, not opened" in run.stderr
    assert not marks.exists()


def test_mcp_call_declines_a_url_request_with_a_note_and_opens_nothing(tmp_path: Path) -> None:
    script, marks = browser(tmp_path)
    config, _ = pid_recording_config(tmp_path, {"url": URL_SERVER})
    env = {**os.environ, "HOME": str(tmp_path), "BROWSER": str(script)}
    run = subprocess.run(
        [CAT_CODE, "mcp", "call", "mcp__url__open_page", "{}", "--mcp-config", str(config)],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == "decline\n"
    assert f"cat-code: MCP server 'url' asked you to open {PAGE} (Pay for it)" in run.stderr
    assert "declined by `mcp call`, not opened (the REPL, `cat-code`, can ask you)" in run.stderr
    assert not marks.exists()


def test_a_url_elicitation_required_error_is_shown_and_the_call_fails_saying_what_to_do(
    tmp_path: Path,
) -> None:
    script, marks = browser(tmp_path)
    config, _ = pid_recording_config(tmp_path, {"url": URL_SERVER})
    env = {**os.environ, "HOME": str(tmp_path), "BROWSER": str(script)}
    run = subprocess.run(
        [CAT_CODE, "mcp", "call", "mcp__url__needs_browser", "{}", "--mcp-config", str(config)],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert f"asked you to open {CONNECT} (Connect your account)" in run.stderr
    assert "needs the user to finish a step in the browser first" in run.stderr
    assert f"{CONNECT} (decline)" in run.stderr
    assert not marks.exists()


def test_finding_8_the_repl_declines_a_backslash_url_unopened_and_never_names_the_wrong_site(
    tmp_path: Path,
) -> None:
    script, marks = browser(tmp_path)
    attack = "https://attacker.example\\@accounts.google.com/signin"

    def declined(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["content"] == "decline"
        return anthropic_text("Not signing in, then.")

    config = tmp_path / "mcp.json"
    entry = {
        "command": sys.executable,
        "args": [str(URL_SERVER)],
        "env": {"URL_SERVER_PAGE": attack},
    }
    config.write_text(json.dumps({"mcpServers": {"url": entry}}))
    with ScriptedModelApi([anthropic_tool_use("mcp__url__open_page", {}), declined]) as api:
        env = environment(tmp_path, api, BROWSER=str(script))
        term = Terminal(CAT_CODE, ["--mcp-config", str(config)], env=env, cwd=REPO)
        try:
            term.wait_for("MCP: 1 server(s), 2 tool(s) registered")
            term.type("sign me in")
            term.wait_for("MCP server 'url' asks you to open a web page: Pay for it")
            term.wait_for("not opened: it contains a backslash")
            term.wait_for("Not signing in, then.")
            term.type("/exit")
            assert term.wait_for_exit() == 0
        finally:
            term.close()
    assert api.errors == []
    assert "site: accounts.google.com" not in term.screen
    assert not marks.exists()
