"""Permissions that last, end to end: an "always" answer saved to settings.json and
honoured by the next REPL on a pty, ``/permissions`` and its ``remove``, and a deny rule
that refuses even with ``--yes`` (REPL and ``-p``) with one short "refused" line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use, tool_results
from scripted.processes import ECHO_SERVER, REPO, pid_recording_config
from scripted.terminal import Terminal

from cat_code.host.config.project_trust import decide_content
from cat_code.host.config.trust import TrustDecision

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
PROMPT = "›"
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


@pytest.fixture
def api() -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        yield server
    assert server.errors == []


def environment(tmp_path: Path, api: ScriptedModelApi) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    return env


@pytest.fixture
def repl(tmp_path: Path, api: ScriptedModelApi) -> Iterator[Any]:
    config, _ = pid_recording_config(tmp_path, {"echo": ECHO_SERVER})
    terminals: list[Terminal] = []

    def start(*args: str) -> Terminal:
        term = Terminal(
            CAT_CODE, ["--mcp-config", str(config), *args], env=environment(tmp_path, api), cwd=REPO
        )
        terminals.append(term)
        term.wait_for("MCP: 1 server(s), 6 tool(s) registered")
        return term

    yield start
    for term in terminals:
        term.close()


def fail_result(request: dict[str, Any]) -> str:
    [result] = tool_results(request)
    return str(result["content"])


def test_always_allow_is_saved_and_the_next_session_runs_the_tool_without_asking(
    repl: Any, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    settings = cat_code_home / "settings.json"
    settings.write_text(json.dumps({"editor": "vim"}))

    def ran(request: dict[str, Any]) -> dict[str, Any]:
        assert fail_result(request) == "boom"
        return anthropic_text("it ran")

    api.add(anthropic_tool_use("mcp__echo__fail", {"message": "boom"}), ran)
    term = repl()
    term.type("run the fail tool")
    term.wait_for("allow? y yes · n no · a always this tool · s always server 'echo'")
    term.type("a")
    term.wait_for('⏺ mcp__echo__fail {"message":"boom"} → boom')
    term.wait_for("it ran")
    assert json.loads(settings.read_text()) == {
        "editor": "vim",
        "permissions": {"allow": ["mcp__echo__fail"]},
    }
    term.type("/exit")
    assert term.wait_for_exit() == 0

    api.add(anthropic_tool_use("mcp__echo__fail", {"message": "boom"}), ran)
    term = repl()
    term.type("/permissions")
    term.wait_for("1. allow  mcp__echo__fail  ")
    assert settings.parent.name in term.wait_for("settings.json")
    term.type("run it again")
    before = term.wait_for('⏺ mcp__echo__fail {"message":"boom"} → boom')
    assert "allow?" not in before  # no question this time
    term.wait_for("it ran")

    term.type("/permissions remove 1")
    term.wait_for("removed allow rule 'mcp__echo__fail'")
    assert json.loads(settings.read_text()) == {"editor": "vim", "permissions": {"allow": []}}
    term.type("/exit")
    assert term.wait_for_exit() == 0


def test_a_deny_rule_refuses_even_with_yes_in_the_repl_with_one_refused_line(
    repl: Any, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    settings = cat_code_home / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["mcp__echo__f*"]}}))

    def refused(request: dict[str, Any]) -> dict[str, Any]:
        assert "denied by the permission rule 'mcp__echo__f*'" in fail_result(request)
        return anthropic_text("that tool is blocked")

    api.add(anthropic_tool_use("mcp__echo__fail", {"message": "boom"}), refused)
    term = repl("--yes")
    term.type("run the fail tool")
    # (The line goes on with the file's path: the console may wrap it at any space.)
    term.wait_for("⊘ refused mcp__echo__fail: denied by rule 'mcp__echo__f*'")
    shown = term.wait_for("that tool is blocked")
    assert settings.name in shown and "⏺ mcp__echo__fail" not in shown
    term.type("/permissions remove mcp__echo__f*")
    term.wait_for("removed deny rule 'mcp__echo__f*'")
    term.type("/exit")
    assert term.wait_for_exit() == 0


def test_a_deny_rule_refuses_in_one_shot_mode_with_yes_and_says_so_on_stderr(
    tmp_path: Path, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    settings = cat_code_home / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["mcp__echo__fail"]}}))
    config, _ = pid_recording_config(tmp_path, {"echo": ECHO_SERVER})

    def refused(request: dict[str, Any]) -> dict[str, Any]:
        assert "denied by the permission rule 'mcp__echo__fail'" in fail_result(request)
        return anthropic_text("blocked by a rule")

    api.add(anthropic_tool_use("mcp__echo__fail", {"message": "boom"}), refused)
    done = subprocess.run(
        [CAT_CODE, "--mcp-config", str(config), "--yes", "-p", "run the fail tool"],
        cwd=REPO,
        env=environment(tmp_path, api),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "blocked by a rule\n"
    line = f"cat-code: refused mcp__echo__fail: denied by rule 'mcp__echo__fail' ({settings})"
    assert line in done.stderr.splitlines()
    assert "⏺ mcp__echo__fail" not in done.stderr


def test_a_broken_settings_file_is_a_warning_and_is_left_as_it_was(
    tmp_path: Path, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    settings = cat_code_home / "settings.json"
    settings.write_text('{"permissions": ')
    api.add(anthropic_text("fine"))
    done = subprocess.run(
        [CAT_CODE, "--mcp-config", str(tmp_path / "none.json"), "-p", "hi"],
        cwd=REPO,
        env=environment(tmp_path, api),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout == "fine\n"
    assert f"cat-code: warning: settings file {settings} is not valid JSON" in done.stderr
    assert settings.read_text() == '{"permissions": '


# -- review 12: project files are trusted less, and deny rules hold ---------------------------


def project(tmp_path: Path, settings: str) -> Path:
    """A git project whose .cat-code/settings.json holds ``settings``; its deep folder,
    where cat-code is started (the file is found by walking up)."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".cat-code").mkdir()
    (root / ".cat-code" / "settings.json").write_text(settings)
    deep = root / "src" / "deep"
    deep.mkdir(parents=True)
    return deep


