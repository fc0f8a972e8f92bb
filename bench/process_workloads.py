"""Workloads that each run a fresh process: the command line, imports, and memory.

A sample is the wall time of one process from spawn to exit and its peak RSS, both
taken by `bench/spawner.py` (see there why a separate small spawner), or a number the
process prints about itself. Start-up is the point
here, so nothing is warmed up inside the process; the OS file cache is warm because
every repetition runs every client. Servers come from the bench, configs from a
temporary ``CAT_CODE_HOME`` so no user file is read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from workloads import BENCH, STDIO_SERVER

REPO = BENCH.parent
PYTHON = sys.executable
ECHO_SERVER = REPO / "examples" / "echo_server.py"

#: The wall time ``cat-code --help`` is held against (issue: at most 2x of this).
BASELINE_IMPORT = "import asyncio, json"


def cat_code_command() -> list[str]:
    script = Path(PYTHON).with_name("cat-code")
    return [str(script)] if script.exists() else [PYTHON, "-m", "cat_code"]


class ProcessBench:
    """Commands and scratch files for the process workloads; `close` removes them."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="cat-code-bench-")
        tmp = Path(self._tmp.name)
        self.home = tmp / "home"
        self.home.mkdir()
        self.config = tmp / "mcp.json"
        entry = {"command": PYTHON, "args": [str(ECHO_SERVER)]}
        self.config.write_text(json.dumps({"mcpServers": {"echo": entry}}), encoding="utf-8")
        self.env = {**os.environ, "CAT_CODE_HOME": str(self.home)}
        self.env.pop("PYTHONPATH", None)
        self.cwd = tmp
        self._dir = tmp
        self._spawner = subprocess.Popen(
            [PYTHON, "-I", "-S", str(BENCH / "spawner.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def close(self) -> None:
        assert self._spawner.stdin is not None
        self._spawner.stdin.close()
        self._spawner.wait()
        self._tmp.cleanup()

    def run(
        self, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> tuple[float, float, str]:
        """Wall seconds, peak RSS in MB, and stdout of one run; raises if it fails."""
        stdout, stderr = self._dir / "stdout", self._dir / "stderr"
        request = {
            "argv": argv,
            "env": self.env if env is None else env,
            "cwd": str(self.cwd if cwd is None else cwd),
            "stdout": str(stdout),
            "stderr": str(stderr),
        }
        spawner = self._spawner
        assert spawner.stdin is not None and spawner.stdout is not None
        spawner.stdin.write(json.dumps(request) + "\n")
        spawner.stdin.flush()
        line = spawner.stdout.readline()
        if not line:
            raise RuntimeError(f"the spawner died (exit {spawner.wait()})")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"cannot run {argv}: {answer['error']}")
        output = stdout.read_text(errors="replace")
        if answer["status"] != 0:
            errors = stderr.read_text(errors="replace")
            raise RuntimeError(f"{argv} exited {answer['status']}: {errors[-2000:]}")
        return answer["seconds"], answer["peak_rss_kib"] / 1024, output

    # -- the workloads ------------------------------------------------------------------

    def cli_help(self, impl: str) -> dict[str, float]:
        """``cat-code --help``; its floor is ``python -c "import asyncio, json"``."""
        if impl == "sdk":
            return {}
        if impl == "cat_code":
            elapsed, rss, output = self.run([*cat_code_command(), "--help"])
            if "usage: cat-code" not in output:
                raise AssertionError(f"cat-code --help printed {output[:200]!r}")
        else:
            elapsed, rss, _ = self.run([PYTHON, "-c", BASELINE_IMPORT])
        return {"cli.help": elapsed, "cli.help.rss": rss}

    def cli_mcp_list(self, impl: str) -> dict[str, float]:
        """``cat-code mcp list`` with the example server, against SDK and floor scripts."""
        if impl == "cat_code":
            argv = [*cat_code_command(), "mcp", "list", "--mcp-config", str(self.config)]
        else:
            argv = [PYTHON, str(BENCH / "cli_peers.py"), impl, str(self.config)]
        elapsed, rss, output = self.run(argv)
        if "CONNECTED" not in output:
            raise AssertionError(f"{impl} mcp list printed {output[:300]!r}")
        return {"cli.mcp_list": elapsed, "cli.mcp_list.rss": rss}

    def imports(self, impl: str) -> dict[str, float]:
        """Import time of ``cat_code`` and of what ``cat-code mcp`` needs, in a fresh process."""
        modules = {
            "cat_code": ("cat_code", "cat_code.cli.mcp_servers, cat_code.mcp.transports.stdio"),
            "sdk": ("mcp", "mcp.client.stdio, mcp"),
            "floor": ("asyncio, json", "asyncio, json"),
        }[impl]
        samples = {}
        for name, module in zip(("import.cat_code", "import.cat_code_mcp"), modules, strict=True):
            code = (
                "import time, sys\nt = time.perf_counter()\n"
                f"import {module}\n"
                "sys.stdout.write(repr(time.perf_counter() - t))"
            )
            _, _, output = self.run([PYTHON, "-c", code])
            samples[name] = float(output)
        return samples

    def memory(self, impl: str, servers: int) -> dict[str, float]:
        """Peak RSS of one process holding ``servers`` stdio connections."""
        _, _, output = self.run([PYTHON, str(BENCH / "mem_probe.py"), impl, str(servers)])
        return {"memory.20_servers": float(json.loads(output)["peak_rss_mb"])}


ProcessWorkload = Callable[[str], dict[str, float]]
__all__ = [
    "BASELINE_IMPORT",
    "REPO",
    "STDIO_SERVER",
    "ProcessBench",
    "ProcessWorkload",
    "cat_code_command",
]
