"""Red-team finding 4 (review of issue 24): a file name that is not UTF-8, and a prompt
typed under a legacy locale, through the real ``cat-code -p``: tool results and the saved
session carry escapes, never lone surrogates, and nothing fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from scripted.model_api import ScriptedModelApi, anthropic_text, anthropic_tool_use, tool_results

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


def run(
    project: Path, api: ScriptedModelApi, prompt: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(
        HOME=str(project.parent), CAT_CODE_HOME=str(project.parent / "cat-home"),
        ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url, **extra,
    )  # fmt: skip
    return subprocess.run(
        [CAT_CODE, "-p", prompt],
        cwd=project, env=env, stdin=subprocess.DEVNULL,
        capture_output=True, text=True, errors="replace", timeout=60,
    )  # fmt: skip


def test_finding_4_a_file_name_that_is_not_utf8_is_escaped_in_grep_glob_and_the_saved_session(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    with open(os.path.join(os.fsencode(project), b"bad\xff.txt"), "w") as bad:
        bad.write("needle\n")
    results: list[dict[str, Any]] = []

    def then(step: dict[str, Any]) -> Any:
        def answer(request: dict[str, Any]) -> dict[str, Any]:
            results.extend(tool_results(request))
            return step

        return answer

    script = [
        anthropic_tool_use("grep", {"pattern": "needle"}),
        then(anthropic_tool_use("glob", {"pattern": "*"})),
        then(anthropic_text("done")),
    ]
    with ScriptedModelApi(script) as api:
        done = run(project, api, "find it")

    assert done.returncode == 0 and api.errors == [], done.stderr
    assert "Traceback" not in done.stderr and done.stdout.strip() == "done"
    assert [r["is_error"] for r in results] == [False, False]
    grep, glob = (r["content"] for r in results)
    # grep's ripgrep backend (when installed) names the file with U+FFFD, its built-in
    # search with the escape: either way readable text, never a lone surrogate.
    assert "bad\\udcff.txt" in grep or "bad\ufffd.txt" in grep, results
    assert "bad\\udcff.txt" in glob, results
    [saved] = (tmp_path / "cat-home").rglob("*.jsonl")
    text = saved.read_bytes().decode("utf-8")  # strict: valid UTF-8
    assert "bad\\\\udcff.txt" in text and "\\udcff" not in text.replace("\\\\udcff", "")


def test_finding_4_a_prompt_typed_under_lc_all_c_reaches_the_model_as_the_utf8_typed(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    with ScriptedModelApi([anthropic_text("ok")]) as api:
        done = run(project, api, "héllo 你好", LC_ALL="C", PYTHONUTF8="0")
        requests = api.requests
    assert done.returncode == 0, done.stderr
    assert "héllo 你好" in json.dumps(requests[0]["messages"], ensure_ascii=False)