def one_shot(
    tmp_path: Path, api: ScriptedModelApi, cwd: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    config, _ = pid_recording_config(tmp_path, {"echo": ECHO_SERVER})
    env = environment(tmp_path, api)
    env["PYTHONPATH"] = str(REPO / "src")  # cwd is not the checkout: our sources, absolutely
    return subprocess.run(
        [CAT_CODE, "--mcp-config", str(config), *args, "-p", "go"],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_finding_5_a_cloned_project_files_allow_star_approves_no_mcp_tool_until_approved(
    tmp_path: Path, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    deep = project(tmp_path, json.dumps({"permissions": {"allow": ["*"]}}))

    def refused(request: dict[str, Any]) -> dict[str, Any]:
        assert "'mcp__echo__fail' needs the user's approval" in fail_result(request)
        return anthropic_text("not run")

    api.add(anthropic_tool_use("mcp__echo__fail", {"message": "boom"}), refused)
    done = one_shot(tmp_path, api, deep)
    assert (done.returncode, done.stdout) == (0, "not run\n"), done.stderr
    said = " ".join(done.stderr.split())
    assert "have allow rules you have not approved: *" in said
    assert "cat-code project approve" in said


def test_the_project_files_allow_rules_apply_for_one_run_with_trust_project(
    tmp_path: Path, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    deep = project(tmp_path, json.dumps({"permissions": {"allow": ["mcp__echo__*"]}}))

    def ran(request: dict[str, Any]) -> dict[str, Any]:
        assert fail_result(request) == "boom"
        return anthropic_text("ran")

    api.add(anthropic_tool_use("mcp__echo__fail", {"message": "boom"}), ran)
    done = one_shot(tmp_path, api, deep, "--trust-project")
    assert (done.returncode, done.stdout) == (0, "ran\n"), done.stderr
    assert not (cat_code_home / "approvals.json").exists()  # remembered nothing


def test_a_cloned_project_file_cannot_approve_the_shell_but_can_approve_mcp_tools(
    tmp_path: Path, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    deep = project(tmp_path, json.dumps({"permissions": {"allow": ["*"]}}))
    env = environment(tmp_path, api)
    env["PYTHONPATH"] = str(REPO / "src")
    shown = subprocess.run(
        [CAT_CODE, "project"], cwd=deep, env=env, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 1, shown.stderr
    assert "NEEDS_APPROVAL  allow rules of " in shown.stdout and ": *" in shown.stdout
    approved = subprocess.run(
        [CAT_CODE, "project", "approve"], cwd=deep, env=env, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.startswith("Approved for this folder: allow rules of ")
    marker = tmp_path / "pwned"

    def shell_refused(request: dict[str, Any]) -> dict[str, Any]:
        assert "'shell' needs the user's approval" in fail_result(request)
        return anthropic_tool_use("mcp__echo__fail", {"message": "boom"})

    def mcp_ran(request: dict[str, Any]) -> dict[str, Any]:
        assert fail_result(request) == "boom"
        return anthropic_text("done")

    api.add(anthropic_tool_use("shell", {"command": f"touch {marker}"}), shell_refused, mcp_ran)
    done = one_shot(tmp_path, api, deep)
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    assert not marker.exists()


@pytest.mark.parametrize(
    ("settings", "warning"),
    [
        (
            '{"permissions": {"allow": [""], "deny": ["shell"]}}',
            '"permissions.allow" entry "" is not a tool name or glob: that entry is ignored',
        ),
        ('{"permissions": {"deny": ["shell"],}}', "--yes approves nothing in this session"),
    ],
    ids=["bad-entry", "broken-json"],
)
def test_a_bad_project_file_never_lets_yes_run_a_denied_shell(
    tmp_path: Path, api: ScriptedModelApi, cat_code_home: Path, settings: str, warning: str
) -> None:
    deep = project(tmp_path, settings)
    marker = tmp_path / "pwned"

    def refused(request: dict[str, Any]) -> dict[str, Any]:
        assert "shell" in fail_result(request) and "Error:" in fail_result(request)
        return anthropic_text("not run")

    api.add(anthropic_tool_use("shell", {"command": f"touch {marker}"}), refused)
    done = one_shot(tmp_path, api, deep, "--yes")
    assert (done.returncode, done.stdout) == (0, "not run\n"), done.stderr
    assert warning in done.stderr
    assert str(deep.parents[1] / ".cat-code" / "settings.json") in done.stderr
    assert not marker.exists()


def test_a_whole_server_deny_refuses_its_resources_in_one_shot_mode(
    tmp_path: Path, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    settings = cat_code_home / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["mcp__echo__*"]}}))

    def refused(request: dict[str, Any]) -> dict[str, Any]:
        assert "denied by the permission rule 'mcp__echo__*'" in fail_result(request)
        return anthropic_text("blocked")

    api.add(anthropic_tool_use("read_mcp_resource", {"server": "echo", "uri": "x://y"}), refused)
    done = one_shot(tmp_path, api, REPO, "--yes")
    assert (done.returncode, done.stdout) == (0, "blocked\n"), done.stderr
    line = (
        "cat-code: refused read_mcp_resource (mcp__echo__*): denied by rule 'mcp__echo__*' "
        f"({settings})"
    )
    assert line in done.stderr.splitlines()


def test_the_repl_names_the_project_files_allow_rules_at_start(
    tmp_path: Path, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    deep = project(tmp_path, json.dumps({"permissions": {"allow": ["mcp__echo__*", "shell"]}}))
    path = deep.parents[1] / ".cat-code" / "settings.json"
    decide_content(TrustDecision.APPROVED, cwd=deep)
    config, _ = pid_recording_config(tmp_path, {"echo": ECHO_SERVER})
    env = environment(tmp_path, api)
    env["PYTHONPATH"] = str(REPO / "src")
    term = Terminal(CAT_CODE, ["--mcp-config", str(config)], env=env, cwd=deep)
    try:
        # The console wraps the line at any space, and where depends on the length of the
        # temporary path (longer under xdist): wait for one word, then read the words.
        start = " ".join(term.wait_for("registered").split())
        assert "project settings" in start
        assert "without asking: mcp__echo__*, shell" in start
        assert "never built-in tools such as shell" in start
        assert "MCP: 1 server(s), 6 tool(s)" in start
        term.type("/permissions")
        shown = " ".join(term.wait_for("yet)").split())
        assert shown.endswith("(not created")
        assert "(project, read-only here;" in shown
        assert f"read from {path} (the project's); your rules are saved to" in shown
        assert " ".join(term.wait_for("every").split()).endswith("deny rules cover")
        term.type("/exit")
        assert term.wait_for_exit() == 0
    finally:
        term.close()


def test_the_repl_asks_once_to_apply_the_project_files_unapproved_allow_rules(
    tmp_path: Path, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    deep = project(tmp_path, json.dumps({"permissions": {"allow": ["mcp__echo__*"]}}))
    config, _ = pid_recording_config(tmp_path, {"echo": ECHO_SERVER})
    env = environment(tmp_path, api)
    env["PYTHONPATH"] = str(REPO / "src")
    term = Terminal(CAT_CODE, ["--mcp-config", str(config)], env=env, cwd=deep)
    try:
        asked = " ".join(term.wait_for("[y/N]").split())
        assert "allow rules you have not approved: mcp__echo__*" in asked
        term.type("y")
        term.wait_for("approved for this folder")
        term.wait_for("registered")
        term.type("/permissions")
        shown = " ".join(term.wait_for("yet)").split())
        assert "allow mcp__echo__*" in shown
        term.type("/exit")
        assert term.wait_for_exit() == 0
    finally:
        term.close()
    again = Terminal(CAT_CODE, ["--mcp-config", str(config)], env=env, cwd=deep)
    try:  # approved as written: no question the next time
        start = " ".join(again.wait_for("registered").split())
        assert "[y/N]" not in start and "allow without asking: mcp__echo__*" in start
        again.type("/exit")
        assert again.wait_for_exit() == 0
    finally:
        again.close()
