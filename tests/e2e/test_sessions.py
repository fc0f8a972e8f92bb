"""Saved sessions, compaction and cost, end to end: the real ``cat-code -p``, a scripted API.

Each test has its own ``$CAT_CODE_HOME`` (the autouse fixture), so the sessions it lists
are its own; the commands run in the repository folder, as the other e2e tests do.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import (
    Hold,
    ScriptedModelApi,
    anthropic_message,
    anthropic_text,
    anthropic_tool_use,
    streamed,
)
from scripted.processes import REPO
from test_oneshot import CAT_CODE, EXAMPLE_CONFIG, anthropic_env, cat_code

from cat_code.agent.compaction import SUMMARY_SYSTEM


def sessions_json(env: dict[str, str]) -> list[dict[str, Any]]:
    run = cat_code(env, "sessions", "--json")
    assert run.returncode == 0, run.stderr
    listed: list[dict[str, Any]] = json.loads(run.stdout)
    return listed


def result_of(run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert run.returncode == 0, run.stderr
    record: dict[str, Any] = json.loads(run.stdout)
    return record


def is_summary_request(request: dict[str, Any]) -> bool:
    return request.get("system") == SUMMARY_SYSTEM


def test_a_run_then_continue_sends_the_first_runs_conversation_with_its_tool_pair(
    tmp_path: Path,
) -> None:
    script = [
        anthropic_tool_use("mcp__echo__echo", {"text": "ping"}, call_id="toolu_first"),
        anthropic_text("the echo said ping"),
        anthropic_text("you asked about ping"),
    ]
    with ScriptedModelApi(script) as api:
        env = anthropic_env(tmp_path, api)
        first = result_of(
            cat_code(env, "-p", "echo ping", "--mcp-config", EXAMPLE_CONFIG,
                     "--output-format", "json")
        )  # fmt: skip
        second = result_of(
            cat_code(env, "-p", "what did I ask?", "--continue", "--output-format", "json")
        )
    assert api.errors == []
    assert first["session_id"] == second["session_id"]
    sent = api.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert sent[0]["content"] == [{"type": "text", "text": "echo ping"}]
    assert sent[1]["content"][0]["id"] == "toolu_first"
    assert sent[2]["content"][0]["tool_use_id"] == "toolu_first"
    assert sent[2]["content"][0]["content"] == "ping"
    assert sent[3]["content"] == [{"type": "text", "text": "the echo said ping"}]
    assert sent[4]["content"] == [{"type": "text", "text": "what did I ask?"}]

    [listed] = sessions_json(env)
    assert listed["id"] == first["session_id"]
    assert (listed["turns"], listed["first_prompt"]) == (2, "echo ping")
    path = Path(listed["path"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.parent.stat().st_mode) == 0o700


def test_resume_picks_the_named_session_of_several_and_an_unknown_id_exits_2(
    tmp_path: Path,
) -> None:
    script = [
        anthropic_text("one"),
        anthropic_text("two"),
        anthropic_text("three"),
        anthropic_text("again"),
    ]
    with ScriptedModelApi(script) as api:
        env = anthropic_env(tmp_path, api)
        ids = [
            result_of(cat_code(env, "-p", f"prompt {n}", "--output-format", "json"))["session_id"]
            for n in ("one", "two", "three")
        ]
        assert len(set(ids)) == 3
        listed = sessions_json(env)
        assert [s["id"] for s in listed] == ids[::-1]  # the most recently used first
        assert [s["first_prompt"] for s in listed] == ["prompt three", "prompt two", "prompt one"]
        resumed = result_of(cat_code(env, "-p", "go on", "-r", ids[1], "--output-format", "json"))
        unknown = cat_code(env, "-p", "go on", "--resume", "no-such-session")
    assert resumed["session_id"] == ids[1]
    texts = [b["text"] for m in api.requests[-1]["messages"] for b in m["content"]]
    assert texts == ["prompt two", "two", "go on"]
    assert unknown.returncode == 2
    assert "no saved session 'no-such-session'" in unknown.stderr
    assert len(api.requests) == 4  # the unknown id never reached the model


def test_continue_without_a_saved_session_exits_2(tmp_path: Path) -> None:
    with ScriptedModelApi([]) as api:
        run = cat_code(anthropic_env(tmp_path, api), "-p", "hi", "--continue")
    assert run.returncode == 2
    assert "no saved session to continue" in run.stderr
    assert api.requests == []


def test_a_session_killed_mid_answer_loads_and_a_torn_last_line_is_skipped(
    tmp_path: Path,
) -> None:
    hold = Hold()
    script = [
        anthropic_tool_use("mcp__echo__echo", {"text": "saved"}, call_id="toolu_saved"),
        streamed("I am in the middle of ", hold, "this"),
        anthropic_text("resumed fine"),
    ]
    with ScriptedModelApi(script) as api:
        env = anthropic_env(tmp_path, api)
        child = subprocess.Popen(
            [CAT_CODE, "-p", "first prompt", "--mcp-config", EXAMPLE_CONFIG],
            cwd=REPO, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            hold.wait_reached()
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
            child.communicate(timeout=30)
        hold.release()
        [listed] = sessions_json(env)
        path = Path(listed["path"])
        with path.open("a") as file:  # what a writer killed in the middle of a line leaves
            file.write('{"type": "message", "message": {"role": "assis')
        run = cat_code(env, "-p", "second prompt", "--continue")
    assert run.returncode == 0, run.stderr
    assert "skipped a torn last line" in run.stderr
    sent = api.requests[-1]["messages"]
    assert sent[0]["content"] == [{"type": "text", "text": "first prompt"}]
    assert sent[1]["content"][0]["id"] == "toolu_saved"
    assert sent[2]["content"][0] == {
        "type": "tool_result", "tool_use_id": "toolu_saved", "content": "saved", "is_error": False,
    }  # fmt: skip
    assert sent[-1]["content"][-1] == {"type": "text", "text": "second prompt"}
    lines = path.read_text().splitlines()
    torn = '{"type": "message", "message": {"role": "assis'
    assert lines.count(torn) == 1  # ended where it was torn: the next record is whole
    assert all(json.loads(line) for line in lines if line != torn)
    assert json.loads(lines[-1])["message"]["text"] == "resumed fine"


def _tool_loop(steps: int, *, text_size: int) -> tuple[Any, dict[str, int]]:
    """A model that calls echo ``steps`` times with a big text, then answers; it answers a
    summary request with a short summary."""
    seen = {"calls": 0, "summaries": 0}

    def step(request: dict[str, Any]) -> dict[str, Any]:
        if is_summary_request(request):
            seen["summaries"] += 1
            return anthropic_text(f"Echoed {seen['calls']} texts so far; keep going to {steps}.")
        if seen["calls"] < steps:
            seen["calls"] += 1
            text = f"step {seen['calls']} " + "x" * text_size
            return anthropic_tool_use("mcp__echo__echo", {"text": text})
        return anthropic_text(f"done after {seen['calls']} calls")

    return step, seen


def test_a_30_step_tool_loop_finishes_under_a_token_budget_by_compacting_itself(
    tmp_path: Path,
) -> None:
    step, seen = _tool_loop(30, text_size=2000)
    budget = 12_000
    with ScriptedModelApi([step] * 200, token_budget=budget) as api:
        env = anthropic_env(tmp_path, api)
        env["CAT_CODE_CONTEXT_WINDOW"] = str(budget)
        run = cat_code(
            env, "-p", "echo 30 times", "--mcp-config", EXAMPLE_CONFIG, "--max-turns", "40",
            "--output-format", "json",
        )  # fmt: skip
    assert api.errors == []
    result = result_of(run)
    assert result["result"] == "done after 30 calls"
    assert seen["summaries"] >= 1 and api.refused == 0
    assert "automatically compacted" in run.stderr and "saved ~" in run.stderr
    assert max(api.token_counts) <= budget

    # The file keeps the full history and marks each compaction point.
    [listed] = sessions_json(env)
    records = [json.loads(line) for line in Path(listed["path"]).read_text().splitlines()]
    assert sum(r["type"] == "compact" for r in records) == seen["summaries"]
    echoed = [
        c["arguments"]["text"].split()[1]
        for r in records
        if r["type"] == "message"
        for c in r["message"].get("tool_calls", [])
    ]
    assert echoed == [str(n) for n in range(1, 31)]


def test_a_prompt_too_long_answer_compacts_once_and_retries_the_request(tmp_path: Path) -> None:
    step, seen = _tool_loop(12, text_size=2000)
    with ScriptedModelApi([step] * 100, token_budget=9_000) as api:
        env = anthropic_env(tmp_path, api)
        env["CAT_CODE_CONTEXT_WINDOW"] = "1000000"  # too big for the 80% rule to fire
        run = cat_code(env, "-p", "echo", "--mcp-config", EXAMPLE_CONFIG)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("done after 12 calls")
    assert api.refused >= 1 and seen["summaries"] == api.refused


def test_with_auto_compaction_off_the_long_loop_ends_in_the_apis_error(tmp_path: Path) -> None:
    step, _ = _tool_loop(30, text_size=2000)
    with ScriptedModelApi([step] * 100, token_budget=9_000) as api:
        env = anthropic_env(tmp_path, api)
        env["CAT_CODE_AUTO_COMPACT"] = "off"
        run = cat_code(env, "-p", "echo", "--mcp-config", EXAMPLE_CONFIG)
    assert run.returncode == 1
    assert "prompt is too long" in run.stderr
    assert not any(is_summary_request(r) for r in api.requests)


def test_the_json_result_carries_the_cache_tokens_and_the_cost(tmp_path: Path) -> None:
    answer = anthropic_message([{"type": "text", "text": "hi"}], "end_turn")
    answer["usage"] = {
        "input_tokens": 1000,
        "output_tokens": 2000,
        "cache_read_input_tokens": 10_000,
        "cache_creation_input_tokens": 4000,
    }
    with ScriptedModelApi([answer]) as api:
        env = anthropic_env(tmp_path, api)
        result = result_of(
            cat_code(env, "-p", "hi", "--model", "anthropic:claude-sonnet-4-5",
                     "--output-format", "json")
        )  # fmt: skip
    assert result["usage"] == answer["usage"]
    # Sonnet: $3 in, $15 out, cache writes 1.25×, reads 0.1× the input price (per million).
    expected = (1000 * 3 + 2000 * 15 + 4000 * 3.75 + 10_000 * 0.3) / 1_000_000
    assert result["total_cost_usd"] == pytest.approx(expected)


def test_an_unknown_models_cost_is_null_unless_a_price_is_given(tmp_path: Path) -> None:
    with ScriptedModelApi([anthropic_text("a"), anthropic_text("b")]) as api:
        env = anthropic_env(tmp_path, api)
        unknown = result_of(
            cat_code(env, "-p", "hi", "--model", "anthropic:claude-test", "--output-format", "json")
        )
        env["CAT_CODE_PRICES"] = json.dumps({"anthropic:claude-test": {"input": 1, "output": 2}})
        priced = result_of(
            cat_code(env, "-p", "hi", "--model", "anthropic:claude-test", "--output-format", "json")
        )
    assert unknown["total_cost_usd"] is None
    assert priced["total_cost_usd"] == pytest.approx((10 * 1 + 5 * 2) / 1_000_000)


def test_sessions_lists_nothing_in_a_folder_without_any(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    assert sessions_json(env) == []
    run = cat_code(env, "sessions")
    assert (run.returncode, run.stdout) == (0, "")
    assert "no saved sessions" in run.stderr
