"""The REPL in a pseudo-terminal: the real ``cat-code``, real MCP servers, a scripted model API.

Every server writes its pid to a file when it starts, so each test can check by pid that
no server outlives the REPL, whichever way it ends (/exit, Ctrl-D, SIGTERM, SIGHUP).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import (
    Hold,
    ScriptedModelApi,
    anthropic_text,
    anthropic_tool_use,
    streamed,
    tool_results,
)
from scripted.processes import (
    ECHO_SERVER,
    ELICIT_SERVER,
    REPO,
    alive,
    pid_recording_config,
    read_pid,
)
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
PROMPT = "›"  # prompt_toolkit moves the cursor rather than drawing the space
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


@pytest.fixture
def api() -> Iterator[ScriptedModelApi]:
    with ScriptedModelApi() as server:
        yield server
    assert server.errors == []


class Session:
    """A REPL on a pty with its servers' pid files."""

    def __init__(
        self,
        tmp_path: Path,
        api: ScriptedModelApi | None,
        *,
        servers: dict[str, Path],
        provider: str = "anthropic",
    ):
        self.config, self.pidfiles = pid_recording_config(tmp_path, servers)
        env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
        env["HOME"] = str(tmp_path)  # no SDK profile files, no real history
        args = ["--mcp-config", str(self.config)]
        if api is not None and provider == "openai":
            env.update(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=api.url + "/v1")
            args += ["--model", "openai:gpt-test"]
        elif api is not None:
            env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        self.term = Terminal(CAT_CODE, args, env=env, cwd=REPO)

    def pids(self) -> list[int]:
        return [read_pid(path) for path in self.pidfiles.values()]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Any]:
    sessions: list[Session] = []

    def start(
        api: ScriptedModelApi | None,
        servers: dict[str, Path] | None = None,
        provider: str = "anthropic",
    ) -> Session:
        servers = {"echo": ECHO_SERVER} if servers is None else servers
        sessions.append(Session(tmp_path, api, servers=servers, provider=provider))
        return sessions[-1]

    yield start
    for session in sessions:
        session.term.close()


