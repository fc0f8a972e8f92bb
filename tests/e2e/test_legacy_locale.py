"""Finding 15 of issue 24: under a legacy locale (``LC_ALL=C`` with Python's UTF-8 mode
off, so stdout encodes ASCII strictly) a UTF-8 answer is escaped, never an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scripted.model_api import ScriptedModelApi, anthropic_text
from test_oneshot import anthropic_env, cat_code

ANSWER = "héllo — ✓ 日本 😀"
#: What an ASCII terminal shows instead: JSON's escapes, readable and reversible.
ESCAPED = r"h\u00e9llo \u2014 \u2713 \u65e5\u672c \ud83d\ude00"


def legacy_env(tmp_path: Path, api: ScriptedModelApi) -> dict[str, str]:
    env = anthropic_env(tmp_path, api)
    for name in ("LANG", "LANGUAGE", "LC_CTYPE", "PYTHONIOENCODING"):
        env.pop(name, None)
    # Python turns UTF-8 mode on by itself in the C locale; a user's PYTHONUTF8=0 (or an
    # older system's locale) turns it off, and then stdout is strict ASCII.
    env.update(LC_ALL="C", PYTHONUTF8="0")
    return env


def test_finding_15_a_non_ascii_answer_under_lc_all_c_is_printed_escaped_not_failed(
    tmp_path: Path,
) -> None:
    with ScriptedModelApi([anthropic_text(ANSWER)]) as api:
        run = cat_code(legacy_env(tmp_path, api), "-p", "say hello")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == ESCAPED
    assert "UnicodeEncodeError" not in run.stderr


@pytest.mark.parametrize("output", ["json", "stream-json"])
def test_finding_15_json_output_under_lc_all_c_stays_valid_json_with_the_same_text(
    tmp_path: Path, output: str
) -> None:
    with ScriptedModelApi([anthropic_text(ANSWER)]) as api:
        run = cat_code(legacy_env(tmp_path, api), "-p", "say hello", "--output-format", output)
    assert run.returncode == 0, run.stderr
    assert run.stdout.isascii()
    records = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert records[-1]["type"] == "result" and records[-1]["result"] == ANSWER
