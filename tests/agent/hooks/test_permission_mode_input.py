"""A hook's input names the session's permission mode as it is at that event."""

from __future__ import annotations

from pathlib import Path

from cat_code.agent.permission_modes import PermissionMode
from cat_code.agent.session import Session


def test_the_hook_input_names_the_sessions_permission_mode_as_it_changes(tmp_path: Path) -> None:
    session = Session(model="nowhere", approve_all=False, allow_patterns=None, cwd=tmp_path)
    assert session.hooks.permission_mode() == "default"
    session.permissions.mode = PermissionMode.PLAN
    assert session.hooks.permission_mode() == "plan"
