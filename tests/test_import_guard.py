"""``cat-code mcp`` and ``--help`` must stay light: no model SDK, no terminal UI, no REPL.

Each test runs the real command path in a fresh interpreter and inspects its
``sys.modules`` afterwards, so an import added anywhere on the path (a module-level
``import anthropic`` in a shared helper, say) fails here at once, long before it
shows in the benchmark's start-up times.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ECHO_SERVER = REPO / "examples" / "echo_server.py"
#: Top-level packages the ``mcp`` commands and ``--help`` must never load.
HEAVY = {
    "anthropic",  # model SDKs and what only they pull in
    "openai",
    "pydantic",
    "prompt_toolkit",  # the terminal UI
    "rich",
    "mcp",  # the official SDK: a benchmark peer, never a dependency of src/
    "pathspec",  # .gitignore matching: only the file tools need it
    "filelock",  # only an edit of mcp.json or settings.json takes a lock
    "jwt",  # PyJWT: only private_key_jwt and DPoP sign anything
    "yaml",  # PyYAML: only a loaded skill's frontmatter is parsed
}
#: Only an HTTP server needs the HTTP client.
HTTP_CLIENT = {"httpx2", "httpcore2", "httpx", "httpcore", "h11", "h2"}
#: Our own floors above the host runtime.
OWN_HEAVY = ("cat_code.agent", "cat_code.repl")

_PROBE = """
import json, sys
from cat_code.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code or 0
sys.stdout.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
sys.exit(code)
"""


def _loaded_modules(*argv: str) -> tuple[str, set[str]]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    output, _, modules = result.stdout.rpartition("\nMODULES ")
    return output, set(json.loads(modules))


def _heavy(modules: set[str], forbidden: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in forbidden or m.startswith(OWN_HEAVY))


@pytest.mark.parametrize(
    ("command", "proof"),
    [
        (["list"], "CONNECTED"),
        (["tools"], "mcp__echo__echo"),
        (["call", "mcp__echo__echo", '{"text": "guarded"}'], "guarded"),
        (["get", "echo"], "CONNECTED, 6 tool(s)"),
    ],
    ids=["list", "tools", "call", "get"],
)
def test_mcp_commands_with_a_stdio_server_load_no_model_sdk_ui_or_http_client(
    tmp_path: Path, command: list[str], proof: str
) -> None:
    config = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    config.write_text(json.dumps({"mcpServers": {"echo": entry}}), encoding="utf-8")

    output, modules = _loaded_modules("mcp", *command, "--mcp-config", str(config))

    assert proof in output  # the path really ran: connect, handshake, tools/list (, call)
    assert "cat_code.mcp.transports.stdio" in modules
    assert _heavy(modules, HEAVY | HTTP_CLIENT) == []


def test_help_loads_no_model_sdk_ui_http_client_or_asyncio() -> None:
    output, modules = _loaded_modules("--help")

    assert "usage: cat-code" in output
    assert _heavy(modules, HEAVY | HTTP_CLIENT | {"asyncio"}) == []
