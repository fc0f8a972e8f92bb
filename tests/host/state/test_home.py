"""``$CAT_CODE_HOME``: made 0700, its files 0600, one edit lock per file however it is named."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from cat_code.base.files import FileLockTimeout, file_lock
from cat_code.host.state.home import edit_lock, ensure_home, private_file, write_private


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "not-yet" / ".cat-code"
    monkeypatch.setenv("CAT_CODE_HOME", str(home))
    return home


def test_the_home_folder_and_its_folders_are_made_private(fresh_home: Path) -> None:
    assert ensure_home("tool-output") == fresh_home / "tool-output"
    assert _mode(fresh_home) == 0o700
    assert _mode(fresh_home / "tool-output") == 0o700


def test_a_home_left_open_by_an_old_version_is_tightened(fresh_home: Path) -> None:
    fresh_home.mkdir(parents=True, mode=0o755)
    fresh_home.chmod(0o755)
    ensure_home()
    assert _mode(fresh_home) == 0o700


def test_files_written_in_the_home_are_private(fresh_home: Path) -> None:
    write_private(fresh_home / "eras.json", "{}")
    assert _mode(fresh_home / "eras.json") == 0o600
    history = ensure_home() / "history"
    history.write_text("old\n")
    history.chmod(0o644)
    private_file(history)
    assert _mode(history) == 0o600 and history.read_text() == "old\n"


def test_the_edit_lock_is_one_lock_for_a_file_and_its_links(tmp_path: Path) -> None:
    real = tmp_path / "mcp.json"
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with edit_lock(real), pytest.raises(FileLockTimeout), edit_lock(link, timeout=0.05):
        pass
    with edit_lock(link, timeout=5):
        pass
    assert not list(tmp_path.glob("*.lock"))  # the project folder gets no lock file
    (lock,) = (ensure_home("locks")).iterdir()
    with pytest.raises(FileLockTimeout), edit_lock(real), file_lock(lock, timeout=0.05):
        pass
