"""The file tools against real files: read_file, write_file, edit_file, grep, glob."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cat_code.tools.base import Tool, ToolResult
from cat_code.tools.builtin import (
    DEFAULT_LINES,
    MAX_GLOB_RESULTS,
    FileLedger,
    Protected,
    builtin_tools,
)

RG = shutil.which("rg")
BACKENDS = ["python", pytest.param("ripgrep", marks=pytest.mark.skipif(RG is None, reason="no rg"))]


def tools(cwd: Path, **options: Any) -> dict[str, Tool]:
    return {t.name: t for t in builtin_tools(cwd, **options)}


async def call(tool: Tool, **arguments: Any) -> ToolResult:
    async with asyncio.timeout(20):
        return await tool.execute(arguments)


# -- read_file -------------------------------------------------------------------------


async def test_read_file_numbers_lines_and_notes_what_remains(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("".join(f"line {n}\n" for n in range(1, 2501)))
    box = tools(tmp_path)
    first = await call(box["read_file"], path="f.txt")
    lines = first.content.splitlines()
    assert lines[0] == "     1\tline 1" and lines[DEFAULT_LINES - 1] == "  2000\tline 2000"
    assert lines[-1] == "[f.txt has 2,500 lines; shown 1–2,000. Read on with offset 2001.]"
    window = await call(box["read_file"], path="f.txt", offset=2499, limit=5)
    assert window.content == "  2499\tline 2499\n  2500\tline 2500"


async def test_read_file_cuts_very_long_lines(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * 5000 + "\nshort\n")
    result = await call(tools(tmp_path)["read_file"], path="min.js")
    first, second = result.content.splitlines()
    assert first.startswith("     1\t" + "x" * 2000 + "… [line cut: 5,000 characters]")
    assert second == "     2\tshort"


@pytest.mark.parametrize("kind", ["directory", "binary", "fifo", "device", "missing"])
async def test_read_file_refuses_what_is_not_a_regular_text_file(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "thing"
    if kind == "directory":
        target.mkdir()
    elif kind == "binary":
        target.write_bytes(b"\x7fELF\0\0\x01")
    elif kind == "fifo":
        os.mkfifo(target)  # nobody ever writes: an open for reading would block for good
    elif kind == "device":
        target = Path("/dev/zero")
    result = await call(tools(tmp_path)["read_file"], path=str(target))
    assert result.is_error
    expected = {
        "directory": "is a directory",
        "binary": "binary file",
        "fifo": "named pipe (FIFO)",
        "device": "is a device",
        "missing": "does not exist",
    }[kind]
    assert expected in result.content


async def test_a_file_bigger_than_the_cap_is_read_only_up_to_it(tmp_path: Path) -> None:
    from cat_code.tools.builtin import MAX_READ_BYTES

    big = tmp_path / "big.log"
    with big.open("wb") as handle:
        handle.truncate(MAX_READ_BYTES * 4)  # sparse: no disk used, NULs inside
    line = b"a log line\n"
    with big.open("r+b") as handle:
        handle.write(line * 1000)
    result = await call(tools(tmp_path)["read_file"], path="big.log", limit=3)
    assert not result.is_error, result.content
    assert result.content.startswith("     1\ta log line\n     2\ta log line\n     3\ta log line")
    assert "can be read" in result.content


# -- edit_file -------------------------------------------------------------------------


async def test_edit_file_replaces_exactly_once_after_a_read(tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    path.write_text("def greet():\n    return 'hello'\n")
    box = tools(tmp_path)
    await call(box["read_file"], path="app.py")
    result = await call(
        box["edit_file"], path="app.py", old_string="'hello'", new_string="'hello, world'"
    )
    assert result.content == "Edited app.py: replaced 1 occurrence."
    assert path.read_text() == "def greet():\n    return 'hello, world'\n"
    again = await call(box["edit_file"], path="app.py", old_string="greet", new_string="hi")
    assert not again.is_error  # its own write counts as read


@pytest.mark.parametrize(
    ("case", "arguments", "expected"),
    [
        ("not read", {"old_string": "a", "new_string": "b"}, "has not been read"),
        ("missing", {"old_string": "zzz", "new_string": "b"}, "was not found"),
        ("twice", {"old_string": "same", "new_string": "b"}, "occurs 2 times"),
        ("no-op", {"old_string": "same", "new_string": "same"}, "are the same"),
        ("empty", {"old_string": "", "new_string": "b"}, "old_string is empty"),
        ("changed", {"old_string": "a", "new_string": "b"}, "has changed on disk"),
        ("encoding", {"old_string": "caf\xe9", "new_string": "猫"}, "cannot store"),
    ],
)
async def test_every_refused_edit_leaves_the_file_byte_identical(
    tmp_path: Path, case: str, arguments: dict[str, Any], expected: str
) -> None:
    path = tmp_path / "f.txt"
    original = "a same\r\nsame caf\xe9\r\n".encode("latin-1")
    path.write_bytes(original)
    box = tools(tmp_path)
    if case != "not read":
        await call(box["read_file"], path="f.txt")
    if case == "changed":
        original = original + b"user edit\r\n"
        path.write_bytes(original)
    result = await call(box["edit_file"], path="f.txt", **arguments)
    assert result.is_error and expected in result.content, result.content
    assert path.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]  # no temporary file left


async def test_edit_file_keeps_crlf_encoding_bom_and_mode(tmp_path: Path) -> None:
    crlf = tmp_path / "win.txt"
    crlf.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    crlf.chmod(0o750)
    utf16 = tmp_path / "u16.txt"
    utf16.write_bytes("\ufeffalpha\nbeta\n".encode("utf-16-le"))
    box = tools(tmp_path)
    for name in ("win.txt", "u16.txt"):
        await call(box["read_file"], path=name)
    edit = await call(box["edit_file"], path="win.txt", old_string="one\ntwo", new_string="1\n2")
    assert not edit.is_error, edit.content
    assert crlf.read_bytes() == b"1\r\n2\r\nthree\r\n"
    assert stat.S_IMODE(crlf.stat().st_mode) == 0o750
    await call(box["edit_file"], path="u16.txt", old_string="beta", new_string="gamma")
    assert utf16.read_bytes() == "\ufeffalpha\ngamma\n".encode("utf-16-le")


async def test_replace_all_replaces_every_occurrence(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("x = old\ny = old\n")
    box = tools(tmp_path)
    await call(box["read_file"], path="f.txt")
    result = await call(
        box["edit_file"], path="f.txt", old_string="old", new_string="new", replace_all=True
    )
    assert result.content == "Edited f.txt: replaced 2 occurrences."
    assert path.read_text() == "x = new\ny = new\n"


async def test_edit_file_writes_through_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("before\n")
    (tmp_path / "link.txt").symlink_to(target)
    box = tools(tmp_path)
    await call(box["read_file"], path="link.txt")
    await call(box["edit_file"], path="link.txt", old_string="before", new_string="after")
    assert (tmp_path / "link.txt").is_symlink() and target.read_text() == "after\n"


# -- write_file ------------------------------------------------------------------------


async def test_write_file_creates_folders_and_replaces_only_a_file_it_read(tmp_path: Path) -> None:
    box = tools(tmp_path)
    created = await call(box["write_file"], path="a/b/new.txt", content="hi\nthere\n")
    assert created.content == "Created a/b/new.txt (2 lines)."
    assert (tmp_path / "a/b/new.txt").read_text() == "hi\nthere\n"
    existing = tmp_path / "old.sh"
    existing.write_text("echo old\n")
    existing.chmod(0o755)
    refused = await call(box["write_file"], path="old.sh", content="echo new\n")
    assert refused.is_error and "has not been read" in refused.content
    assert existing.read_text() == "echo old\n"
    await call(box["read_file"], path="old.sh")
    await call(box["write_file"], path="old.sh", content="echo new\n")
    assert existing.read_text() == "echo new\n" and existing.stat().st_mode & 0o777 == 0o755


async def test_a_new_conversation_must_read_files_again(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\n")
    ledger = FileLedger()
    box = tools(tmp_path, ledger=ledger)
    await call(box["read_file"], path="f.txt")
    ledger.forget_all()
    result = await call(box["edit_file"], path="f.txt", old_string="a", new_string="b")
    assert result.is_error and "has not been read" in result.content


# -- protected paths -------------------------------------------------------------------


async def test_no_tool_reads_lists_or_writes_a_protected_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    secret = home / "credentials.json"
    secret.write_text('{"token": "tok-SECRET"}\n')
    (home / "credentials.json.lock").write_text("")
    (tmp_path / "alias.json").symlink_to(secret)
    protected = Protected(patterns=((home, "credentials.json*"),))
    box = tools(tmp_path, protected=protected, ripgrep=None)
    for path in (str(secret), "alias.json", "home/credentials.json.lock"):
        read = await call(box["read_file"], path=path)
        assert read.is_error and "private" in read.content
        write = await call(box["write_file"], path=path, content="x")
        assert write.is_error and "private" in write.content
    found = await call(box["grep"], pattern="SECRET")
    assert "No matches" in found.content
    listed = await call(box["glob"], pattern="**/*.json")
    assert "credentials" not in listed.content
    assert secret.read_text() == '{"token": "tok-SECRET"}\n'


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_hard_link_to_a_protected_file_is_protected_too(
    tmp_path: Path, backend: str
) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    secret = home / "credentials.json"
    secret.write_text('{"token": "tok-SECRET"}\n')
    os.link(secret, project / "hard.json")
    (project / "plain.json").write_text('{"note": "SECRET is a word"}\n')
    protected = Protected(patterns=((home, "credentials.json*"),))
    box = tools(project, protected=protected, ripgrep=RG if backend == "ripgrep" else None)
    read = await call(box["read_file"], path="hard.json")
    assert read.is_error and "private" in read.content and "tok-" not in read.content
    write = await call(box["write_file"], path="hard.json", content="x")
    assert write.is_error and "private" in write.content
    edit = await call(box["edit_file"], path="hard.json", old_string="tok", new_string="x")
    assert edit.is_error and "private" in edit.content
    found = await call(box["grep"], pattern="SECRET", output="content")
    assert found.content == 'plain.json:1:{"note": "SECRET is a word"}'
    named = await call(box["grep"], pattern="SECRET", path="hard.json")
    assert named.is_error and "private" in named.content
    listed = await call(box["glob"], pattern="**/*.json")
    assert listed.content == "plain.json"
    assert secret.read_text() == '{"token": "tok-SECRET"}\n'


# -- grep and glob -----------------------------------------------------------------------


def make_tree(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("needle in git\n")
    (root / ".gitignore").write_text("build/\n*.log\n!keep.log\n")
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("import os\nneedle = 1\nprint(needle)\n")
    (root / "src" / "b.txt").write_text("no match here\nNEEDLE upper\n")
    (root / "src" / ".gitignore").write_text("secret.py\n")
    (root / "src" / "secret.py").write_text("needle hidden by nested gitignore\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("needle in build\n")
    (root / "build" / ".gitignore").write_text("skip.py\n")
    (root / "build" / "skip.py").write_text("needle hidden by build's own gitignore\n")
    (root / "build" / "x.log").write_text("needle in a log the root gitignore hides\n")
    (root / "build" / "sub").mkdir()
    (root / "build" / "sub" / "deep.py").write_text("needle deep in build\n")
    (root / "debug.log").write_text("needle in log\n")
    (root / "keep.log").write_text("needle kept\n")
    (root / ".hidden.py").write_text("needle hidden file\n")
    os.mkfifo(root / "pipe")  # a walk must never open it


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_honours_gitignore_and_prints_each_output_shape(
    tmp_path: Path, backend: str
) -> None:
    make_tree(tmp_path)
    grep = tools(tmp_path, ripgrep=RG if backend == "ripgrep" else None)["grep"]
    files = await call(grep, pattern="needle")
    assert files.content.splitlines() == [".hidden.py", "keep.log", "src/a.py"]
    content = await call(grep, pattern="needle", output="content", path="src")
    assert content.content.splitlines() == ["src/a.py:2:needle = 1", "src/a.py:3:print(needle)"]
    count = await call(grep, pattern="needle", output="count", ignore_case=True)
    assert count.content.splitlines() == [".hidden.py:1", "keep.log:1", "src/a.py:2", "src/b.txt:1"]
    context = await call(grep, pattern="^needle", output="content", context=1, glob="*.py")
    assert context.content.splitlines() == [
        ".hidden.py:1:needle hidden file",
        "--",
        "src/a.py-1-import os",
        "src/a.py:2:needle = 1",
        "src/a.py-3-print(needle)",
    ]
    one = await call(grep, pattern="upper", path="src/b.txt", output="content")
    assert one.content == "src/b.txt:2:NEEDLE upper"
    none = await call(grep, pattern="nowhere")
    assert none.content == "No matches for 'nowhere' in .."


async def test_both_grep_backends_give_the_same_answer(tmp_path: Path) -> None:
    if RG is None:
        pytest.skip("ripgrep is not installed")
    make_tree(tmp_path)
    fast = tools(tmp_path, ripgrep=RG)["grep"]
    slow = tools(tmp_path, ripgrep=None)["grep"]
    for arguments in (
        {"pattern": "e", "output": "content", "context": 2},
        {"pattern": "NEEDLE", "ignore_case": True, "output": "count"},
        {"pattern": "needle", "glob": "src/**"},
        # Paths .gitignore ignores, named explicitly: searched, as ripgrep searches them.
        {"pattern": "needle", "path": "build", "output": "content"},
        {"pattern": "needle", "path": "build/sub", "output": "content"},
        {"pattern": "needle", "path": "debug.log", "output": "content"},
        {"pattern": "needle", "path": "build/skip.py", "output": "content"},
    ):
        assert (await call(fast, **arguments)).content == (await call(slow, **arguments)).content


async def test_both_grep_backends_agree_on_a_gitignore_that_lists_what_to_keep(
    tmp_path: Path,
) -> None:
    if RG is None:
        pytest.skip("ripgrep is not installed")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*\n!*/\n!*.py\n")  # only .py files, at any depth
    for name in ("a.py", "a.md", "src/b.py", "src/deep/c.py", "src/deep/d.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("needle\n")
    fast = tools(tmp_path, ripgrep=RG)["grep"]
    slow = tools(tmp_path, ripgrep=None)["grep"]
    for path in (".", "src"):
        expected = await call(fast, pattern="needle", path=path)
        assert (await call(slow, pattern="needle", path=path)).content == expected.content
    assert expected.content.splitlines() == ["src/b.py", "src/deep/c.py"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_grep_searches_a_path_it_is_given_even_when_gitignore_ignores_it(
    tmp_path: Path, backend: str
) -> None:
    make_tree(tmp_path)
    grep = tools(tmp_path, ripgrep=RG if backend == "ripgrep" else None)["grep"]
    folder = await call(grep, pattern="needle", path="build", output="content")
    # Inside it the other rules still hold: build/.gitignore's skip.py, the root's *.log.
    assert folder.content.splitlines() == [
        "build/out.py:1:needle in build",
        "build/sub/deep.py:1:needle deep in build",
    ]
    below = await call(grep, pattern="needle", path="build/sub")
    assert below.content == "build/sub/deep.py"
    one = await call(grep, pattern="needle", path="debug.log", output="content")
    assert one.content == "debug.log:1:needle in log"
    nested = await call(grep, pattern="needle", path="build/skip.py")
    assert nested.content == "build/skip.py"


async def test_glob_lists_a_folder_it_is_given_even_when_gitignore_ignores_it(
    tmp_path: Path,
) -> None:
    make_tree(tmp_path)
    found = await call(tools(tmp_path)["glob"], pattern="**/*", path="build")
    expected = ["build/.gitignore", "build/out.py", "build/sub/deep.py"]
    assert sorted(found.content.splitlines()) == expected
    if RG is not None:  # the files ripgrep would search there
        listed = subprocess.run(
            [RG, "--files", "--no-config", "--hidden", "--glob", "!.git", "--no-require-git",
             "--no-ignore-dot", "--no-ignore-global", "build"],
            cwd=tmp_path, capture_output=True, text=True, timeout=30, check=True,
        )  # fmt: skip
        assert sorted(listed.stdout.splitlines()) == expected


async def test_grep_caps_its_answer_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("hit\n" * 1000)
    result = await call(tools(tmp_path)["grep"], pattern="hit", output="content")
    lines = result.content.splitlines()
    assert lines[0] == "many.txt:1:hit"
    assert lines[-1].startswith("[Showing 300 of 1,000 lines from 1 files")


async def test_grep_refuses_a_fifo_named_as_its_path(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    result = await call(tools(tmp_path)["grep"], pattern="x", path="pipe")
    assert result.is_error and "FIFO" in result.content


async def test_glob_lists_matches_newest_first_honouring_gitignore(tmp_path: Path) -> None:
    make_tree(tmp_path)
    for age, name in enumerate(["src/a.py", ".hidden.py"]):
        os.utime(tmp_path / name, (1_000_000 + age, 1_000_000 + age))
    glob = tools(tmp_path)["glob"]
    found = await call(glob, pattern="**/*.py")
    assert found.content.splitlines() == [".hidden.py", "src/a.py"]
    top = await call(glob, pattern="*.log")
    assert top.content.splitlines() == ["keep.log"]
    braces = await call(glob, pattern="src/*.{py,txt}")
    assert sorted(braces.content.splitlines()) == ["src/a.py", "src/b.txt"]


async def test_glob_caps_its_list(tmp_path: Path) -> None:
    for n in range(MAX_GLOB_RESULTS + 5):
        (tmp_path / f"f{n}.txt").write_text("")
    result = await call(tools(tmp_path)["glob"], pattern="*.txt")
    lines = result.content.splitlines()
    assert len(lines) == MAX_GLOB_RESULTS + 1
    assert lines[-1].startswith("[5 more files match")


def test_a_file_read_stuck_in_the_kernel_never_keeps_the_process_from_exiting(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # a blocking open of it never returns: nobody writes
    script = f"""
