"""``cat-code -p`` end to end: the real command and SDKs, a real MCP server, a scripted API."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest
from scripted.model_api import (
    Hold,
    ScriptedModelApi,
    StreamError,
    anthropic_error,
    anthropic_text,
    anthropic_tool_use,
    openai_text,
    openai_tool_call,
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

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
EXAMPLE_CONFIG = "examples/mcp.json"
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR",
    "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    """Our environment without model settings; HOME is empty so no SDK profile file is found."""
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.pop("ANTHROPIC_CONFIG_DIR", None)
    env["HOME"] = str(tmp_path)
    env.update(extra)
    return env


def cat_code(
    env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CAT_CODE, *args],
        cwd=REPO,
        env=env,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=60,
    )


def anthropic_env(tmp_path: Path, api: ScriptedModelApi) -> dict[str, str]:
    return environment(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)


def test_one_shot_calls_the_echo_tool_and_prints_only_the_answer_on_stdout(
    tmp_path: Path,
) -> None:
    def ask_for_echo(request: dict[str, Any]) -> dict[str, Any]:
        assert "mcp__echo__echo" in [t["name"] for t in request["tools"]]
        return anthropic_tool_use("mcp__echo__echo", {"text": "你好"}, call_id="toolu_echo")

    def check_result(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["tool_use_id"] == "toolu_echo"
        assert result["content"] == "你好" and result["is_error"] is False
        return anthropic_text("The echo tool said 你好.")

    with ScriptedModelApi([ask_for_echo, check_result]) as api:
        run = cat_code(
            anthropic_env(tmp_path, api),
            "-p", "use the echo tool to say 你好", "--mcp-config", EXAMPLE_CONFIG,
        )  # fmt: skip
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    assert run.stdout == "The echo tool said 你好.\n"
    assert '⏺ mcp__echo__echo {"text":"你好"} → 你好' in run.stderr.splitlines()
    assert len(api.requests) == 2


def test_a_tool_that_would_ask_is_refused_unless_allowed(tmp_path: Path) -> None:
    def answer(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        return anthropic_text(f"is_error={result['is_error']} content={result['content']}")

    script = [anthropic_tool_use("mcp__echo__fail", {}), answer]
    with ScriptedModelApi(script) as api:
        refused = cat_code(
            anthropic_env(tmp_path, api), "-p", "fail", "--mcp-config", EXAMPLE_CONFIG
        )
    assert refused.returncode == 0, refused.stderr
    assert "is_error=True" in refused.stdout and "--allow-tool 'mcp__echo__fail'" in refused.stdout

    with ScriptedModelApi(script) as api:
        allowed = cat_code(
            anthropic_env(tmp_path, api),
            "-p", "fail", "--mcp-config", EXAMPLE_CONFIG, "--allow-tool", "mcp__echo__*",
        )  # fmt: skip
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout == "is_error=True content=this tool always fails\n"
    assert "⏺ mcp__echo__fail {} → this tool always fails" in allowed.stderr


def test_one_shot_declines_a_server_asking_for_input_and_names_the_server(
    tmp_path: Path,
) -> None:
    def check_declined(request: dict[str, Any]) -> dict[str, Any]:
        [result] = tool_results(request)
        assert result["content"] == "decline"
        return anthropic_text("The server wanted a name; none was given.")

    config, _ = pid_recording_config(tmp_path, {"ask": ELICIT_SERVER})
    script = [anthropic_tool_use("mcp__ask__ask_name", {}), check_declined]
    with ScriptedModelApi(script) as api:
        run = cat_code(anthropic_env(tmp_path, api), "-p", "ask me", "--mcp-config", str(config))
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    assert "MCP server 'ask' asked for input (What is your name?)" in run.stderr
    assert "declined in -p mode" in run.stderr


def test_an_api_error_exits_1_with_one_line_on_stderr(tmp_path: Path) -> None:
    with ScriptedModelApi(
        [anthropic_error(401, "authentication_error", "invalid x-api-key")]
    ) as api:
        run = cat_code(anthropic_env(tmp_path, api), "-p", "hi", "--mcp-config", EXAMPLE_CONFIG)
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.strip().splitlines() == [
        "cat-code: Anthropic API authentication failed (401): invalid x-api-key "
        "— check ANTHROPIC_API_KEY"
    ]


def test_without_a_model_one_shot_exits_1_saying_how_to_configure_one(tmp_path: Path) -> None:
    run = cat_code(environment(tmp_path), "-p", "hi", "--mcp-config", EXAMPLE_CONFIG)
    assert run.returncode == 1 and run.stdout == ""
    assert "No model configured" in run.stderr and "ANTHROPIC_API_KEY" in run.stderr


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_max_turns_below_one_is_a_usage_error_before_anything_runs(
    tmp_path: Path, value: str
) -> None:
    run = cat_code(environment(tmp_path), "-p", "hi", "--max-turns", value)
    assert (run.returncode, run.stdout) == (2, "")
    assert f"cat-code: error: --max-turns must be a whole number ≥ 1, not '{value}'" in run.stderr
    assert "No model configured" not in run.stderr


def test_one_shot_through_an_openai_compatible_server_with_the_prompt_on_stdin(
    tmp_path: Path,
) -> None:
    def check(request: dict[str, Any]) -> dict[str, Any]:
        tool_message = request["messages"][-1]
        assert tool_message == {"role": "tool", "tool_call_id": "call_1", "content": "olleh"}
        return openai_text("reversed: olleh")

    script = [openai_tool_call("mcp__echo__reverse", '{"text": "hello"}', call_id="call_1"), check]
    with ScriptedModelApi(script) as api:
        env = environment(tmp_path, OPENAI_BASE_URL=api.url + "/v1")
        run = cat_code(
            env, "-p", "-", "--model", "openai:local", "--mcp-config", EXAMPLE_CONFIG,
            stdin="reverse hello",
        )  # fmt: skip
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    assert run.stdout == "reversed: olleh\n"
    assert api.requests[0]["model"] == "local"
    assert api.requests[0]["messages"][-1] == {"role": "user", "content": "reverse hello"}


def model_env(tmp_path: Path, api: ScriptedModelApi, provider: str) -> tuple[dict[str, str], str]:
    """The environment and ``--model`` that point ``provider``'s SDK at the scripted API."""
    if provider == "anthropic":
        return anthropic_env(tmp_path, api), "anthropic:claude-test"
    return environment(tmp_path, OPENAI_BASE_URL=api.url + "/v1"), "openai:gpt-test"


