"""The task list end to end: the real ``cat-code -p`` with a scripted model, a 30-step list
through compactions, a list shared between runs, ``--continue``, ``cat-code tasks``."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from scripted.model_api import (
    ScriptedModelApi,
    anthropic_message,
    anthropic_text,
    anthropic_tool_use,
    tool_results,
)
from test_oneshot import EXAMPLE_CONFIG, anthropic_env, cat_code, environment

from cat_code.agent.compaction import SUMMARY_HEAD, SUMMARY_SYSTEM

STEPS = 30


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """One assistant message asking for several tool calls."""
    content = [
        {"type": "tool_use", "id": f"toolu_{n}_{name}", "name": name, "input": arguments}
        for n, (name, arguments) in enumerate(pairs)
    ]
    return anthropic_message(content, "tool_use")


def first_text(request: dict[str, Any]) -> str:
    content = request["messages"][0]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def stream_records(run: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert run.returncode == 0, run.stderr
    return [json.loads(line) for line in run.stdout.splitlines()]


def tasks_json(env: dict[str, str], *args: str) -> list[dict[str, Any]]:
    run = cat_code(env, "tasks", "--json", *args)
    assert run.returncode == 0, run.stderr
    listed: list[dict[str, Any]] = json.loads(run.stdout)
    return listed


class ThirtySteps:
    """A model that plans 30 tasks and works through them one by one (each step echoes a
    big text, so the context fills and compacts), checking after each compaction that the
    open tasks were restated exactly as they stand."""

    def __init__(self) -> None:
        self.step = 0  # the task being worked on; 0 before the plan is made
        self.started = False  # its in_progress update was sent
        self.summaries = 0
        self.checked = 0
        self.problems: list[str] = []

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("system") == SUMMARY_SYSTEM:
            self.summaries += 1  # the summary says nothing of the tasks' statuses
            return anthropic_text("We are working through a plan of steps.")
        if self.checked < self.summaries:
            self.checked = self.summaries
            self._check_restated(first_text(request))
        if self.step == 0:
            self.step = 1
            return calls(
                *(
                    ("task_create", {"subject": f"step {n}", "activeForm": f"Doing step {n}"})
                    for n in range(1, STEPS + 1)
                )
            )
        if not self.started:
            self.started = True
            return calls(
                ("task_update", {"id": self.step, "status": "in_progress"}),
                ("mcp__echo__echo", {"text": f"step {self.step} " + "x" * 4000}),
            )
        finished = self.step
        if finished == STEPS + 1:
            return anthropic_text("all 30 steps done")
        self.step, self.started = self.step + 1, False
        return calls(("task_update", {"id": finished, "status": "completed"}))

    def _check_restated(self, text: str) -> None:
        if SUMMARY_HEAD not in text:
            self.problems.append("no summary head after a compaction")
            return
        listed = {
            int(m.group(1)): m.group(2)
            for m in re.finditer(r"^- #(\d+) \[(\w+)", text, flags=re.MULTILINE)
        }
        expected = {
            n: "in_progress" if n == self.step and self.started else "pending"
            for n in range(max(self.step, 1), STEPS + 1)
        }
        if listed != expected:
            self.problems.append(f"restated {listed}, expected {expected}")
        if not expected:  # every step done: nothing open, so nothing is restated
            if "Your task list" in text:
                self.problems.append("a list with no open task was restated")
            return
        done = re.search(r"^Completed: (.*)\.$", text, flags=re.MULTILINE)
        got_done = [int(i) for i in re.findall(r"#(\d+)", done.group(1))] if done else []
        if got_done != list(range(1, self.step)):
            self.problems.append(f"completed {got_done} at step {self.step}")


def test_a_30_step_task_list_keeps_every_status_through_three_compactions(
    tmp_path: Path,
) -> None:
    model = ThirtySteps()
    budget = 12_000
    with ScriptedModelApi([model] * 300, token_budget=budget) as api:
        env = anthropic_env(tmp_path, api)
        env["CAT_CODE_CONTEXT_WINDOW"] = str(budget)
        run = cat_code(
            env, "-p", "do the 30 steps", "--mcp-config", EXAMPLE_CONFIG, "--max-turns", "80",
            "--output-format", "stream-json",
        )  # fmt: skip
    assert api.errors == []
    records = stream_records(run)
    assert records[-1]["result"] == "all 30 steps done"
    assert model.summaries >= 3 and model.checked == model.summaries
    assert model.problems == []
    # stream-json told every change: the last list has every step completed.
    lists = [r["tasks"] for r in records if r["type"] == "system" and r["subtype"] == "tasks"]
    assert len(lists) == 3 * STEPS  # each task made, started and finished
    assert [(t["id"], t["status"]) for t in lists[-1]] == [
        (n, "completed") for n in range(1, STEPS + 1)
    ]
    # And the files agree, read from the shell.
    listed = tasks_json(env)
    assert [(t["subject"], t["status"]) for t in listed] == [
        (f"step {n}", "completed") for n in range(1, STEPS + 1)
    ]


def test_two_runs_share_a_list_through_cat_code_task_list(tmp_path: Path) -> None:
    def check_shared(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        listed = json.loads(result["content"])
        assert [(t["id"], t["subject"], t["ready"]) for t in listed] == [
            (1, "write the code", True),
            (2, "test the code", False),
        ]
        return anthropic_tool_use("task_update", {"id": 1, "status": "completed"})

    def check_unblocked(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert "This unblocked: #2 test the code" in result["content"]
        return anthropic_text("first step done")

    first_run = [
        calls(
            ("task_create", {"subject": "write the code"}),
            ("task_create", {"subject": "test the code", "blockedBy": [1]}),
        ),
        anthropic_text("planned"),
    ]
    second_run = [anthropic_tool_use("task_list", {}), check_shared, check_unblocked]
    alone = [
        anthropic_tool_use("task_list", {}),
        lambda request: anthropic_text(f"saw {tool_results(request)[0]['content']}"),
    ]
    with ScriptedModelApi([*first_run, *second_run, *alone]) as api:
        env = anthropic_env(tmp_path, api)
        shared = {**env, "CAT_CODE_TASK_LIST": "team-plan"}
        assert cat_code(shared, "-p", "plan it").returncode == 0
        second = cat_code(shared, "-p", "do the first step")
        assert second.returncode == 0, second.stderr
        assert second.stdout == "first step done\n"
        own = cat_code(env, "-p", "what is on your list?")  # no shared list: its own, empty
    assert api.errors == []
    assert own.stdout == "saw []\n"
    listed = tasks_json(env, "--list", "team-plan")
    assert [(t["id"], t["status"], t["ready"]) for t in listed] == [
        (1, "completed", False),
        (2, "pending", True),
    ]
    text = cat_code(shared, "tasks")
    assert text.returncode == 0
    assert text.stdout.splitlines() == [
        "tasks (team-plan): 1 of 2 done",
        "  ✔ #1 write the code",
        "  ○ #2 test the code",
    ]


def test_continue_brings_back_the_sessions_own_list(tmp_path: Path) -> None:
    def check_listed(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        [task] = json.loads(result["content"])
        return anthropic_text(f"still {task['status']}: {task['subject']}")

    script = [
        anthropic_tool_use("task_create", {"subject": "remember me", "activeForm": "Remembering"}),
        anthropic_tool_use("task_update", {"id": 1, "status": "in_progress"}),
        anthropic_text("started"),
        anthropic_tool_use("task_list", {}),
        check_listed,
    ]
    with ScriptedModelApi(script) as api:
        env = anthropic_env(tmp_path, api)
        first = cat_code(env, "-p", "start", "--output-format", "json")
        assert first.returncode == 0, first.stderr
        session_id = json.loads(first.stdout)["session_id"]
        again = cat_code(env, "--continue", "-p", "go on")
    assert api.errors == []
    assert again.returncode == 0, again.stderr
    assert again.stdout == "still in_progress: remember me\n"
    # The list is the session's own: named by its id, found by `cat-code tasks` too.
    assert [t["subject"] for t in tasks_json(env, "--list", session_id)] == ["remember me"]
    shown = cat_code(env, "tasks")
    assert shown.stdout.splitlines()[1] == "  ▶ #1 Remembering"


def test_an_unusable_tasks_folder_is_a_tool_error_and_the_run_goes_on(
    tmp_path: Path, cat_code_home: Path
) -> None:
    (cat_code_home / "tasks").write_text("not a folder")

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["is_error"] is True
        return anthropic_text(f"tool said: {result['content']}")

    with ScriptedModelApi([anthropic_tool_use("task_create", {"subject": "a"}), answer]) as api:
        run = cat_code(anthropic_env(tmp_path, api), "-p", "plan")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("tool said: Error: the task list in ")
    assert "cannot be used" in run.stdout


def test_cat_code_tasks_refuses_a_name_that_cannot_be_a_list(tmp_path: Path) -> None:
    run = cat_code(environment(tmp_path), "tasks", "--list", "../x")
    assert run.returncode == 2
    assert "not a task list name" in run.stderr
