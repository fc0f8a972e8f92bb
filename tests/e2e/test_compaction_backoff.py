"""Finding 12 of issue 24: compaction that cannot help does not run before every request.

The real ``cat-code -p`` in a project whose ``AGENTS.md`` alone fills most of the context
window; the scripted API reports each request's size as its input tokens, so the 80% rule
fires on every request. No summary can shrink the system prompt: one compaction, one
notice, then the conversation goes on."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from scripted.model_api import ScriptedModelApi, anthropic_error, anthropic_text, anthropic_tool_use
from test_oneshot import CAT_CODE, anthropic_env

from cat_code.agent.compaction import SUMMARY_SYSTEM


def test_finding_12_a_4_call_prompt_with_a_large_agents_md_compacts_a_bounded_number_of_times(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    # ~7,500 tokens of standing instructions in a 10,000-token window: every request is
    # over 80% before the conversation says a word.
    (project / "AGENTS.md").write_text("Always write tests first.\n" * 1_150)
    (project / "notes.md").write_text("notes\n")
    seen = {"calls": 0, "summaries": 0}

    def step(request: dict[str, Any]) -> dict[str, Any]:
        if request.get("system") == SUMMARY_SYSTEM:
            seen["summaries"] += 1
            # A summary as long as what it replaces: it cannot make the conversation smaller.
            return anthropic_text("The user asked to list files; listed so far. " * 40)
        if seen["calls"] < 4:
            seen["calls"] += 1
            return anthropic_tool_use("glob", {"pattern": "*.md"})
        return anthropic_text("done after 4 calls")

    with ScriptedModelApi([step] * 200, token_budget=1_000_000) as api:
        env = anthropic_env(tmp_path, api)
        env["CAT_CODE_CONTEXT_WINDOW"] = "10000"
        run = subprocess.run(
            [CAT_CODE, "-p", "list the markdown files four times", "--output-format", "json"],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["result"] == "done after 4 calls"
    assert api.token_counts[0] > 8_000  # over 80% of the window from the first request
    assert seen["summaries"] <= 1
    assert len(api.requests) <= 5 + 1
    assert run.stderr.count("automatic compaction waits until the conversation grows") == 1


def test_finding_8_a_summary_request_answered_400_is_not_retried_before_every_request(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Always write tests first.\n" * 1_150)
    (project / "notes.md").write_text("notes\n")
    seen = {"calls": 0, "summaries": 0}

    def step(request: dict[str, Any]) -> dict[str, Any]:
        if request.get("system") == SUMMARY_SYSTEM:
            seen["summaries"] += 1
            return anthropic_error(400, "invalid_request_error", "no summaries here")
        if seen["calls"] < 6:
            seen["calls"] += 1
            return anthropic_tool_use("glob", {"pattern": "*.md"})
        return anthropic_text("done after 6 calls")

    with ScriptedModelApi([step] * 200, token_budget=1_000_000) as api:
        env = anthropic_env(tmp_path, api)
        env["CAT_CODE_CONTEXT_WINDOW"] = "10000"
        run = subprocess.run(
            [CAT_CODE, "-p", "list the markdown files", "--output-format", "json"],
            cwd=project, env=env, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["result"] == "done after 6 calls"
    assert seen["summaries"] == 1  # the conversation never grew by 10% of the window
    assert run.stderr.count("could not compact the conversation") == 1