import asyncio
from cat_code.tools.builtin._fs import in_thread

async def main():
    stuck = in_thread(lambda: open({str(fifo)!r}).read())
    try:
        await asyncio.wait_for(stuck, 0.2)
    except TimeoutError:
        print("gave up", flush=True)

asyncio.run(main())
"""
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=30
    )
    assert child.returncode == 0 and child.stdout == "gave up\n", child.stderr


@pytest.mark.parametrize("backend", BACKENDS)
async def test_finding_3_a_gitignore_linked_to_dev_zero_is_skipped_with_one_warning(
    tmp_path: Path, backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / "top.py").write_text("needle\n")
    (tmp_path / "top.log").write_text("needle\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".gitignore").symlink_to("/dev/zero")  # read whole, this filled memory
    (sub / "a.py").write_text("needle\n")
    os.mkfifo(sub / "pipe")
    other = tmp_path / "other"
    other.mkdir()
    os.mkfifo(other / ".gitignore")  # a blocking open would wait here for a writer
    (other / "b.py").write_text("needle\n")
    found = tools(tmp_path, ripgrep=RG if backend == "ripgrep" else None)
    with caplog.at_level(logging.WARNING):
        grep = await call(found["grep"], pattern="needle")
        glob = await call(found["glob"], pattern="**/*.py")
        again = await call(found["grep"], pattern="needle")
    assert grep.is_error is False and again.content == grep.content
    assert grep.content.splitlines() == ["other/b.py", "sub/a.py", "top.py"]
    assert sorted(glob.content.splitlines()) == ["other/b.py", "sub/a.py", "top.py"]
    warned = [r.getMessage() for r in caplog.records if ".gitignore" in r.getMessage()]
    assert len([w for w in warned if str(sub / ".gitignore") in w]) == 1
    assert len([w for w in warned if str(other / ".gitignore") in w]) == 1
