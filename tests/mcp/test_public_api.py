"""``cat_code.mcp`` on its own: the public names, a cheap import, and the documented example.

The Python block of docs/library.md ("Using cat-code's MCP client in your own code") is taken
as it stands and run in a fresh interpreter against the bundled example server, so the
documented example cannot drift from the library.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import cat_code.mcp

REPO = Path(__file__).resolve().parents[2]
LIBRARY_DOC = REPO / "docs" / "library.md"
SECTION = "# Using cat-code's MCP client in your own code"


def _readme_example() -> str:
    text = LIBRARY_DOC.read_text(encoding="utf-8")
    assert SECTION in text, "docs/library.md lost its MCP library section"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the section should hold exactly one Python example"
    return blocks[0]


def test_the_readme_example_lists_the_echo_servers_tools_and_calls_one() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _readme_example()],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "tools: echo, add, reverse" in done.stdout
    assert "echo says: hello" in done.stdout
    assert "MCP failed" not in done.stdout


@pytest.mark.parametrize("name", cat_code.mcp.__all__)
def test_every_public_name_is_the_object_its_module_defines(name: str) -> None:
    value = getattr(cat_code.mcp, name)
    assert getattr(sys.modules[value.__module__], name) is value
    assert value.__module__.startswith("cat_code.mcp.")


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'McpPool'"):
        _ = cat_code.mcp.McpPool  # type: ignore[attr-defined]


def test_importing_the_package_loads_no_client_transport_or_http_client() -> None:
    probe = "import json, sys, cat_code.mcp; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert "cat_code.mcp.client" not in loaded
    assert not {m for m in loaded if m.startswith("cat_code.mcp.transports")}
    assert not {m for m in loaded if m.split(".")[0] in {"httpx2", "httpcore2", "asyncio"}}
