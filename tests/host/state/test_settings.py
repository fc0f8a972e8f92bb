"""Settings files: read whole, written atomically with every other key kept, never
overwritten when broken."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from cat_code.host.state.settings import (
    SettingsError,
    project_settings_path,
    read_settings,
    update_settings,
    user_settings_path,
    write_settings,
)


def test_a_missing_or_empty_file_is_no_settings(tmp_path: Path) -> None:
    assert read_settings(tmp_path / "absent.json") == {}
    (tmp_path / "empty.json").write_text("\n")
    assert read_settings(tmp_path / "empty.json") == {}


def test_the_user_file_lives_in_cat_code_home(cat_code_home: Path) -> None:
    assert user_settings_path() == cat_code_home / "settings.json"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"permissions": ', "is not valid JSON (Expecting value at line 1, column 17)"),
        ("[1, 2]", "must hold a JSON object, not list"),
    ],
)
def test_a_broken_file_is_named_with_what_is_wrong(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(SettingsError) as caught:
        read_settings(path)
    assert str(caught.value) == f"{path}: {problem}"


def test_an_update_keeps_every_other_key_and_the_files_mode(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = {"theme": "dark", "permissions": {"deny": ["x"], "note": 1}, "z": [1, {"a": None}]}
    path.write_text(json.dumps(original))
    os.chmod(path, 0o640)

    def add(settings: dict[str, object]) -> None:
        settings["permissions"]["allow"] = ["mcp__echo__*"]  # type: ignore[index]

    update_settings(path, add)
    assert json.loads(path.read_text()) == {
        **original,
        "permissions": {"deny": ["x"], "note": 1, "allow": ["mcp__echo__*"]},
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]  # no temporary left


def test_the_users_settings_left_open_by_an_old_version_are_written_private(
    cat_code_home: Path,
) -> None:
    path = user_settings_path()
    path.write_text('{"theme": "dark"}')
    path.chmod(0o644)
    update_settings(path, lambda settings: settings.update(x=1))
    assert json.loads(path.read_text()) == {"theme": "dark", "x": 1}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_broken_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"permissions": {"allow": [}')
    with pytest.raises(SettingsError):
        update_settings(path, lambda settings: settings.update(x=1))
    assert path.read_text() == '{"permissions": {"allow": [}'


def test_a_write_that_fails_says_so_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.mkdir()  # the rename over it fails (as root too, unlike a read-only folder)
    with pytest.raises(SettingsError, match="cannot be written"):
        write_settings(path, {"a": 2})
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]
    assert path.is_dir()


# -- where the project's file is found ------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder holding a repository with a deep folder."""
    home = tmp_path / "home"
    (home / "repo" / "src" / "deep").mkdir(parents=True)
    (home / "repo" / ".git").mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def project_file(folder: Path) -> Path:
    path = folder / ".cat-code" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    return path


def test_the_project_file_is_the_nearest_one_up_to_the_git_root(tree: Path) -> None:
    deep = tree / "repo" / "src" / "deep"
    assert project_settings_path(deep) == deep / ".cat-code" / "settings.json"  # none yet
    root = project_file(tree / "repo")
    assert project_settings_path(deep) == root
    nearer = project_file(tree / "repo" / "src")
    assert project_settings_path(deep) == nearer
    assert project_settings_path(tree / "repo") == root


def test_the_walk_stops_at_the_git_root_and_below_home(tree: Path) -> None:
    project_file(tree)  # home's own .cat-code is the user's folder, not a project's
    project_file(tree.parent)  # above home
    deep = tree / "repo" / "src" / "deep"
    assert project_settings_path(deep) == deep / ".cat-code" / "settings.json"
    plain = tree / "notes" / "sub"
    plain.mkdir(parents=True)
    assert project_settings_path(plain) == plain / ".cat-code" / "settings.json"
    assert project_settings_path(tree) == tree / ".cat-code" / "settings.json"  # run in home
    (tree / "repo" / ".git").rmdir()
    outside = tree.parent / "work" / "x"
    outside.mkdir(parents=True)  # not under home, no git: the working directory only
    assert project_settings_path(outside) == outside / ".cat-code" / "settings.json"


def test_finding_5_without_a_git_root_a_settings_file_in_a_parent_folder_does_not_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    shared = tmp_path / "shared"  # like /tmp: another user left a .cat-code there
    project_file(shared)
    work = shared / "me" / "work"
    work.mkdir(parents=True)
    assert project_settings_path(work) == work / ".cat-code" / "settings.json"
    own = project_file(work)
    assert project_settings_path(work) == own
    (shared / "me" / ".git").mkdir()  # in a repository: up to its root, not above
    repo_file = project_file(shared / "me")
    own.unlink()
    assert project_settings_path(work) == repo_file


def test_a_git_folder_owned_by_someone_else_is_no_project_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / ".git").mkdir()
    project_file(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    assert project_settings_path(work) == tmp_path / ".cat-code" / "settings.json"
    mine = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: mine + 1)  # the .git is now another user's
    assert project_settings_path(work) == work / ".cat-code" / "settings.json"
