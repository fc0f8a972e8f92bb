"""Settings files: ``$CAT_CODE_HOME/settings.json`` (the user's, written by cat-code) and
the project's ``.cat-code/settings.json`` (only ever read), found by `project_settings_path`:
the nearest one from the working directory up to the git root (a folder holding a ``.git``
of the user's own) or, outside a repository, in the working directory only; never in the
home directory from below (home's own is the user's folder, not a project's, so it is
looked at only when cat-code runs right there). A project's allow rules apply only once
approved (`cat_code.host.config.project_trust`).

A settings file is one JSON object. `read_settings` gives it whole (a missing file is
``{}``) or raises `SettingsError` naming the file and what is wrong. `update_settings`
holds the file's edit lock (`cat_code.host.state.home.edit_lock`) from reading the file to
writing it, changes only what its caller changes, keeps every other key as it was, and
writes atomically (`cat_code.base.files.atomic_write`: the user's file 0600, a project's
keeps its mode, a new one 0600, a symlink written through), so a crash never leaves half
a file and two cat-codes saving at once both land. A broken file is never overwritten.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cat_code.base.files import (
    FileLockTimeout,
    JsonTooDeep,
    atomic_write,
    parse_json,
    read_bounded,
)
from cat_code.host.state.home import cat_code_home, edit_lock, home_file_mode

logger = logging.getLogger(__name__)

SETTINGS_FILE = "settings.json"
#: The project's settings, relative to the working directory.
PROJECT_SETTINGS = Path(".cat-code") / SETTINGS_FILE

Settings = dict[str, Any]


class SettingsError(Exception):
    """A settings file that cannot be read or written; the message names the file."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def user_settings_path() -> Path:
    return cat_code_home() / SETTINGS_FILE


def project_settings_path(cwd: Path | None = None) -> Path:
    """The project's settings file: the first ``.cat-code/settings.json`` walking up from
    ``cwd`` to the project's root (`project_root`), never into the home directory from
    below; ``cwd``'s own (absent) file when there is none."""
    start = (cwd or Path.cwd()).absolute()
    home = _home()
    top = project_root(start)
    for folder in (start, *start.parents):
        if folder == home and folder != start:
            break  # the home folder's .cat-code is the user's, not a project's
        candidate = folder / PROJECT_SETTINGS
        if candidate.is_file():
            return candidate
        if folder == top:
            break  # folders above belong to something else
    return start / PROJECT_SETTINGS


def project_root(start: Path) -> Path:
    """The git root above ``start`` (the nearest folder holding a ``.git`` of the user's
    own), else ``start`` itself: without a repository the search never climbs, so a
    ``.cat-code`` another user left in a shared parent (``/tmp``) applies to nobody. A
    ``.git`` owned by someone else is not a root (git's own ``safe.directory`` rule); the
    ``.git`` itself is judged (lstat), not where a link leads: another user's ``.git`` link
    to a folder of ours is theirs."""
    for folder in (start, *start.parents):
        try:
            owner = (folder / ".git").lstat().st_uid
        except OSError:
            continue
        mine = not hasattr(os, "getuid") or owner == os.getuid()
        return folder if mine else start
    return start


def _home() -> Path | None:
    try:
        return Path.home().absolute()
    except RuntimeError:  # no home directory can be determined
        return None


def read_settings(path: Path) -> Settings:
    """The settings in ``path`` (``{}`` when there is no such file)."""
    try:
        text = read_bounded(path).decode("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise SettingsError(path, f"cannot be read ({reason})") from None
    if not text.strip():
        return {}
    try:
        data = parse_json(text)
    except JsonTooDeep as exc:
        raise SettingsError(path, f"is not a settings file ({exc})") from None
    except json.JSONDecodeError as exc:
        raise SettingsError(
            path, f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(data, dict):
        raise SettingsError(path, f"must hold a JSON object, not {type(data).__name__}")
    return data


def update_settings(path: Path, change: Callable[[Settings], None]) -> Settings:
    """Apply ``change`` to the file's current settings and write them back atomically;
    the settings written. Raises `SettingsError` (nothing written) when the file is broken
    or cannot be written."""
    try:
        with edit_lock(path):
            settings = read_settings(path)
            change(settings)
            write_settings(path, settings)
    except FileLockTimeout as exc:
        raise SettingsError(
            path, f"is being saved by another cat-code for more than {exc.waited:g} s"
        ) from None
    except OSError as exc:  # the lock's folder cannot be made
        raise SettingsError(path, f"cannot be written ({exc})") from None
    return settings


def write_settings(path: Path, settings: Settings) -> None:
    """Replace ``path`` with ``settings`` in one rename (see the module docstring)."""
    text = json.dumps(settings, indent=2, ensure_ascii=False) + "\n"
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write(path, text, mode=home_file_mode(path))
    except OSError as exc:
        raise SettingsError(path, f"cannot be written ({exc})") from None


__all__ = [
    "PROJECT_SETTINGS",
    "SETTINGS_FILE",
    "Settings",
    "SettingsError",
    "project_root",
    "project_settings_path",
    "read_settings",
    "update_settings",
    "user_settings_path",
    "write_settings",
]
