"""Signals end every command, and every MCP server with it: the real ``cat-code`` as a process.

Each run configures two servers, each with a grandchild: ``slow`` ignores stdin EOF,
``slow__stubborn`` ignores SIGTERM too, so a close goes all the way to SIGKILL. (The
names share a prefix so that ``mcp call mcp__slow__stubborn__block``, which starts only
the servers a tool name can belong to, starts both.) A run is signalled once the command
is stuck with its servers up — in a tool call that never returns, or in a tools/list
that is never answered — and must exit with 128 + N leaving no pid alive. The three
signals of one command run side by side: the closes' grace periods overlap.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_tool_use
from scripted.processes import REPO, alive
from scripted.terminal import Terminal

SERVER = REPO / "tests" / "servers" / "misbehaving_server.py"
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
BLOCKING_TOOL = "mcp__slow__stubborn__block"
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    """Poll files until ``condition`` holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except OSError:
        return []


class Servers:
    """The two servers' config in a folder of their own, and what they wrote there."""

    NAMES = ("slow", "slow__stubborn")

    def __init__(self, folder: Path, *, hang_tools_list: bool = False) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        entries = {}
        for name in self.NAMES:
            flags = ["--ignore-eof", "--tools", "echo,block"]
            if name == "slow__stubborn":
                flags.append("--ignore-term")
                if hang_tools_list:
                    flags.append("--hang-tools-list")
            flags += [
                "--pid-file", str(folder / f"{name}.pid"),
                "--grandchild-pid-file", str(folder / f"{name}.grandchild.pid"),
                "--log-requests", str(self.log(name)),
            ]  # fmt: skip
            entries[name] = {
                "command": sys.executable,
                "args": [str(SERVER), *flags],
                "startupTimeoutMs": 120_000,
                "requestTimeoutMs": 120_000,
            }
        self.config = folder / "mcp.json"
        self.config.write_text(json.dumps({"mcpServers": entries}))

    def log(self, name: str) -> Path:
        return self.folder / f"{name}.log"

    def pids(self) -> list[int]:
        """Every server and grandchild pid written so far."""
        found = []
        for path in self.folder.glob("*.pid"):
            text = path.read_text().strip()
            if text:
                found.append(int(text))
        return found

    def wait_until_running(self, stuck_on: str) -> None:
        """Until both servers and grandchildren are up, and the stubborn server got
        ``stuck_on`` (a request it never answers) while the other one answered tools/list."""
        wait_for(lambda: len(self.pids()) == 4, f"4 pids in {self.folder}")
        wait_for(lambda: "tools/list" in lines(self.log("slow")), "slow to be listed")
        wait_for(lambda: stuck_on in lines(self.log("slow__stubborn")), stuck_on)

    def kill_leftovers(self) -> None:
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def environment(home: Path, api: ScriptedModelApi | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env["HOME"] = str(home)  # no SDK profile files, no real history
    if api is not None:
        env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    return env


COMMANDS: dict[str, tuple[list[str], str]] = {
    # name: (the arguments after --mcp-config PATH, what the stubborn server is stuck on)
    "mcp list": (["mcp", "list"], "tools/list"),
    "mcp tools": (["mcp", "tools"], "tools/list"),
    "mcp call": (["mcp", "call", BLOCKING_TOOL], "tools/call block"),
    "-p": (["-p", "block", "--yes"], "tools/call block"),
}


@pytest.fixture
def model_api() -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as api:
        yield api
    assert api.errors == []


def start_command(
    folder: Path, command: str, api: ScriptedModelApi
) -> tuple[Servers, subprocess.Popen[str]]:
    args, _ = COMMANDS[command]
    servers = Servers(folder, hang_tools_list=args[:1] == ["mcp"] and args[1] != "call")
    if command == "-p":
        api.add(anthropic_tool_use(BLOCKING_TOOL, {}))
    process = subprocess.Popen(
        [sys.executable, "-m", "cat_code", "--mcp-config", str(servers.config), *args],
        cwd=folder,
        env=environment(folder, api),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return servers, process


def end(process: subprocess.Popen[str]) -> tuple[int, str]:
    """The exit code and stderr of a signalled command (bounded)."""
    _, err = process.communicate(timeout=30)
    return process.returncode, err


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
def test_sigint_sigterm_and_sighup_close_every_server_and_exit_128_plus_n(
    tmp_path: Path, command: str, model_api: ScriptedModelApi
) -> None:
    runs = [start_command(tmp_path / sig.name, command, model_api) for sig in SIGNALS]
    try:
        for servers, _ in runs:
            servers.wait_until_running(COMMANDS[command][1])
        pids = [servers.pids() for servers, _ in runs]
        assert all(alive(pid) for group in pids for pid in group)

        for sig, (_, process) in zip(SIGNALS, runs, strict=True):
            process.send_signal(sig)

        for sig, (_, process), group in zip(SIGNALS, runs, pids, strict=True):
            code, err = end(process)
            assert code == 128 + sig, f"{sig.name}: {err}"
            assert f"interrupted by {sig.name}" in err
            assert not [pid for pid in group if alive(pid)], sig.name
    finally:
        for servers, process in runs:
            if process.poll() is None:
                process.kill()
                process.communicate()
            servers.kill_leftovers()


@pytest.mark.slow
def test_a_run_signalled_as_soon_as_its_servers_are_up_closes_them_and_exits_128_plus_n(
    tmp_path: Path, model_api: ScriptedModelApi
) -> None:
    # -p spawns its servers before it imports the agent (`cat_code.cli.early`): a signal
    # now most likely comes before the run's own handlers, and must end the same way.
    runs = [start_command(tmp_path / sig.name, "-p", model_api) for sig in SIGNALS]
    try:
        for servers, _ in runs:
            wait_for(lambda s=servers: len(s.pids()) == 4, "4 pids")
        pids = [servers.pids() for servers, _ in runs]

        for sig, (_, process) in zip(SIGNALS, runs, strict=True):
            process.send_signal(sig)

        for sig, (_, process), group in zip(SIGNALS, runs, pids, strict=True):
            code, err = end(process)
            assert code == 128 + sig, f"{sig.name}: {err}"
            assert f"interrupted by {sig.name}" in err
            assert not [pid for pid in group if alive(pid)], sig.name
    finally:
        for servers, process in runs:
            if process.poll() is None:
                process.kill()
                process.communicate()
            servers.kill_leftovers()


def test_a_second_sigint_during_shutdown_hurries_the_close_and_still_exits_130(
    tmp_path: Path, model_api: ScriptedModelApi
) -> None:
    servers, process = start_command(tmp_path, "mcp call", model_api)
    try:
        servers.wait_until_running("tools/call block")
        pids = servers.pids()
        process.send_signal(signal.SIGINT)
        # The stubborn server has had its SIGTERM: its grace before SIGKILL has begun.
        wait_for(lambda: "SIGTERM" in lines(servers.log("slow__stubborn")), "the SIGTERM")
        assert process.poll() is None  # still closing

        process.send_signal(signal.SIGINT)

        code, err = end(process)
        assert code == 130, err
        assert not [pid for pid in pids if alive(pid)]
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        servers.kill_leftovers()


# -- the REPL ----------------------------------------------------------------------------


def start_repl(folder: Path, api: ScriptedModelApi) -> tuple[Servers, Terminal]:
    servers = Servers(folder)
    args = ["-m", "cat_code", "--mcp-config", str(servers.config), "--yes"]
    terminal = Terminal(sys.executable, args, env=environment(folder, api), cwd=folder)
    return servers, terminal


def drain(terminal: Terminal) -> None:
    """Read what the REPL drew so far, so its spinner never fills the pty and blocks it."""
    child: Any = terminal.child
    try:
        while True:
            terminal.raw += child.read_nonblocking(65536, timeout=0)
    except Exception:  # pexpect's TIMEOUT (nothing more now) or EOF
        pass


@pytest.mark.slow
def test_the_repl_closes_every_server_on_sigterm_or_sighup_in_a_turn_and_sigint_at_the_prompt(
    tmp_path: Path, model_api: ScriptedModelApi
) -> None:
    runs = {sig: start_repl(tmp_path / sig.name, model_api) for sig in SIGNALS}
    try:
        for _, terminal in runs.values():
            terminal.wait_for("MCP: 2 server(s)", timeout=30)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            model_api.add(anthropic_tool_use(BLOCKING_TOOL, {}))
            runs[sig][1].type("call the blocking tool")
        for sig, (servers, _) in runs.items():
            # SIGINT waits at the idle prompt: in a turn it would cancel only the turn.
            stuck_on = "tools/list" if sig is signal.SIGINT else "tools/call block"

            def stuck(servers: Servers = servers, stuck_on: str = stuck_on) -> bool:
                for _, other in runs.values():
                    drain(other)
                return stuck_on in lines(servers.log("slow__stubborn"))

            wait_for(stuck, f"the {sig.name} REPL to be at {stuck_on}")
        pids = {sig: servers.pids() for sig, (servers, _) in runs.items()}
        assert all(alive(pid) for group in pids.values() for pid in group)

        for sig, (_, terminal) in runs.items():
            terminal.signal(sig)

        for sig, (_, terminal) in runs.items():
            assert terminal.wait_for_exit() == 128 + sig, sig.name
            assert not [pid for pid in pids[sig] if alive(pid)], sig.name
    finally:
        for servers, terminal in runs.values():
            terminal.close()
            servers.kill_leftovers()
