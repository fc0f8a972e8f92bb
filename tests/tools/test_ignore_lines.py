"""Red-team finding 5 (review of issue 24): one bad ``.gitignore`` line — a range git
rejects (``[z-a]``), a trailing backslash — is skipped with one warning per file per
process; the rest of the file still applies, and grep and glob work."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from cat_code.tools.builtin import FileLedger, builtin_tools


@pytest.mark.parametrize("bad", ["[z-a]", "trailing\\"])
async def test_finding_5_a_bad_gitignore_line_is_skipped_with_one_warning_and_the_rest_applies(
    tmp_path: Path, bad: str, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".gitignore").write_text(f"{bad}\nhidden.txt\n")
    (sub / "hidden.txt").write_text("needle\n")
    (tmp_path / "a.txt").write_text("needle\n")
    tools = {t.name: t for t in builtin_tools(tmp_path, ledger=FileLedger(), ripgrep=None)}
    caplog.set_level(logging.WARNING)
    async with asyncio.timeout(20):
        for _ in range(2):  # a second walk warns no more
            found = await tools["grep"].execute({"pattern": "needle"})
            listed = await tools["glob"].execute({"pattern": "**/*.txt"})
            assert not found.is_error and not listed.is_error, found.content + listed.content
            assert "a.txt" in found.content and "hidden.txt" not in found.content
            assert "a.txt" in listed.content and "hidden.txt" not in listed.content
    warnings = [r.getMessage() for r in caplog.records if "not valid" in r.getMessage()]
    assert len(warnings) == 1 and str(sub / ".gitignore") in warnings[0]


async def test_finding_5_the_too_many_wildcards_warning_is_given_once_per_process(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*a*a*a*a*b\n")
    (tmp_path / "a.txt").write_text("x\n")
    glob = {t.name: t for t in builtin_tools(tmp_path, ledger=FileLedger(), ripgrep=None)}["glob"]
    caplog.set_level(logging.WARNING)
    async with asyncio.timeout(20):
        for _ in range(3):
            assert not (await glob.execute({"pattern": "*.txt"})).is_error
    assert len([r for r in caplog.records if "wildcards skipped" in r.getMessage()]) == 1
