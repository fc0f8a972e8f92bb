"""Shared fixtures: every test runs with its own CAT_CODE_HOME, never the real home.

Everything under ``tests/e2e/`` runs the real ``cat-code`` command and is marked ``e2e``
here (a conftest in that folder would shadow this one, which its tests import by the
name ``conftest``), so ``pytest -m "not e2e"`` is the fast inner loop.
"""

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
E2E = Path(__file__).resolve().parent / "e2e"


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.e2e)


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
