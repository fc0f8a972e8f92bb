"""`cat_code.base.files`: the one atomic write, the one file lock, the one same-file check."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cat_code.base.files import (
    FileLockTimeout,
    FileProblem,
    JsonTooDeep,
    UnreadableFile,
    atomic_write,
    file_lock,
    parse_json,
    read_bounded,
    same_file,
)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_is_written_whole_and_private(tmp_path: Path) -> None:
    path = tmp_path / "new.json"
    atomic_write(path, '{"a": "café"}\n')
    assert path.read_text(encoding="utf-8") == '{"a": "café"}\n'
    assert _mode(path) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["new.json"]  # no temporary left


def test_an_existing_file_keeps_its_mode_unless_one_is_given(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"old")
    path.chmod(0o640)
    atomic_write(path, b"new")
    assert path.read_bytes() == b"new" and _mode(path) == 0o640
    atomic_write(path, b"newer", mode=0o600)
    assert path.read_bytes() == b"newer" and _mode(path) == 0o600


def test_a_symlink_is_written_through_to_its_target(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text("{}")
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    atomic_write(link, "{1}")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "{1}"


def test_a_symlink_is_replaced_when_the_caller_says_not_to_follow_it(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.write_text("theirs")
    link = tmp_path / "credentials.json"
    link.symlink_to(real)
    atomic_write(link, "ours", follow_symlinks=False)
    assert not link.is_symlink() and link.read_text() == "ours"
    assert real.read_text() == "theirs"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_text("old")

    class Boom(Exception):
        pass

    def explode(*_: object) -> None:
        raise Boom

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", explode)
        with pytest.raises(Boom):
            atomic_write(path, b"new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_a_lock_held_by_another_process_is_waited_for_then_given_up(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from cat_code.base.files import file_lock\n"
            "with file_lock(Path(sys.argv[1])):\n"
            "    print('held', flush=True); sys.stdin.read()",
            str(lock),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(FileLockTimeout) as caught, file_lock(lock, timeout=0.05):
            pass
        assert caught.value.lock_path == lock
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
        assert holder.stdout is not None
        holder.stdout.close()
    with file_lock(lock, timeout=5):  # released when its holder let go
        assert _mode(lock) == 0o600


def test_a_lock_serialises_read_modify_write_between_threads(tmp_path: Path) -> None:
    counter = tmp_path / "n"
    atomic_write(counter, "0")

    def bump() -> None:
        for _ in range(20):
            with file_lock(tmp_path / "n.lock"):
                atomic_write(counter, str(int(counter.read_text()) + 1))

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert counter.read_text() == "80"


def test_same_file_sees_links_dotdot_and_files_not_yet_made(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    a.write_text("{}")
    (tmp_path / "link.json").symlink_to(a)
    (tmp_path / "hard.json").hardlink_to(a)
    (tmp_path / "sub").mkdir()
    assert same_file(a, tmp_path / "link.json")
    assert same_file(a, tmp_path / "hard.json")
    assert same_file(tmp_path / "sub" / ".." / "missing", tmp_path / "missing")
    assert not same_file(a, tmp_path / "missing")


def test_json_nested_too_deep_is_refused_not_a_recursion_error() -> None:
    with pytest.raises(JsonTooDeep):
        parse_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(JsonTooDeep):
        parse_json('{"a":' * 101 + "1" + "}" * 101)  # parses, but too deep to walk safely
    assert parse_json('{"a":' * 100 + "1" + "}" * 100) is not None
    with pytest.raises(json.JSONDecodeError):
        parse_json("{")


def test_read_bounded_refuses_a_fifo_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)
    with pytest.raises(UnreadableFile) as caught:
        read_bounded(fifo)  # a blocking open would wait here for good
    assert caught.value.problem is FileProblem.NOT_REGULAR
    assert caught.value.path == fifo and "named pipe" in str(caught.value)


def test_read_bounded_refuses_a_link_to_a_device(tmp_path: Path) -> None:
    link = tmp_path / ".mcp.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(UnreadableFile) as caught:
        read_bounded(link)
    assert caught.value.problem is FileProblem.NOT_REGULAR and "device" in str(caught.value)


def test_read_bounded_refuses_a_file_over_the_cap_or_gives_its_head_when_asked(
    tmp_path: Path,
) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * 100)
    with pytest.raises(UnreadableFile) as caught:
        read_bounded(path, 99)
    assert caught.value.problem is FileProblem.TOO_LARGE
    assert read_bounded(path, 10, cut=True) == b"x" * 10
    assert read_bounded(path, 100) == b"x" * 100


def test_read_bounded_stops_at_the_cap_on_a_file_whose_size_says_zero() -> None:
    assert os.stat("/proc/self/maps").st_size == 0
    with pytest.raises(UnreadableFile) as caught:
        read_bounded(Path("/proc/self/maps"), 16)
    assert caught.value.problem is FileProblem.TOO_LARGE


def test_read_bounded_lets_a_missing_file_raise_as_usual(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "absent.json")
