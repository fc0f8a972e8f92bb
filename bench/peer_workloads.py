"""Whole commands against a model: cat-code next to Claude Code and next to a bare agent.

Every workload here runs a real program against the same scripted Messages API
(``bench/servers/model_api.py``: one call of ``mcp__echo__echo``, then the answer) and the
same two stdio servers, ``examples/echo_server.py`` and npm's server-everything:

- ``peer.claude_code.*``: ``cat-code -p`` and ``cat-code mcp list`` against Claude Code's
  ``claude -p`` and ``claude mcp list``, wall time and peak RSS, taken by the spawner. Claude
  Code is installed from npm into a temporary prefix for the run (never a dependency), its
  user config (``.claude.json`` under a temporary ``CLAUDE_CONFIG_DIR`` and ``HOME``) names
  the same servers; ``ANTHROPIC_BASE_URL`` points it at the scripted API with a dummy key,
  with its non-essential traffic (updates, telemetry) off. A row is skipped, with the
  reason, when npm, node, server-everything or the install is missing.
- ``oneshot.first_token``: from spawn to the first byte of the answer on stdout; the floor
  is ``bench/bare_agent.py oneshot`` (asyncio and httpx2 only).
- ``repl.ready``: from spawn to the REPL's prompt on a pseudo-terminal; the floor is
  ``bench/bare_agent.py repl``.

Peak RSS is what ``wait4`` reports for the program: the largest of it and the children it
reaped (its servers; server-everything's node is about 65 MB), for both programs alike.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from process_workloads import REPO, ProcessBench, cat_code_command

BENCH = Path(__file__).resolve().parent
PYTHON = sys.executable
EVERYTHING = REPO / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist"
EVERYTHING_SERVER = EVERYTHING / "index.js"
CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
PROMPT = "use the echo tool"
#: What both programs print once the tool call went through and the answer came back.
ANSWER = "The echo tool said: hello."
#: How long an npm install may take before the peer rows are skipped.
INSTALL_TIMEOUT_S = 600
#: A single run that takes longer than this is a hang.
RUN_TIMEOUT_S = 120
#: Claude Code's traffic that is not the model's: off, so only the scripted API is reached.
_QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}
_ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()=>].?")


class ModelApi:
    """The scripted Messages API in its own process; `close` ends it."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [PYTHON, str(BENCH / "servers" / "model_api.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            self.close()
            raise RuntimeError(f"the scripted model API did not start: {line!r}")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}"

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def install_claude_code(prefix: Path) -> tuple[Path | None, str]:
    """Claude Code's binary and version, installed under ``prefix``; (None, why not) if not."""
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm is not installed"
    try:
        done = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             CLAUDE_CODE_PACKAGE],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None, f"npm install {CLAUDE_CODE_PACKAGE} took over {INSTALL_TIMEOUT_S} s"
    binary = prefix / "node_modules" / ".bin" / "claude"
    if done.returncode != 0 or not binary.exists():
        tail = " ".join((done.stderr or done.stdout).split())[-300:]
        return None, f"npm install {CLAUDE_CODE_PACKAGE} failed: {tail}"
    try:
        version = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"the installed Claude Code does not run: {exc}"
    if not version:
        return None, "the installed Claude Code printed no version"
    return binary, version


