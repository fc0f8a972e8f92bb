"""The output-size policy: limits, the saved file, what the model reads, and a real 2 MB result."""

from __future__ import annotations

import base64
import logging
import os
import random
import re
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cat_code.host.config.load import McpConfig, StdioServerConfig
from cat_code.host.mcp_tools import output_policy
from cat_code.host.mcp_tools.output_policy import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    ENV_VAR,
    MAX_IMAGE_BASE64,
    MAX_META_CHARS,
    enforce,
    limit_chars,
    output_dir,
    save_output,
)
from cat_code.host.servers.pool import McpPool
from cat_code.tools.base import Media, ToolResult
from cat_code.tools.builtin import ReadFileTool

OUTPUT_SERVER = Path(__file__).resolve().parents[2] / "servers" / "output_server.py"
DEFAULT_CHARS = DEFAULT_MAX_OUTPUT_TOKENS * 4
PNG = b"\x89PNG\r\n\x1a\n"


def numbered(count: int, width: int = 60) -> str:
    """``count`` lines ``line N yyy…`` of ``width`` characters, newline-separated."""
    return "\n".join(f"line {n} ".ljust(width, "y") for n in range(1, count + 1))


def saved_files(home: Path) -> list[Path]:
    """The outputs saved for the working directory's project (`output_dir`)."""
    folder = output_dir(home)
    return sorted(folder.iterdir()) if folder.exists() else []


def saved_path(content: str) -> Path:
    match = re.search(r"The whole output is saved in (\S+?)\. ", content)
    assert match, content[:500]
    return Path(match.group(1))


# -- the limit -----------------------------------------------------------------------------


def test_the_default_limit_is_25000_tokens_of_4_characters() -> None:
    assert limit_chars(None, None, {}) == 100_000 == DEFAULT_CHARS


def test_the_environment_sets_the_limit_and_the_entry_s_max_output_tokens_wins() -> None:
    assert limit_chars(None, None, {ENV_VAR: "1000"}) == 4000
    assert limit_chars(None, None, {ENV_VAR: " 1000 "}) == 4000
    assert limit_chars(100, None, {ENV_VAR: "1000"}) == 400


