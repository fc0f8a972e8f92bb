"""The status panel (toolbar and /status) and /jobs, read from a real session without a terminal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cat_code.agent.session import Session
from cat_code.repl.commands import CommandContext, Show, handle_command
from cat_code.repl.commands.jobs import StopJob, stop_job
from cat_code.repl.status_panel import Panel, read_panel, status_text, toolbar
from cat_code.tools.registry import ToolRegistry


@pytest.fixture
def session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Session]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    made = Session(
        model="anthropic:claude-test", approve_all=False, allow_patterns=None, cwd=tmp_path
    )
    yield made
    made.jobs.end_all()


def test_the_toolbar_says_model_context_servers_jobs_and_tasks_in_one_line() -> None:
    panel = Panel("anthropic:claude-x", 12, False, 2, 3, 1, 4)
    assert (
        toolbar(panel)
        == "anthropic:claude-x · context 12% · MCP 2/3 · 1 job running · 4 open tasks"
    )
    estimated = Panel("m", 3, True, 0, 0, 2, 1)
    assert toolbar(estimated) == "m · context ~3% · MCP 0/0 · 2 jobs running · 1 open task"


async def test_the_panel_counts_the_sessions_running_jobs_and_its_task_provider(
    session: Session,
) -> None:
    job = session.jobs.start("sleep 300", None)
    session.open_tasks = lambda: 5
    panel = read_panel(session)
    assert (panel.jobs_running, panel.open_tasks, panel.context_percent) == (1, 5, 0)
    assert panel.model == "anthropic:claude-test"
    full = status_text(session)
    assert f"session: {session.session_id}" in full and "open tasks: 5" in full
    assert "background jobs: 1 running, 0 ended" in full and job.id in full
    text, failed = await stop_job(session.jobs, job.id)
    assert not failed and f"job {job.id}: stopped by the user" in text
    assert read_panel(session).jobs_running == 0


async def test_jobs_lists_this_sessions_jobs_and_stop_names_an_unknown_id(
    session: Session,
) -> None:
    ctx = CommandContext(registry=ToolRegistry(), jobs=session.jobs)
    empty = handle_command("/jobs", ctx)
    assert isinstance(empty, Show) and "no background jobs in this session" in empty.text
    job = session.jobs.start("echo hi", None)
    assert job.ended.wait(10)
    listed = handle_command("/jobs", ctx)
    assert isinstance(listed, Show) and f"{job.id}  exited with code 0" in listed.text
    assert handle_command("/jobs stop abc", ctx) == StopJob("abc")
    usage = handle_command("/jobs kill", ctx)
    assert isinstance(usage, Show) and usage.kind == "error"
    text, failed = await stop_job(session.jobs, "abc")
    assert failed and "no background job 'abc'" in text and job.id in text
    # The end was told to the session's queue, for the user and the model.
    assert "<system-notification>" in session.notes_for_model()
