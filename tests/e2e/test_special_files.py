"""The files cat-code reads itself, attacked from a cloned repository (issue 24, findings 1
and 3): links out of it, special files. The real ``cat-code`` against the scripted model
API, which records every request, so what reached the system prompt is checked as sent."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_text

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip
#: An address-space cap for the child: an attack that reads /dev/zero whole fails with a
#: MemoryError here instead of taking the test machine's memory.
_MEMORY_CAP = 3 * 1024**3


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "credentials.json").write_text('{"srv": {"access_token": "tok-SECRET"}}')
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)
    return folder


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_CAP, _MEMORY_CAP))


def run(
    cwd: Path, home: Path, *args: str, api: ScriptedModelApi | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    environ.update(HOME=str(home.parent), CAT_CODE_HOME=str(home), **env)
    if api is not None:
        environ.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    return subprocess.run(
        [CAT_CODE, *args],
        cwd=cwd,
        env=environ,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,  # a read that hangs (a FIFO) fails the test here, the child killed
        preexec_fn=_capped,
    )


def system_prompt(request: dict[str, Any]) -> str:
    system = request["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


def test_finding_1_memory_files_linked_to_the_token_store_or_proc_environ_stay_out_of_the_prompt(
    home: Path, project: Path
) -> None:
    (project / "AGENTS.md").symlink_to(home / "credentials.json")
    sub = project / "sub"
    sub.mkdir()
    (sub / "CLAUDE.md").symlink_to("/proc/self/environ")
    (home / "AGENTS.md").write_text("User rule: be brief.")
    with ScriptedModelApi([anthropic_text("ok")]) as api:
        done = run(sub, home, "-p", "hi", api=api, CANARY="env-SECRET")
    assert done.returncode == 0, done.stderr
    prompt = system_prompt(api.requests[0])
    assert "User rule: be brief." in prompt
    sent = json.dumps(api.requests)
    assert "tok-SECRET" not in sent and "env-SECRET" not in sent and "test-key" not in sent
    warnings = [line for line in done.stderr.splitlines() if "memory file" in line]
    assert len(warnings) == 2, done.stderr
    assert str(project / "AGENTS.md") in warnings[0] and "cat-code's own" in warnings[0]
    assert str(sub / "CLAUDE.md") in warnings[1] and "outside the repository" in warnings[1]


def test_finding_3_an_mcp_json_linked_to_dev_zero_is_skipped_and_the_other_servers_load(
    home: Path, project: Path
) -> None:
    servers = {"mine": {"command": sys.executable, "args": ["-c", "pass"]}}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (project / ".mcp.json").symlink_to("/dev/zero")
    done = run(project, home, "mcp", "list", "--json")
    listed = json.loads(done.stdout)
    assert [s["name"] for s in listed] == ["mine"], done.stderr
    warnings = [line for line in done.stderr.splitlines() if ".mcp.json" in line]
    assert len(warnings) == 1 and "not a regular file (a device)" in warnings[0]
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr


def test_finding_3_a_project_settings_file_that_is_a_fifo_does_not_hang_the_session(
    home: Path, project: Path
) -> None:
    (project / ".cat-code").mkdir()
    os.mkfifo(project / ".cat-code" / "settings.json")  # nobody ever writes to it
    with ScriptedModelApi([anthropic_text("still here")]) as api:
        done = run(project, home, "-p", "hi", api=api)
    assert done.returncode == 0 and done.stdout.strip() == "still here", done.stderr
    warnings = [line for line in done.stderr.splitlines() if "settings.json" in line]
    assert len(warnings) == 1 and "named pipe" in warnings[0], done.stderr
