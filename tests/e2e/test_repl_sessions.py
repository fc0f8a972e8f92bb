"""Sessions in the REPL, in a pseudo-terminal: /status, /cost, /compact, --continue, /resume.

The real ``cat-code`` with no MCP server and a scripted model API; each test's sessions
live in its own ``$CAT_CODE_HOME``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_message, anthropic_text
from scripted.processes import REPO
from scripted.terminal import Terminal

from cat_code.agent.compaction import SUMMARY_HEAD, SUMMARY_SYSTEM

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
PROMPT = "›"
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


@pytest.fixture
def api() -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        yield server
    assert server.errors == []


@pytest.fixture
def repl(tmp_path: Path, api: ScriptedModelApi) -> Iterator[Any]:
    terminals: list[Terminal] = []
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {}}))

    def start(*args: str) -> Terminal:
        env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
        env.update(HOME=str(tmp_path), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        argv = ["--mcp-config", str(config), "--model", "anthropic:claude-sonnet-4-5", *args]
        terminals.append(Terminal(CAT_CODE, argv, env=env, cwd=REPO))
        terminals[-1].wait_for(PROMPT)
        return terminals[-1]

    yield start
    for term in terminals:
        term.close()


def with_usage(text: str, **usage: int) -> dict[str, Any]:
    answer = anthropic_message([{"type": "text", "text": text}], "end_turn")
    answer["usage"] = {**answer["usage"], **usage}
    return answer


def texts(request: dict[str, Any]) -> list[str]:
    return [b["text"] for m in request["messages"] for b in m["content"] if b["type"] == "text"]


def test_cost_adds_up_the_usage_the_api_reported_and_status_names_the_session(
    repl: Any, api: ScriptedModelApi
) -> None:
    api.add(
        with_usage("first", input_tokens=100, output_tokens=20, cache_read_input_tokens=1000,
                   cache_creation_input_tokens=300),
        with_usage("second", input_tokens=50, output_tokens=30, cache_read_input_tokens=2000,
                   cache_creation_input_tokens=0),
    )  # fmt: skip
    term = repl()
    term.type("one")
    term.wait_for("first")
    term.type("two")
    term.wait_for("second")
    term.type("/cost")
    term.wait_for("tokens: 150 input · 50 output · 3,000 cache read · 300 cache write (2 requests)")
    cost = (150 * 3 + 50 * 15 + 3000 * 0.3 + 300 * 3.75) / 1_000_000
    term.wait_for(f"cost: ${cost:.4f}")
    term.type("/status")
    term.wait_for("session: ")
    session_id = term.wait_for("\n").strip()
    saved_in = term.wait_for("folder: ")  # the path may wrap: compare it without the breaks
    assert "/sessions/" in saved_in and f"{session_id}.jsonl" in saved_in.replace("\n", "")
    term.type("/exit")
    assert term.wait_for_exit() == 0


GREETING = "hello Ada" + ", welcome" * 100


def test_compact_summarizes_then_continue_and_resume_go_on_from_the_summary(
    repl: Any, api: ScriptedModelApi
) -> None:
    def summarize(request: dict[str, Any]) -> dict[str, Any]:
        assert request["system"] == SUMMARY_SYSTEM and "tools" not in request
        assert "keep the names" in texts(request)[-1]
        assert texts(request)[:2] == ["my name is Ada", GREETING]
        return anthropic_text("The user is called Ada.")

    # (A long greeting: the summary must make the conversation smaller to be applied.)
    api.add(
        anthropic_text(GREETING),
        anthropic_text("noted " + "long answer " * 200),
        summarize,
        anthropic_text("you are Ada"),
        anthropic_text("still Ada"),
        anthropic_text("other session"),
        anthropic_text("back in the first"),
    )
    term = repl()
    term.type("my name is Ada")
    term.wait_for("hello Ada")
    term.type("remember it")
    term.wait_for("long answer")
    term.wait_for(PROMPT)
    term.type("/compact keep the names")
    term.wait_for("conversation compacted: ~")
    term.wait_for("saved ~")
    term.type("who am I?")
    term.wait_for("you are Ada")
    sent = texts(api.requests[-1])
    assert sent[0].startswith(SUMMARY_HEAD) and "The user is called Ada." in sent[0]
    assert sent[0].endswith("remember it")  # the latest exchange is kept as it was
    assert sent[1].startswith("noted long answer") and sent[2:] == ["who am I?"]
    term.type("/status")
    term.wait_for("session: ")
    first_id = term.wait_for("\n").strip()
    term.type("/exit")
    assert term.wait_for_exit() == 0

    # --continue goes on from the summary, not from the messages it replaced.
    term = repl("--continue")
    assert f"resumed session {first_id} (3 turns" in term.screen  # said before the prompt
    term.type("and now?")
    term.wait_for("still Ada")
    sent = texts(api.requests[-1])
    assert sent[0].startswith(SUMMARY_HEAD) and sent[-1] == "and now?"
    assert "my name is Ada" not in sent
    term.type("/clear")
    term.wait_for("conversation cleared")
    term.type("something else")
    term.wait_for("other session")
    assert texts(api.requests[-1]) == ["something else"]

    # /resume lists the other sessions and goes on with the one picked.
    term.type("/resume")
    term.wait_for(first_id)
    term.wait_for("resume which?")
    term.type("1")
    term.wait_for(f"resumed session {first_id} (4 turns")
    term.type("and then?")
    term.wait_for("back in the first")
    sent = texts(api.requests[-1])
    assert sent[0].startswith(SUMMARY_HEAD) and sent[-2:] == ["still Ada", "and then?"]
    term.type("/exit")
    assert term.wait_for_exit() == 0