class PeerBench:
    """The scratch folder, the model API, the servers' config and the programs to run."""

    def __init__(self, processes: ProcessBench, *, with_claude_code: bool) -> None:
        self.processes = processes
        self._tmp = tempfile.TemporaryDirectory(prefix="cat-code-bench-peer-")
        tmp = Path(self._tmp.name)
        self.cwd = tmp / "work"
        self.cwd.mkdir()
        self.skip: str | None = None
        self.claude_skip: str | None = None
        self.claude: Path | None = None
        self.claude_version = ""
        self.model: ModelApi | None = None
        if shutil.which("node") is None or not EVERYTHING_SERVER.exists():
            self.skip = "node or server-everything is missing (npm ci)"
            return
        entries = {
            "echo": {"command": PYTHON, "args": [str(REPO / "examples" / "echo_server.py")]},
            "everything": {"command": "node", "args": [str(EVERYTHING_SERVER), "stdio"]},
        }
        self.config = tmp / "mcp.json"
        self.config.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
        self.model = ModelApi()
        home = tmp / "home"
        claude_dir = home / ".claude"
        claude_dir.mkdir(parents=True)
        user_config = {
            "hasCompletedOnboarding": True,
            "mcpServers": {name: {"type": "stdio", **e, "env": {}} for name, e in entries.items()},
        }
        (claude_dir / ".claude.json").write_text(json.dumps(user_config), encoding="utf-8")
        base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE"))}
        base.pop("PYTHONPATH", None)
        self.env = {
            **base,
            "HOME": str(home),
            "CAT_CODE_HOME": str(tmp / "cat-code-home"),
            "CLAUDE_CONFIG_DIR": str(claude_dir),
            "ANTHROPIC_BASE_URL": self.model.url,
            "ANTHROPIC_API_KEY": "bench-dummy-key",
            **_QUIET,
        }
        if with_claude_code:
            self.claude, found = install_claude_code(tmp / "npm")
            if self.claude is None:
                self.claude_skip = found
            else:
                self.claude_version = found
        else:
            self.claude_skip = "the quick run leaves Claude Code out (full run only)"

    def close(self) -> None:
        if self.model is not None:
            self.model.close()
        self._tmp.cleanup()

    # -- argv of each program -------------------------------------------------------------

    def _cat_code_oneshot(self) -> list[str]:
        return [*cat_code_command(), "--mcp-config", str(self.config), "-p", PROMPT,
                "--allow-tool", "mcp__echo__echo"]  # fmt: skip

    def _claude_oneshot(self) -> list[str]:
        assert self.claude is not None
        return [str(self.claude), "-p", PROMPT, "--allowedTools", "mcp__echo__echo"]

    # -- workloads ----------------------------------------------------------------------

    def claude_code_oneshot(self, impl: str) -> dict[str, float]:
        argv = self._cat_code_oneshot() if impl == "cat_code" else self._claude_oneshot()
        seconds, rss, output = self.processes.run(argv, env=self.env, cwd=self.cwd)
        if ANSWER not in output:
            raise AssertionError(f"{impl} -p printed {output[-300:]!r}, not the tool's answer")
        return {"peer.claude_code.oneshot": seconds, "peer.claude_code.oneshot.rss": rss}

    def claude_code_mcp_list(self, impl: str) -> dict[str, float]:
        if impl == "cat_code":
            argv = [*cat_code_command(), "mcp", "list", "--mcp-config", str(self.config)]
        else:
            assert self.claude is not None
            argv = [str(self.claude), "mcp", "list"]
        seconds, rss, output = self.processes.run(argv, env=self.env, cwd=self.cwd)
        if output.count("onnected") < 2 and output.count("CONNECTED") < 2:
            raise AssertionError(f"{impl} mcp list printed {output[-400:]!r}")
        return {"peer.claude_code.mcp_list": seconds, "peer.claude_code.mcp_list.rss": rss}

    def first_token(self, impl: str) -> dict[str, float]:
        if impl == "cat_code":
            argv = self._cat_code_oneshot()
        else:
            argv = [PYTHON, str(BENCH / "bare_agent.py"), "oneshot", str(self.config), PROMPT]
        return {"oneshot.first_token": _first_output(argv, self.env, self.cwd)}

    def repl_ready(self, impl: str) -> dict[str, float]:
        if impl == "cat_code":
            argv = [*cat_code_command(), "--mcp-config", str(self.config)]
        else:
            argv = [PYTHON, str(BENCH / "bare_agent.py"), "repl", str(self.config)]
        env = {**self.env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1"}
        return {"repl.ready": _prompt_time(argv, env, self.cwd)}


def _first_output(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawn to the first byte on stdout; the run must then succeed."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=env, cwd=cwd,
    )  # fmt: skip
    assert process.stdout is not None
    try:
        ready, _, _ = select.select([process.stdout], [], [], RUN_TIMEOUT_S)
        first = time.perf_counter() - start
        if not ready:
            raise AssertionError(f"{argv[0]} wrote nothing in {RUN_TIMEOUT_S} s")
        out, err = process.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if process.returncode != 0 or ANSWER.encode() not in out:
        raise AssertionError(f"{argv} exited {process.returncode}: {out[-200:]!r} {err[-500:]!r}")
    return first


def _prompt_time(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawn to the prompt ``›`` on a pseudo-terminal; then EOF ends it."""
    import pexpect

    start = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], env=env, cwd=str(cwd), dimensions=(50, 120))
    try:
        seen = b""
        while "›".encode() not in _ANSI.sub(b"", seen):
            left = RUN_TIMEOUT_S - (time.perf_counter() - start)
            if left <= 0:
                raise AssertionError(f"{argv} showed no prompt: {seen[-300:]!r}")
            seen += child.read_nonblocking(65536, timeout=left)
        ready = time.perf_counter() - start
        child.sendeof()
        child.expect(pexpect.EOF, timeout=RUN_TIMEOUT_S)
    finally:
        child.close(force=True)
    return ready


__all__ = ["EVERYTHING_SERVER", "PeerBench", "install_claude_code"]
