"""`FileEofMemory`: which servers ignore stdin EOF, kept as digests in eof.json."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from cat_code.host.state.eof_memory import EOF_FILE, FileEofMemory, command_digest


def test_a_verdict_is_kept_across_memories_as_a_digest_never_as_the_words(
    cat_code_home: Path,
) -> None:
    command = ["node", "server.js", "--token", "tok-SECRET"]
    FileEofMemory().remember(command, "/work", ignores=True)

    assert FileEofMemory().ignores_eof(command, "/work")
    assert not FileEofMemory().ignores_eof(command, "/elsewhere")
    assert not FileEofMemory().ignores_eof(["node", "other.js"], "/work")
    path = cat_code_home / EOF_FILE
    assert "SECRET" not in path.read_text() and "node" not in path.read_text()
    assert json.loads(path.read_text())["ignoresEof"] == [command_digest(command, "/work")]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_server_that_learned_to_exit_on_eof_is_forgotten(cat_code_home: Path) -> None:
    memory = FileEofMemory()
    memory.remember(["srv"], None, ignores=True)
    memory.remember(["srv"], None, ignores=False)
    assert not memory.ignores_eof(["srv"], None)


def test_an_unreadable_file_counts_as_knowing_nothing(cat_code_home: Path) -> None:
    (cat_code_home / EOF_FILE).write_text("{not json")
    memory = FileEofMemory()
    assert not memory.ignores_eof(["srv"], None)
    memory.remember(["srv"], None, ignores=True)  # and it is replaced, not kept broken
    assert memory.ignores_eof(["srv"], None)