@pytest.mark.parametrize("value", ["abc", "0", "-5", "1.5", "1e3"])
def test_a_bad_environment_value_warns_once_naming_it_and_the_default_applies(
    value: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(output_policy, "_warned_env", set())
    with caplog.at_level(logging.WARNING, logger="cat_code.host.mcp_tools.output_policy"):
        assert limit_chars(None, None, {ENV_VAR: value}) == DEFAULT_CHARS
        assert limit_chars(None, None, {ENV_VAR: value}) == DEFAULT_CHARS
    [record] = caplog.records
    assert ENV_VAR in record.getMessage() and repr(value) in record.getMessage()
    assert "25000" in record.getMessage()


def test_a_tool_s_meta_raises_the_limit_up_to_500000_characters_and_never_lowers_it() -> None:
    def meta(value: object) -> dict[str, object]:
        return {"anthropic/maxResultSizeChars": value}

    assert limit_chars(None, meta(300_000), {}) == 300_000
    assert limit_chars(None, meta(250_000.7), {}) == 250_000
    assert limit_chars(None, meta(10), {}) == DEFAULT_CHARS  # never lower
    assert limit_chars(10, meta(1000), {}) == 1000  # raises a small entry limit too
    assert limit_chars(None, meta(10**9), {}) == MAX_META_CHARS  # clamped
    assert limit_chars(None, meta(float("inf")), {}) == MAX_META_CHARS
    assert limit_chars(200_000, meta(300_000), {}) == 800_000  # the entry may go higher
    for unusable in (True, "big", -1, 0, None, float("nan"), [5]):
        assert limit_chars(None, meta(unusable), {}) == DEFAULT_CHARS, unusable
    assert limit_chars(None, "not an object", {}) == DEFAULT_CHARS


# -- what the model reads ------------------------------------------------------------------


async def test_a_result_within_the_limit_is_untouched_and_nothing_is_saved(
    cat_code_home: Path,
) -> None:
    result = ToolResult("x" * 1000, raw={"content": []})
    assert await enforce(result, limit=1000, server="s", tool="t") is result
    assert saved_files(cat_code_home) == []


async def test_a_long_result_is_saved_whole_and_the_model_gets_head_tail_size_and_path(
    cat_code_home: Path,
) -> None:
    text = numbered(5000)  # 5000 lines, 304,999 characters
    raw = {"content": [{"type": "text", "text": text}], "isError": True}
    result = ToolResult(text, is_error=True, raw=raw)

    short = await enforce(result, limit=DEFAULT_CHARS, server="git hub", tool="log/all")

    [saved] = saved_files(cat_code_home)
    assert saved_path(short.content) == saved
    assert saved.read_text() == text
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert re.fullmatch(r"git_hub__log_all-\d{8}-\d{6}-[0-9a-f]{6}\.txt", saved.name)
    content = short.content
    assert len(content) < 11_000
    assert "304,999 characters (≈76,250 tokens), 5,000 lines" in content
    assert "the limit is 100,000 characters" in content
    assert "line 1 yyy" in content and "line 5000 yyy" in content
    assert "line 2500 " not in content
    assert short.is_error and short.raw is raw  # the wire result stays whole


async def test_the_read_file_call_suggested_reads_the_first_lines_not_shown(
    cat_code_home: Path,
) -> None:
    text = numbered(5000)
    short = await enforce(ToolResult(text, raw={}), limit=DEFAULT_CHARS, server="s", tool="t")

    match = re.search(r'read_file with path "([^"]+)", offset (\d+) and limit (\d+)', short.content)
    assert match, short.content[-600:]
    path, offset, limit = match.group(1), int(match.group(2)), int(match.group(3))
    shown = {int(n) for n in re.findall(r"^line (\d+) ", short.content, re.MULTILINE)}
    assert offset == max(n for n in shown if n < 2500) + 1  # right after the head
    read = await ReadFileTool().execute({"path": path, "offset": offset, "limit": limit})
    first = read.content.splitlines()[0]
    assert not read.is_error and first.endswith(f"line {offset} ".ljust(60, "y"))
    assert 1 <= limit and len(read.content) <= 30_000  # one call, not cut by read_file
    assert f"lines {offset:,}–" in short.content


def long_line(alphabet: str, size: int = 300_000) -> str:
    return "".join(alphabet[i % len(alphabet)] for i in range(size))


@pytest.mark.parametrize(
    "text",
    [
        long_line("abcdefghijklmnopqrstuvwxyz"),
        # GNU cut -c counts bytes: a character-correct command is needed.
        long_line("aé🐈ß"),
        # Line breaks other than \n count as Python counts them, as the hint's numbers do.
        "intro é\r\nsecond\u2028third\n" + long_line("aé🐈ß"),
    ],
    ids=["ascii", "non-ascii", "other-line-breaks"],
)
async def test_one_long_line_points_to_a_shell_command_that_shows_the_next_part(
    cat_code_home: Path, text: str
) -> None:
    short = await enforce(ToolResult(text, raw={}), limit=DEFAULT_CHARS, server="s", tool="t")

    assert "read_file with path" not in short.content
    match = re.search(r"use the shell tool: (.+?) shows the next", short.content)
    assert match, short.content[-600:]
    shown = subprocess.run(
        ["bash", "-c", match.group(1)],
        capture_output=True,
        timeout=30,
        check=True,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    ).stdout.decode()
    head = short.content.split("\n[… ")[0].split("\n", 1)[1]
    assert text.startswith(head) and not head.endswith("\n")
    assert shown == text[len(head) : len(head) + 20_000] + "\n"


async def test_a_failed_save_still_shortens_and_says_it_could_not_be_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    monkeypatch.setenv("CAT_CODE_HOME", str(home))
    text = numbered(5000)

    short = await enforce(ToolResult(text, raw={}), limit=DEFAULT_CHARS, server="s", tool="t")

    assert "could not be saved to a file" in short.content
    assert str(home / "tool-output") in short.content  # names the place at fault
    assert "line 1 yyy" in short.content and "line 5000 yyy" in short.content
    assert "read_file" not in short.content and len(short.content) < 11_000


async def test_a_small_limit_gives_a_preview_no_larger_than_the_limit(cat_code_home: Path) -> None:
    text = numbered(100)
    short = await enforce(ToolResult(text, raw={}), limit=400, server="s", tool="t")
    before, _, after = short.content.partition("\n[… ")
    head = before.split("\n", 1)[1]
    tail = after.split("\n", 1)[1].rsplit("\n[To read", 1)[0]
    assert head.startswith("line 1 ") and tail.endswith("line 100 ".ljust(60, "y"))
    assert len(head) + len(tail) <= 400
    assert saved_path(short.content).read_text() == text


async def test_an_image_too_large_for_a_model_is_saved_and_left_out_of_the_media(
    cat_code_home: Path,
) -> None:
    big = PNG + b"\0" * (MAX_IMAGE_BASE64 * 3 // 4 + 10)
    small = Media("image", "image/png", base64.b64encode(PNG).decode())
    huge = Media("image", "image/png", base64.b64encode(big).decode())
    result = ToolResult("[image: image/png, 3.8 MiB]", raw={}, media=[small, huge])

    out = await enforce(result, limit=DEFAULT_CHARS, server="s", tool="t")

    assert out.media == [small]
    [saved] = saved_files(cat_code_home)
    assert saved.suffix == ".png" and saved.read_bytes() == big
    assert f"saved to {saved}" in out.content and "was not sent" in out.content


# -- the files -----------------------------------------------------------------------------


def test_outputs_older_than_a_week_are_removed_by_the_first_save_of_a_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output_policy, "_swept", False)
    folder = tmp_path / "tool-output"
    folder.mkdir()
    old, recent, later = folder / "old.txt", folder / "recent.txt", folder / "later.txt"
    for path in (old, recent):
        path.write_text("x")
    week_ago = time.time() - 8 * 24 * 3600
    os.utime(old, (week_ago, week_ago))

    first = save_output(b"one", server="s", tool="t", suffix=".txt", directory=folder)
    later.write_text("x")
    os.utime(later, (week_ago, week_ago))
    second = save_output(b"two", server="s", tool="t", suffix=".txt", directory=folder)

    assert not old.exists() and recent.exists()
    assert later.exists()  # once per process: the second save sweeps nothing
    assert first != second and first.read_bytes() == b"one" and second.read_bytes() == b"two"


def test_the_output_folder_is_created_private(tmp_path: Path) -> None:
    folder = tmp_path / "home" / "tool-output"
    path = save_output(b"x", server="s", tool="t", suffix=".txt", directory=folder)
    assert path.parent == folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


# -- through a real server -----------------------------------------------------------------


def output_server(name: str = "out", **fields: object) -> StdioServerConfig:
    return StdioServerConfig(
        name=name, source=Path("test.json"), command=sys.executable,
        args=(str(OUTPUT_SERVER),), startup_timeout_s=20, request_timeout_s=20,
        **fields,  # type: ignore[arg-type]
    )  # fmt: skip


async def test_a_2_mb_result_of_a_real_server_is_short_for_the_model_and_whole_on_disk(
    cat_code_home: Path,
) -> None:
    async with McpPool(McpConfig(servers=[output_server()])) as pool:
        await pool.connect_all()
        tool = pool.find_tool("mcp__out__text")
        assert tool is not None
        result = await tool.execute({"chars": 2_000_000, "width": 100})

    assert not result.is_error
    assert len(result.content) < 11_000
    assert "2,000,000 characters (≈500,000 tokens), 20,000 lines" in result.content
    assert "\nline 1 yyy" in result.content and "yyyEND\n" in result.content
    saved = saved_path(result.content)
    assert saved.parent == output_dir(cat_code_home)  # the working directory's project
    assert saved.name.startswith("out__text-")
    whole = saved.read_text()
    assert len(whole) == 2_000_000 and whole.endswith("END")
    assert whole == result.raw["content"][0]["text"]


async def test_the_entry_s_limit_and_a_tool_s_meta_apply_to_a_real_server(
    cat_code_home: Path,
) -> None:
    config = McpConfig(servers=[output_server(max_output_tokens=50_000)])
    async with McpPool(config) as pool:
        await pool.connect_all()
        text, generous = pool.find_tool("mcp__out__text"), pool.find_tool("mcp__out__generous")
        assert text is not None and generous is not None
        within = await text.execute({"chars": 200_000, "width": 100})
        raised = await generous.execute({"chars": 290_000, "width": 100})
        over = await generous.execute({"chars": 310_000, "width": 100})

    assert len(within.content) == 200_000  # 50,000 tokens: 200,000 characters
    assert len(raised.content) == 290_000  # _meta raised it to 300,000
    assert "the limit is 300,000 characters" in over.content and len(over.content) < 11_000
    assert len(saved_files(cat_code_home)) == 1


def test_any_text_shortens_to_a_preview_with_the_path_and_a_hint() -> None:
    rng = random.Random(11)
    pieces = ["a", "é", "\n", "\r\n", "\n\n", "x" * 500, "y" * 40_000, " ", "\u2028", "🐈"]
    path = Path("/home/u/.cat-code/tool-output/s__t.txt")
    for _ in range(100):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(100, 800)))
        limit = rng.choice([400, 4000, 100_000])
        if len(text) <= limit:
            continue
        short = output_policy.shortened(text, limit, path=path)
        lines = short.split("\n")
        assert str(path) in lines[0] and lines[-1].startswith(("[To read more", "[Its lines"))
        assert len(short) <= min(limit, output_policy.PREVIEW_CHARS) + 1500
