"""``cat-code -p`` as a coding agent: the file tools through a scripted model on real files,
memory files in the system prompt, and the json / stream-json output formats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted.model_api import (
    ScriptedModelApi,
    anthropic_text,
    anthropic_tool_use,
    tool_results,
)

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / ".git").mkdir()
    (folder / "none.json").write_text('{"mcpServers": {}}')
    return folder


def run(
    project: Path, api: ScriptedModelApi, *args: str, home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(project.parent), ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
    if home is not None:
        env["CAT_CODE_HOME"] = str(home)
    return subprocess.run(
        [CAT_CODE, "--mcp-config", "none.json", *args],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def result_of(request: dict[str, Any]) -> dict[str, Any]:
    [result] = tool_results(request)
    return result


def test_the_model_reads_then_edits_a_file_and_the_edit_is_exact(project: Path) -> None:
    source = project / "app.py"
    source.write_bytes(b"def greet():\r\n    return 'hello'\r\n")

    def after_read(request: dict[str, Any]) -> dict[str, Any]:
        assert result_of(request)["content"].startswith("     1\tdef greet():")
        return anthropic_tool_use(
            "edit_file", {"path": "app.py", "old_string": "'hello'", "new_string": "'bye'"}
        )

    def after_edit(request: dict[str, Any]) -> dict[str, Any]:
        result = result_of(request)
        assert result["is_error"] is False, result
        return anthropic_text("done")

    script = [anthropic_tool_use("read_file", {"path": "app.py"}), after_read, after_edit]
    with ScriptedModelApi(script) as api:
        done = run(project, api, "-p", "say bye", "--allow-tool", "edit_file")
    assert api.errors == [] and done.returncode == 0, done.stderr
    assert source.read_bytes() == b"def greet():\r\n    return 'bye'\r\n"  # CRLF kept


def test_an_edit_without_a_read_is_refused_and_the_file_is_byte_identical(project: Path) -> None:
    source = project / "notes.txt"
    source.write_bytes(b"keep me\n")

    def check(request: dict[str, Any]) -> dict[str, Any]:
        result = result_of(request)
        assert result["is_error"] and "has not been read" in result["content"]
        return anthropic_text("refused")

    edit = {"path": "notes.txt", "old_string": "keep", "new_string": "lose"}
    with ScriptedModelApi([anthropic_tool_use("edit_file", edit), check]) as api:
        done = run(project, api, "-p", "edit", "--yes")
    assert api.errors == [] and done.returncode == 0, done.stderr
    assert source.read_bytes() == b"keep me\n"


def test_writes_ask_so_one_shot_refuses_them_unless_allowed(project: Path) -> None:
    def check(request: dict[str, Any]) -> dict[str, Any]:
        result = result_of(request)
        assert result["is_error"] and "--allow-tool 'write_file'" in result["content"]
        return anthropic_text("not allowed")

    write = {"path": "new/file.txt", "content": "hi\n"}
    with ScriptedModelApi([anthropic_tool_use("write_file", write), check]) as api:
        run(project, api, "-p", "write")
    assert api.errors == [] and not (project / "new").exists()
    with ScriptedModelApi([anthropic_tool_use("write_file", write), anthropic_text("ok")]) as api:
        done = run(project, api, "-p", "write", "--allow-tool", "write_file")
    assert done.returncode == 0, done.stderr
    assert (project / "new" / "file.txt").read_text() == "hi\n"


def test_grep_and_glob_honour_gitignore_through_the_model(project: Path) -> None:
    (project / ".gitignore").write_text("dist/\n")
    (project / "dist").mkdir()
    (project / "dist" / "bundle.js").write_text("const marker = 1\n")
    (project / "src.js").write_text("const marker = 2\n")

    def after_grep(request: dict[str, Any]) -> dict[str, Any]:
        assert result_of(request)["content"] == "src.js:1:const marker = 2"
        return anthropic_tool_use("glob", {"pattern": "**/*.js"})

    def after_glob(request: dict[str, Any]) -> dict[str, Any]:
        assert result_of(request)["content"] == "src.js"
        return anthropic_text("found")

    grep = {"pattern": "marker", "output": "content"}
    with ScriptedModelApi([anthropic_tool_use("grep", grep), after_grep, after_glob]) as api:
        done = run(project, api, "-p", "find the marker")
    assert api.errors == [] and done.returncode == 0, done.stderr


def test_reading_a_fifo_is_refused_at_once_and_the_run_ends(project: Path) -> None:
    os.mkfifo(project / "pipe")

    def check(request: dict[str, Any]) -> dict[str, Any]:
        result = result_of(request)
        assert result["is_error"] and "FIFO" in result["content"]
        return anthropic_text("it is a pipe")

    with ScriptedModelApi([anthropic_tool_use("read_file", {"path": "pipe"}), check]) as api:
        done = run(project, api, "-p", "read the pipe")
    assert api.errors == [] and done.returncode == 0, done.stderr
    assert done.stdout == "it is a pipe\n"


def test_reading_outside_the_working_directory_needs_approval(project: Path) -> None:
    outside = project.parent / "outside.txt"
    outside.write_text("far away\n")

    def check(request: dict[str, Any]) -> dict[str, Any]:
        result = result_of(request)
        assert result["is_error"] and "outside the working directory" in result["content"]
        return anthropic_tool_use("read_file", {"path": str(outside)})

    def allowed(request: dict[str, Any]) -> dict[str, Any]:
        assert "far away" in result_of(request)["content"]
        return anthropic_text("read it")

    with ScriptedModelApi([anthropic_tool_use("read_file", {"path": str(outside)}), check]) as api:
        api.add(allowed)
        done = run(project, api, "-p", "read", "--add-dir", str(project.parent / "nowhere"))
    # --add-dir of a missing folder is a usage error: nothing ran.
    assert done.returncode == 2
    with ScriptedModelApi([anthropic_tool_use("read_file", {"path": str(outside)}), check]) as api:
        api.add(anthropic_text("no"))
        done = run(project, api, "-p", "read")
    assert api.errors == [] and done.returncode == 0, done.stderr
    script = [anthropic_tool_use("read_file", {"path": str(outside)}), allowed]
    with ScriptedModelApi(script) as api:
        done = run(project, api, "-p", "read", "--add-dir", str(project.parent))
    assert api.errors == [] and done.returncode == 0, done.stderr


def test_cat_code_credentials_are_never_read_whatever_the_rules(
    project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "credentials.json").write_text('{"secret": "tok-SECRET"}')

    def check(request: dict[str, Any]) -> dict[str, Any]:
        result = result_of(request)
        assert result["is_error"] and "tok-SECRET" not in json.dumps(request)
        return anthropic_text("refused")

    read = {"path": str(home / "credentials.json")}
    with ScriptedModelApi([anthropic_tool_use("read_file", read), check]) as api:
        done = run(project, api, "-p", "read", "--yes", "--add-dir", str(home), home=home)
    assert api.errors == [] and done.returncode == 0, done.stderr


def test_memory_files_and_appended_text_reach_the_system_prompt(
    project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "AGENTS.md").write_text("User rule: answer in French.")
    (project / "AGENTS.md").write_text("Project rule: run make test.")
    sub = project / "pkg"
    sub.mkdir()
    (sub / "CLAUDE.md").write_text("Package rule: no globals.")
    (sub / "none.json").write_text('{"mcpServers": {}}')
    with ScriptedModelApi([anthropic_text("ok")]) as api:
        done = run(sub, api, "-p", "hi", "--append-system-prompt", "Be brief.", home=home)
    assert done.returncode == 0, done.stderr
    system = api.requests[0]["system"]
    text = system if isinstance(system, str) else "".join(b["text"] for b in system)
    order = [
        text.index(f"{home / 'AGENTS.md'}"),
        text.index("User rule: answer in French."),
        text.index(f"{project / 'AGENTS.md'}"),
        text.index("Project rule: run make test."),
        text.index(f"{sub / 'CLAUDE.md'}"),
        text.index("Package rule: no globals."),
    ]
    assert order == sorted(order)
    assert text.rstrip().endswith("Be brief.")


def test_json_output_is_one_result_object(project: Path) -> None:
    with ScriptedModelApi(
        [anthropic_tool_use("glob", {"pattern": "*"}), anthropic_text("Hi.")]
    ) as api:
        done = run(project, api, "-p", "hi", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    result = json.loads(line)
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["is_error"] is False and result["result"] == "Hi."
    assert result["num_turns"] == 2 and isinstance(result["duration_ms"], int)
    assert result["session_id"]
    assert result["usage"] == {
        "input_tokens": 20,
        "output_tokens": 10,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }


def test_json_output_reports_the_turn_limit_and_a_missing_model(project: Path) -> None:
    with ScriptedModelApi([anthropic_tool_use("glob", {"pattern": "*"})]) as api:
        done = run(project, api, "-p", "hi", "--output-format", "json", "--max-turns", "1")
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert (result["subtype"], result["is_error"], result["num_turns"]) == (
        "error_max_turns",
        True,
        1,
    )
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env["HOME"] = str(project.parent)
    missing = subprocess.run(
        [CAT_CODE, "-p", "hi", "--output-format", "json"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 1
    failed = json.loads(missing.stdout)
    assert failed["subtype"] == "error" and failed["is_error"] is True


def test_stream_json_prints_init_messages_and_the_result_line_by_line(project: Path) -> None:
    (project / "a.txt").write_text("alpha\n")
    script = [
        anthropic_tool_use("read_file", {"path": "a.txt"}, text="Reading.", call_id="toolu_1"),
        anthropic_text("It says alpha."),
    ]
    with ScriptedModelApi(script) as api:
        done = run(project, api, "-p", "read a.txt", "--output-format", "stream-json")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [(r["type"], r.get("subtype")) for r in records]
    assert kinds == [
        ("system", "init"),
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("result", "success"),
    ]
    init = records[0]
    assert {"read_file", "write_file", "edit_file", "grep", "glob", "shell"} <= set(init["tools"])
    assert init["mcp_servers"] == [] and init["model"]
    assert records[1]["message"]["content"] == [
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.txt"}},
    ]
    [block] = records[2]["message"]["content"]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_1"
    assert block["content"] == "     1\talpha" and block["is_error"] is False
    assert records[-1]["result"] == "It says alpha."
    assert len({r["session_id"] for r in records}) == 1


def test_stream_json_of_a_run_that_cannot_start_still_begins_with_its_init_line(
    project: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env["HOME"] = str(project.parent)
    missing = subprocess.run(
        [CAT_CODE, "-p", "hi", "--output-format", "stream-json"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 1
    records = [json.loads(line) for line in missing.stdout.splitlines()]
    assert [(r["type"], r.get("subtype")) for r in records] == [
        ("system", "init"),
        ("result", "error"),
    ]


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_structured_output_escapes_c1_controls_from_the_model(
    project: Path, output_format: str
) -> None:
    hostile = "done\x1b]0;HACKED\x07\x9b31m"
    with ScriptedModelApi([anthropic_text(hostile)]) as api:
        done = run(project, api, "-p", "hi", "--output-format", output_format)
    assert done.returncode == 0, done.stderr
    assert not any(c in done.stdout for c in "\x1b\x07\x9b")
    assert json.loads(done.stdout.splitlines()[-1])["result"] == hostile  # the same JSON
