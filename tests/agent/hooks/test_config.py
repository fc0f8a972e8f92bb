"""Reading hooks from the settings files: the user's always, a project's only once approved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cat_code.agent.hooks import HookEvent, HookScope, load_hooks, parse_hooks
from cat_code.host.config.project_trust import decide_content, project_content
from cat_code.host.config.trust import ContentKind, TrustDecision


def hooks(event: str, command: str, matcher: str = "", **extra: Any) -> dict[str, Any]:
    entry = {"type": "command", "command": command, **extra}
    return {"hooks": {event: [{"matcher": matcher, "hooks": [entry]}]}}


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    (folder / ".git").mkdir(parents=True)
    (folder / ".cat-code").mkdir()
    return folder


def test_a_well_formed_entry_becomes_one_command_hook_with_its_timeout() -> None:
    raw = hooks("PreToolUse", "check.sh", "shell", timeout=5)["hooks"]
    [hook], warnings = parse_hooks(raw, Path("s.json"), HookScope.USER)
    assert warnings == []
    assert (hook.event, hook.matcher, hook.command, hook.timeout_s) == (
        HookEvent.PRE_TOOL_USE, "shell", "check.sh", 5.0,
    )  # fmt: skip


def test_bad_entries_are_named_and_skipped_while_the_good_ones_hold() -> None:
    raw = {
        "PreToolUze": [],
        "Stop": [{"hooks": [{"type": "prompt", "prompt": "x"}, {"command": "ok.sh"}]}],
        "PostToolUse": [{"matcher": "x", "hooks": [{"command": "t.sh", "timeout": -1}]}],
        "SessionEnd": "nope",
        "PreToolUse": [{"matcher": "(bad", "hooks": [{"command": "x.sh"}]}],
    }
    found, warnings = parse_hooks(raw, Path("s.json"), HookScope.USER)
    assert [h.command for h in found] == ["ok.sh", "x.sh"]
    assert len(warnings) == 5
    assert all(w.startswith("s.json: ") for w in warnings)
    assert "unknown hook event 'PreToolUze'" in warnings[0]
    assert "matcher '(bad' is not a valid regular expression" in warnings[4]


def test_the_user_and_both_project_files_add_up_but_project_hooks_wait_for_approval(
    tmp_path: Path, cat_code_home: Path
) -> None:
    (cat_code_home / "settings.json").write_text(json.dumps(hooks("Stop", "user.sh")))
    repo = project(tmp_path)
    (repo / ".cat-code" / "settings.json").write_text(json.dumps(hooks("Stop", "shared.sh")))
    local = repo / ".cat-code" / "settings.local.json"
    local.write_text(json.dumps(hooks("Stop", "mine.sh")))

    config = load_hooks(repo)
    assert [(h.command, h.scope, h.approved) for h in config.hooks] == [
        ("user.sh", HookScope.USER, True),
        ("shared.sh", HookScope.PROJECT, False),
        ("mine.sh", HookScope.PROJECT, False),
    ]
    assert [h.command for h in config.for_event(HookEvent.STOP)] == ["user.sh"]

    decide_content(TrustDecision.APPROVED, (ContentKind.HOOKS,), cwd=repo)
    assert [h.command for h in load_hooks(repo).active] == ["user.sh", "shared.sh", "mine.sh"]

    local.write_text(json.dumps(hooks("Stop", "changed.sh")))  # a changed hook asks again
    assert [h.command for h in load_hooks(repo).active] == ["user.sh"]
    assert [h.command for h in load_hooks(repo, trust_project=True).active] == [
        "user.sh", "shared.sh", "changed.sh",
    ]  # fmt: skip


def test_project_hooks_are_one_kind_of_project_content_listing_each_command(
    tmp_path: Path,
) -> None:
    repo = project(tmp_path)
    (repo / ".cat-code" / "settings.json").write_text(json.dumps(hooks("PreToolUse", "a.sh")))
    [content] = project_content(repo)
    assert content.kind is ContentKind.HOOKS
    assert content.items == ("PreToolUse: a.sh",)
    assert content.decision is None


def test_a_rejected_project_hook_stays_withheld(tmp_path: Path) -> None:
    repo = project(tmp_path)
    (repo / ".cat-code" / "settings.json").write_text(json.dumps(hooks("Stop", "a.sh")))
    decide_content(TrustDecision.REJECTED, (ContentKind.HOOKS,), cwd=repo)
    config = load_hooks(repo)
    assert config.rejected and [h.command for h in config.withheld] == ["a.sh"]