def test_a_repl_session_with_mcp_status_a_tool_call_a_permission_question_and_exit(
    start: Any, api: ScriptedModelApi
) -> None:
    def check_echo(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["content"] == "你好" and not result["is_error"]
        return anthropic_text("The echo tool said **你好**.")

    def check_refusal_then_ask_again(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["is_error"] and "refused" in result["content"]
        return anthropic_tool_use("mcp__echo__reverse", {"text": "abc"})

    api.add(
        anthropic_tool_use("mcp__echo__echo", {"text": "你好"}),
        check_echo,
        anthropic_tool_use("mcp__echo__fail", {"message": "boom"}),
        check_refusal_then_ask_again,
        anthropic_text("reversed it"),
        anthropic_tool_use("mcp__echo__fail", {"message": "boom"}),
        anthropic_text("it failed as expected"),
    )
    session = start(api)
    term = session.term
    term.wait_for(PROMPT)
    term.wait_for("MCP: 1 server(s), 6 tool(s) registered")
    [pid] = session.pids()
    assert alive(pid)

    term.type("/mcp")
    term.wait_for("MCP servers:")
    term.wait_for("echo  CONNECTED  6 tool(s)  (stdio: sh -c")
    term.type("/mcp tools")
    term.wait_for("MCP tools:")
    term.wait_for("mcp__echo__word_count  Count the words and lines of a text")

    # A read-only tool runs without a question.
    term.type("use the echo tool to say 你好")
    term.wait_for('⏺ mcp__echo__echo {"text":"你好"} → 你好')
    term.wait_for("The echo tool said 你好.")

    # A tool that is not read-only asks first; "n" refuses, and the model reads why.
    term.type("now try the fail tool")
    term.wait_for('? mcp__echo__fail {"message":"boom"}')
    term.wait_for("allow? y yes · n no · a always this tool · s always server 'echo'")
    term.type("n")
    term.wait_for("⏺ mcp__echo__fail")
    term.wait_for("refused")
    term.wait_for('⏺ mcp__echo__reverse {"text":"abc"} → cba')
    term.wait_for("reversed it")

    # "s" approves every tool of the server for the rest of the session.
    term.type("once more")
    term.wait_for("allow?")
    term.type("s")
    term.wait_for('⏺ mcp__echo__fail {"message":"boom"} → boom')
    term.wait_for("it failed as expected")

    term.type("/exit")
    assert term.wait_for_exit() == 0
    assert not alive(pid)
    assert len(api.requests) == 7


def test_ctrl_c_cancels_the_running_tool_call_not_the_program_and_sigterm_exits_clean(
    start: Any, api: ScriptedModelApi
) -> None:
    def check_cancelled(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["is_error"] and "cancelled" in result["content"]
        assert request["messages"][-1]["content"][-1] == {"type": "text", "text": "still there?"}
        return anthropic_text("yes, still here")

    api.add(anthropic_tool_use("mcp__echo__sleep", {"seconds": 60}), check_cancelled)
    session = start(api)
    term = session.term
    term.wait_for("MCP: 1 server(s)")
    [pid] = session.pids()

    term.type("sleep for a minute")
    term.wait_for("allow?")
    term.type("a")
    term.wait_for("slept 1 s")  # the server's progress message, shown by the spinner
    term.press("\x03")
    term.wait_for('⏺ mcp__echo__sleep {"seconds":60} → Error: the user cancelled this tool call.')
    term.wait_for("⎿ cancelled")
    assert alive(pid)

    term.type("still there?")
    term.wait_for("yes, still here")
    term.wait_for(PROMPT)
    term.signal(signal.SIGTERM)
    assert term.wait_for_exit() == 128 + signal.SIGTERM
    assert not alive(pid)


def assistant_texts(request: dict[str, Any]) -> list[str]:
    """The assistant turns' text in a request of either API."""
    texts = []
    for message in request["messages"]:
        if message["role"] != "assistant":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = "".join(b.get("text", "") for b in content if b["type"] == "text")
        texts.append(content or "")
    return texts


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_an_answer_shows_while_it_streams_and_ctrl_c_keeps_what_arrived(
    start: Any, api: ScriptedModelApi, provider: str
) -> None:
    first, never = Hold(), Hold()

    def check_interrupted(request: dict[str, Any]) -> Any:
        [partial] = assistant_texts(request)
        assert partial.startswith("Streaming the **first** part.\n\nSecond paragraph done.")
        assert partial.endswith("Third and\n\n[interrupted by the user]")
        return streamed("Yes, ", "still here.")

    pieces = ["Streaming ", "the **first** part.\n\n", "Second para", first, "graph done.\n\n"]
    api.add(streamed(*pieces, "Third ", "and", never, "never shown"), check_interrupted)
    session = start(api, {}, provider)
    term = session.term
    term.wait_for(PROMPT)
    term.type("tell me in parts")
    # The first block, rendered, and the start of the second, raw, while the API holds.
    term.wait_for("Streaming the first part.")
    term.wait_for("Second para")
    first.wait_reached()
    assert len(api.requests) == 1 and not never.reached.is_set()
    first.release()
    term.wait_for("Second paragraph done.")
    never.wait_reached()
    term.wait_for("Third and")

    term.press("\x03")  # that the text stays on screen is test_render's to check
    term.wait_for("⎿ cancelled")
    assert "never shown" not in term.screen

    term.type("still there?")
    term.wait_for("Yes, still here.")
    term.wait_for(PROMPT)
    term.type("/exit")
    assert term.wait_for_exit() == 0
    assert len(api.requests) == 2


def test_ctrl_d_exits_and_closes_every_server(start: Any, api: ScriptedModelApi) -> None:
    session = start(api, {"echo": ECHO_SERVER, "ask": ELICIT_SERVER})
    term = session.term
    term.wait_for("MCP: 2 server(s), 7 tool(s) registered")
    pids = session.pids()
    assert all(alive(pid) for pid in pids)
    term.press("\x04")
    assert term.wait_for_exit() == 0
    assert not any(alive(pid) for pid in pids)


def test_sighup_closes_every_server(start: Any, api: ScriptedModelApi) -> None:
    session = start(api)
    session.term.wait_for("MCP: 1 server(s)")
    [pid] = session.pids()
    session.term.signal(signal.SIGHUP)
    assert session.term.wait_for_exit() == 128 + signal.SIGHUP
    assert not alive(pid)


def test_an_elicitation_asks_each_field_with_its_default_and_sends_the_answer(
    start: Any, api: ScriptedModelApi
) -> None:
    def check_answer(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["content"] == "hello Ann"
        return anthropic_text("Nice to meet you, Ann.")

    api.add(anthropic_tool_use("mcp__ask__ask_name", {}), check_answer)
    session = start(api, {"ask": ELICIT_SERVER})
    term = session.term
    term.wait_for("MCP: 1 server(s), 1 tool(s) registered")
    term.type("ask me my name")
    term.wait_for("MCP server 'ask' asks: What is your name?")
    term.wait_for("Name (required): Bob")  # the schema's default, pre-filled
    term.press("\x7f\x7f\x7f")  # backspace over the default
    term.type("Ann")
    term.wait_for("send? [a]ccept / [d]ecline / [c]ancel: a")
    term.type("")
    term.wait_for("⏺ mcp__ask__ask_name {} → hello Ann")
    term.wait_for("Nice to meet you, Ann.")
    term.type("/exit")
    assert term.wait_for_exit() == 0


def test_without_a_model_slash_commands_work_and_a_prompt_says_how_to_configure_one(
    start: Any,
) -> None:
    session = start(None)
    term = session.term
    term.wait_for("no model configured")
    term.wait_for("MCP: 1 server(s), 6 tool(s) registered")
    term.type("hello?")
    term.wait_for("No model configured: set ANTHROPIC_API_KEY")
    term.type('/mcp call mcp__echo__echo {"text": "direct"}')
    term.wait_for('⏺ mcp__echo__echo {"text":"direct"} → direct')
    term.type("/help")
    term.wait_for("/mcp call TOOL [JSON]")
    term.type("/tools")
    term.wait_for("tool search: auto (decided once a model is chosen)")
    term.type("/exit")
    assert term.wait_for_exit() == 0
