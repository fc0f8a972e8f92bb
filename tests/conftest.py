"""Shared fixtures: every test runs with its own CAT_CODE_HOME, never the real home."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
ECHO_SERVER = EXAMPLES / "echo_server.py"
NODE_MODULES = REPO / "node_modules"
EVERYTHING_SERVER = (
    NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("cat-code-home")
    monkeypatch.setenv("CAT_CODE_HOME", str(home))
    return home


@pytest.fixture
def cat_code_home(_isolated_home: Path) -> Path:
    return _isolated_home


@pytest.fixture
def python() -> str:
    return sys.executable


def node_available() -> bool:
    return shutil.which("node") is not None and EVERYTHING_SERVER.exists()