def read_until(pipe: IO[bytes], text: bytes, timeout: float = 30.0) -> bytes:
    """Read ``pipe`` until ``text`` has come (bounded); everything read so far."""
    deadline = time.monotonic() + timeout
    seen = b""
    while text not in seen:
        left = deadline - time.monotonic()
        ready, _, _ = select.select([pipe], [], [], max(0.0, left))
        if not ready:
            raise AssertionError(f"{text!r} did not come; got {seen!r}")
        data = os.read(pipe.fileno(), 65536)
        if not data:
            raise AssertionError(f"the output ended before {text!r}; got {seen!r}")
        seen += data
    return seen


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_one_shot_writes_the_answer_to_stdout_while_it_streams(
    tmp_path: Path, provider: str
) -> None:
    hold = Hold()
    no_servers = tmp_path / "none.json"
    no_servers.write_text('{"mcpServers": {}}')
    with ScriptedModelApi([streamed("The first ", "line.\n", "More ", hold, "to come.")]) as api:
        env, model = model_env(tmp_path, api, provider)
        with subprocess.Popen(
            [CAT_CODE, "-p", "stream it", "--model", model, "--mcp-config", str(no_servers)],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=0,
        ) as process:
            try:
                assert process.stdout is not None
                early = read_until(process.stdout, b"The first line.\nMore ")
                assert process.poll() is None  # the rest of the answer is still held
                hold.release()
                rest, err = process.communicate(timeout=30)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
    assert api.errors == []
    assert process.returncode == 0, err
    assert (early + rest).decode() == "The first line.\nMore to come.\n"
    assert err == b""


