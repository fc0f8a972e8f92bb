"""Server processes for end-to-end tests: configs that record the server's pid, and liveness."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ECHO_SERVER = REPO / "examples" / "echo_server.py"
ELICIT_SERVER = Path(__file__).resolve().parent / "elicit_server.py"


def pid_recording_config(folder: Path, servers: dict[str, Path]) -> tuple[Path, dict[str, Path]]:
    """An mcp.json whose servers write their pid to a file first (``exec`` keeps the pid)."""
    entries = {}
    pidfiles = {}
    for name, script in servers.items():
        pidfile = folder / f"{name}.pid"
        command = f"echo $$ > {shlex.quote(str(pidfile))}; exec {shlex.quote(sys.executable)} "
        entries[name] = {"command": "sh", "args": ["-c", command + shlex.quote(str(script))]}
        pidfiles[name] = pidfile
    config = folder / "mcp.json"
    config.write_text(json.dumps({"mcpServers": entries}))
    return config, pidfiles


def read_pid(pidfile: Path) -> int:
    return int(pidfile.read_text().strip())


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True  # no /proc: trust kill(0)
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"
