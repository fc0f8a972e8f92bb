"""Subagents end to end in ``-p``: the real ``cat-code``, a scripted model API that plays the
parent's conversation and each subagent's (routed by the subagent's first message, its
prompt), definitions on disk, and the session file read back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import (
    Hold,
    ScriptedModelApi,
    Streamed,
    anthropic_message,
    anthropic_text,
    anthropic_tool_use,
    streamed,
    tool_results,
)

from cat_code.agent.subagents import side_conversations

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip
MODEL = "anthropic:claude-sonnet-4-5"
PROMPT_A = "Find where the parser lives and name its module."
PROMPT_B = "Count the test files and say how many there are."


@pytest.fixture
def api() -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        yield server
    assert server.errors == []


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    return folder


def run(
    tmp_path: Path, project: Path, api: ScriptedModelApi, *args: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    argv = [CAT_CODE, "--mcp-config", "mcp.json", "--model", MODEL, *args]
    return subprocess.run(
        argv, cwd=project, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def two_agent_calls(request: dict[str, Any]) -> dict[str, Any]:
    assert "agent" in [t["name"] for t in request["tools"]]
    content = [
        {"type": "tool_use", "id": "toolu_a", "name": "agent",
         "input": {"description": "find the parser", "prompt": PROMPT_A}},
        {"type": "tool_use", "id": "toolu_b", "name": "agent",
         "input": {"description": "count tests", "prompt": PROMPT_B,
                   "subagent_type": "counter"}},
    ]  # fmt: skip
    return anthropic_message(content, "tool_use")


def write_definition(folder: Path, name: str, front: str, body: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\nname: {name}\n{front}\n---\n{body}\n")
    return path


def test_two_subagents_in_one_turn_run_concurrently_and_the_parent_gets_both_answers(
    tmp_path: Path, project: Path, api: ScriptedModelApi
) -> None:
    write_definition(
        project / ".claude" / "agents",
        "counter",
        "description: Counts things in the repository\ntools: Read, Grep, Glob",
        "You count files. Answer with a number.",
    )
    second_came = threading.Event()
    seen: dict[str, Any] = {}

    def first_child(request: dict[str, Any]) -> Streamed:
        # Held until the second child's first request arrives: that can only happen while
        # this one waits if the two run at the same time (one after the other: it never does).
        seen["second_came_meanwhile"] = second_came.wait(15)
        return streamed("The parser ", "is in cli/parser.py.", usage=(100, 20))

    def second_child(request: dict[str, Any]) -> dict[str, Any]:
        seen["counter_system"] = request["system"]
        seen["counter_tools"] = sorted(t["name"] for t in request["tools"])
        second_came.set()
        return anthropic_text("There are 42 test files.")

    def parent_reads_both(request: dict[str, Any]) -> dict[str, Any]:
        results = {r["tool_use_id"]: r for r in tool_results(request)}
        seen["results"] = results
        return anthropic_text("The parser is in cli/parser.py and there are 42 tests.")

    api.add(two_agent_calls, parent_reads_both)
    api.add_conversation(PROMPT_A, first_child)
    api.add_conversation(PROMPT_B, second_child)

    done = run(tmp_path, project, api, "-p", "Look around", "--output-format", "json")

    assert done.returncode == 0, done.stderr
    assert seen["second_came_meanwhile"] is True
    assert "You count files. Answer with a number." in seen["counter_system"]
    assert seen["counter_tools"] == ["glob", "grep", "read_file"]
    first = seen["results"]["toolu_a"]["content"]
    second = seen["results"]["toolu_b"]["content"]
    text_a = first if isinstance(first, str) else first[0]["text"]
    text_b = second if isinstance(second, str) else second[0]["text"]
    assert text_a.startswith("The parser is in cli/parser.py.")
    assert "[subagent general-purpose: 1 turn · 120 tokens ·" in text_a
    assert text_b.startswith("There are 42 test files.")
    # Each child's first user message is its prompt, and nothing of the parent's history.
    for prompt in (PROMPT_A, PROMPT_B):
        (child_request,) = api.conversation_requests[prompt]
        assert child_request["messages"] == [
            {"role": "user", "content": [{"type": "text", "text": prompt}]}
        ] or child_request["messages"] == [{"role": "user", "content": prompt}]
    result = json.loads(done.stdout)
    names = sorted(s["name"] for s in result["subagents"])
    assert names == ["counter", "general-purpose"]
    assert all(s["status"] == "done" for s in result["subagents"])
    # Parent: two requests of 10 + 5 tokens; children: 100 + 20 and 10 + 5.
    assert result["usage"]["input_tokens"] == 10 + 10 + 100 + 10
    assert result["usage"]["output_tokens"] == 5 + 5 + 20 + 5
    assert result["total_cost_usd"] == pytest.approx((130 * 3 + 35 * 15) / 1e6)


def test_a_subagent_with_max_turns_2_stops_and_says_which_budget_ended_it(
    tmp_path: Path, project: Path, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    write_definition(
        cat_code_home / "agents",
        "looper",
        "description: Keeps looking\nmaxTurns: 2\ntools: [Glob]",
    )
    answer: dict[str, str] = {}

    def parent_reads(request: dict[str, Any]) -> dict[str, Any]:
        (result,) = tool_results(request)
        content = result["content"]
        answer["text"] = content if isinstance(content, str) else content[0]["text"]
        return anthropic_text("It ran out of turns.")

    api.add(
        anthropic_tool_use(
            "agent", {"description": "look", "prompt": "Look forever.", "subagent_type": "looper"}
        ),
        parent_reads,
    )
    api.add_conversation(
        "Look forever.",
        anthropic_tool_use("glob", {"pattern": "*.json"}, text="Looking at the JSON files."),
        anthropic_tool_use("glob", {"pattern": "*.md"}),
    )

    done = run(tmp_path, project, api, "-p", "go", "--output-format", "json")

    assert done.returncode == 0, done.stderr
    assert "reached its turn budget (2 turns)" in answer["text"]
    assert "Looking at the JSON files." in answer["text"]
    result = json.loads(done.stdout)
    (looper,) = result["subagents"]
    assert (looper["status"], looper["ended_by"], looper["num_turns"]) == ("stopped", "turns", 2)


def test_a_failing_model_request_in_a_subagent_ends_only_that_subagent(
    tmp_path: Path, project: Path, api: ScriptedModelApi
) -> None:
    from scripted.model_api import anthropic_error

    answers: dict[str, Any] = {}

    def parent_reads(request: dict[str, Any]) -> dict[str, Any]:
        answers.update({r["tool_use_id"]: r for r in tool_results(request)})
        return anthropic_text("One failed.")

    write_definition(project / ".cat-code" / "agents", "counter", "description: Counts")
    api.add(two_agent_calls, parent_reads)
    api.add_conversation(PROMPT_A, anthropic_error(401, "authentication_error", "bad key"))
    api.add_conversation(PROMPT_B, anthropic_text("42."))

    done = run(tmp_path, project, api, "-p", "go", "--output-format", "json")

    assert done.returncode == 0, done.stderr
    assert answers["toolu_a"]["is_error"] is True
    failed = answers["toolu_a"]["content"]
    failed_text = failed if isinstance(failed, str) else failed[0]["text"]
    assert "subagent general-purpose failed" in failed_text
    assert "bad key" in failed_text
    assert answers["toolu_b"].get("is_error") in (None, False)
    result = json.loads(done.stdout)
    statuses = {s["name"]: s["status"] for s in result["subagents"]}
    assert statuses == {"general-purpose": "failed", "counter": "done"}


def test_a_subagents_conversation_is_saved_in_the_session_file_and_kept_by_resume(
    tmp_path: Path, project: Path, api: ScriptedModelApi
) -> None:
    api.add(
        anthropic_tool_use("agent", {"description": "find", "prompt": PROMPT_A}),
        anthropic_text("Found it."),
        anthropic_text("Still here."),
    )
    api.add_conversation(PROMPT_A, anthropic_text("cli/parser.py"))

    first = run(tmp_path, project, api, "-p", "go", "--output-format", "json")
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    again = run(tmp_path, project, api, "-p", "and?", "--resume", session_id)
    assert again.returncode == 0, again.stderr

    home = Path(os.environ["CAT_CODE_HOME"])
    (path,) = home.glob(f"sessions/*/{session_id}.jsonl")
    (side,) = side_conversations(path).values()
    assert side.name == "general-purpose"
    assert [m.text for m in side.messages] == [PROMPT_A, "cli/parser.py"]
    assert side.end is not None and side.end["status"] == "done"


def test_the_repl_shows_running_subagents_asks_for_their_calls_by_name_and_cost_counts_them(
    tmp_path: Path, project: Path, api: ScriptedModelApi
) -> None:
    from scripted.terminal import Terminal

    write_definition(project / ".cat-code" / "agents", "counter", "description: Counts")
    hold = Hold()
    answers: dict[str, Any] = {}

    def parent_reads_both(request: dict[str, Any]) -> dict[str, Any]:
        answers.update({r["tool_use_id"]: r for r in tool_results(request)})
        return anthropic_text("Both subagents answered.")

    api.add(two_agent_calls, parent_reads_both)
    api.add_conversation(PROMPT_A, streamed("Still ", hold, "looking: cli/parser.py"))
    api.add_conversation(
        PROMPT_B,
        anthropic_tool_use("shell", {"command": "echo counted-42"}),
        anthropic_text("There are 42."),
    )
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    term = Terminal(CAT_CODE, ["--mcp-config", "mcp.json", "--model", MODEL], env=env, cwd=project)
    try:
        term.wait_for("›")
        term.type("Look around")
        # The counter's shell call asks the same question as the parent's, with its name.
        term.wait_for("? [subagent counter] shell")
        term.wait_for("allow?")
        term.type("y")
        # The general-purpose subagent is still held mid-answer: its live line shows.
        term.wait_for("↳ general-purpose: find the parser — writing… · 0 turns")
        hold.release()
        term.wait_for("Both subagents answered.")
        term.type("/cost")
        term.wait_for("(5 requests)")
        term.wait_for("subagents: 2 runs")
        term.wait_for("general-purpose (done): 1 turn ·")
        term.wait_for("counter (done): 2 turns")
        term.type("/agents")
        term.wait_for("counter  (project (.cat-code/agents)")
        term.type("/exit")
        assert term.wait_for_exit() == 0
    finally:
        term.close()
    counted = answers["toolu_b"]["content"]
    assert "There are 42." in (counted if isinstance(counted, str) else counted[0]["text"])


def test_ctrl_c_in_the_repl_cancels_every_running_subagent_and_the_session_goes_on(
    tmp_path: Path, project: Path, api: ScriptedModelApi
) -> None:
    from scripted.terminal import Terminal

    write_definition(project / ".cat-code" / "agents", "counter", "description: Counts")
    holds = [Hold(), Hold()]
    seen: dict[str, Any] = {}

    def parent_after_cancel(request: dict[str, Any]) -> dict[str, Any]:
        results = tool_results(request)
        seen["results"] = [(r["tool_use_id"], r["is_error"], r["content"]) for r in results]
        return anthropic_text("still here")

    api.add(two_agent_calls, parent_after_cancel)
    api.add_conversation(PROMPT_A, streamed("Reading ", holds[0], "never"))
    api.add_conversation(PROMPT_B, streamed("Counting ", holds[1], "never"))
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    term = Terminal(CAT_CODE, ["--mcp-config", "mcp.json", "--model", MODEL], env=env, cwd=project)
    try:
        term.wait_for("›")
        term.type("Look around")
        holds[0].wait_reached()
        holds[1].wait_reached()
        term.press("\x03")
        term.wait_for("⎿ cancelled")
        term.type("/cost")
        term.wait_for("general-purpose (cancelled)")
        term.wait_for("counter (cancelled)")
        term.type("still there?")
        term.wait_for("still here")
        term.type("/exit")
        assert term.wait_for_exit() == 0
    finally:
        term.close()
    assert seen["results"] == [
        ("toolu_a", True, "Error: the user cancelled this tool call."),
        ("toolu_b", True, "Error: the user cancelled this tool call."),
    ]


def test_cat_code_agents_lists_the_definitions_with_their_source_as_text_and_json(
    tmp_path: Path, project: Path, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    write_definition(cat_code_home / "agents", "mine", "description: My own")
    write_definition(project / ".claude" / "agents", "theirs", "description: From the repo")
    (project / ".claude" / "agents" / "broken.md").write_text("no frontmatter")

    text = run(tmp_path, project, api, "agents")
    listed = run(tmp_path, project, api, "agents", "--json")

    assert text.returncode == 0, text.stderr
    assert "general-purpose  (built-in)" in text.stdout
    assert f"mine  (user: {cat_code_home / 'agents' / 'mine.md'})" in text.stdout
    assert "theirs  (project (.claude/agents): " in text.stdout
    assert "broken.md: skipped: it does not begin with a --- delimited YAML" in text.stdout
    agents = json.loads(listed.stdout)["agents"]
    assert [(a["name"], a["source"]) for a in agents] == [
        ("general-purpose", "builtin"),
        ("mine", "user"),
        ("theirs", "project_claude"),
    ]


def test_p_says_on_stderr_when_a_subagent_starts_and_ends(
    tmp_path: Path, project: Path, api: ScriptedModelApi
) -> None:
    api.add(
        anthropic_tool_use("agent", {"description": "find it", "prompt": PROMPT_A}),
        anthropic_text("Found."),
    )
    api.add_conversation(PROMPT_A, anthropic_text("cli/parser.py"))

    done = run(tmp_path, project, api, "-p", "go")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Found."
    assert "cat-code: subagent general-purpose started: find it" in done.stderr
    assert "cat-code: subagent general-purpose done: 1 turn · 15 tokens ·" in done.stderr


def test_in_p_a_subagents_calls_follow_the_parents_policy_and_saved_rules(
    tmp_path: Path, project: Path, api: ScriptedModelApi, cat_code_home: Path
) -> None:
    (cat_code_home / "settings.json").write_text(json.dumps({"permissions": {"allow": ["shell"]}}))
    write_definition(project / ".cat-code" / "agents", "counter", "description: Counts")
    child_results: dict[str, str] = {}

    def child_reads(name: str, answer: str) -> Any:
        def step(request: dict[str, Any]) -> dict[str, Any]:
            (result,) = tool_results(request)
            content = result["content"]
            child_results[name] = content if isinstance(content, str) else content[0]["text"]
            return anthropic_text(answer)

        return step

    api.add(two_agent_calls, anthropic_text("done"))
    api.add_conversation(
        PROMPT_A,
        anthropic_tool_use("shell", {"command": "echo allowed-by-rule"}),
        child_reads("a", "ran it"),
    )
    api.add_conversation(
        PROMPT_B,
        anthropic_tool_use("write_file", {"path": "x.txt", "content": "x"}),
        child_reads("b", "could not"),
    )

    done = run(tmp_path, project, api, "-p", "go")

    assert done.returncode == 0, done.stderr
    assert "allowed-by-rule" in child_results["a"]
    assert "this non-interactive session cannot ask" in child_results["b"]
    assert not (project / "x.txt").exists()
    assert '  general-purpose: ⏺ shell {"command":"echo allowed-by-rule"} →' in done.stderr
    assert "  counter: ⏺ write_file" in done.stderr