def test_text_written_before_a_tool_call_is_on_stdout_too_each_message_on_its_lines(
    tmp_path: Path,
) -> None:
    script = [
        streamed("I'll ", "echo it.", tool_calls=[("mcp__echo__echo", {"text": "你好"}, "c1")]),
        streamed("It said ", "你好."),
    ]
    with ScriptedModelApi(script) as api:
        run = cat_code(anthropic_env(tmp_path, api), "-p", "echo", "--mcp-config", EXAMPLE_CONFIG)
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    # While it streams, nobody knows yet that tool calls will follow.
    assert run.stdout == "I'll echo it.\nIt said 你好.\n"
    assert run.stderr == '⏺ mcp__echo__echo {"text":"你好"} → 你好\n'


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_an_error_mid_stream_keeps_the_text_on_stdout_and_exits_1(
    tmp_path: Path, provider: str
) -> None:
    no_servers = tmp_path / "none.json"
    no_servers.write_text('{"mcpServers": {}}')
    script = [streamed("Half an ", StreamError("overloaded_error", "Overloaded"))]
    with ScriptedModelApi(script) as api:
        env, model = model_env(tmp_path, api, provider)
        run = cat_code(env, "-p", "hi", "--model", model, "--mcp-config", str(no_servers))
    assert api.errors == [] and len(api.requests) == 1  # not retried: the text was out
    assert run.returncode == 1
    assert run.stdout == "Half an \n"
    [line] = run.stderr.splitlines()
    assert line.startswith("cat-code: ") and "Overloaded" in line


def test_sigterm_during_a_tool_call_closes_the_mcp_server(tmp_path: Path) -> None:
    config, pidfiles = pid_recording_config(tmp_path, {"echo": ECHO_SERVER})
    script = [anthropic_tool_use("mcp__echo__sleep", {"seconds": 60})]
    with ScriptedModelApi(script) as api:
        with subprocess.Popen(
            [CAT_CODE, "-p", "sleep", "--yes", "--mcp-config", str(config)],
            cwd=REPO,
            env=anthropic_env(tmp_path, api),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as process:
            try:
                assert process.stderr is not None
                # The server reports progress once the call is running: wait for that line.
                line = process.stderr.readline()
                assert "mcp__echo__sleep" in line, line
                pid = read_pid(pidfiles["echo"])
                assert alive(pid)
                process.send_signal(signal.SIGTERM)
                _, err = process.communicate(timeout=30)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
    assert process.returncode == 128 + signal.SIGTERM
    assert "interrupted by SIGTERM" in err
    assert not alive(pid)


@pytest.mark.parametrize("args", [["--help"], ["mcp", "list", "--mcp-config", "missing.json"]])
def test_help_and_mcp_commands_never_import_the_model_sdks_or_the_terminal_ui(
    tmp_path: Path, args: list[str]
) -> None:
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "cat_code", *args],
        cwd=tmp_path,
        env=environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    imported = {line.split("|")[-1].strip().split(".")[0] for line in run.stderr.splitlines()}
    assert "cat_code" in imported
    assert imported.isdisjoint({"anthropic", "openai", "prompt_toolkit", "rich"})


def test_thinking_is_asked_for_kept_across_a_tool_call_and_never_in_the_result(
    tmp_path: Path,
) -> None:
    thought = {"type": "thinking", "thinking": "Echo first.", "signature": "sig=="}

    def think_then_echo(request: dict[str, Any]) -> dict[str, Any]:
        assert request["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        answer = anthropic_tool_use("mcp__echo__echo", {"text": "hi"}, call_id="toolu_echo")
        answer["content"].insert(0, thought)
        return answer

    def check_thinking_came_back(request: dict[str, Any]) -> dict[str, Any]:
        assert request["messages"][1]["content"][0] == thought
        return anthropic_text("Done.")

    with ScriptedModelApi([think_then_echo, check_thinking_came_back]) as api:
        env = anthropic_env(tmp_path, api)
        env["CAT_CODE_THINKING_TOKENS"] = "2048"
        run = cat_code(
            env, "-p", "echo hi", "--model", "anthropic:claude-sonnet-4-5",
            "--mcp-config", EXAMPLE_CONFIG, "--output-format", "stream-json",
        )  # fmt: skip
    assert api.errors == []
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    [first] = [e for e in lines if e["type"] == "assistant"][:1]
    assert first["message"]["content"][0] == thought
    [result] = [e for e in lines if e["type"] == "result"]
    assert result["result"] == "Done."
