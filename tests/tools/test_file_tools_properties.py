"""Properties of the file tools over random trees and random calls (issue 24).

Each example builds, in a fresh temporary folder, a cat-code home full of secrets, a
project (the workspace) and a folder outside it, fills the project with a random tree of
files, folders, symlinks (inside, outside, to the home and its files, to ``/proc`` and
``/dev``, dangling), hard links (to the home, outside, inside) and FIFOs, then makes
random calls to read_file, write_file, edit_file, grep and glob as the agent loop does,
under rules that approve everything they may ("always" for every tool, or ``--yes``).
Whatever happens: no call raises, no answer holds a protected file's content, the home
never changes, and nothing outside the workspace changes unless the user was asked (the
asker says yes only to targets inside the temporary folder, so nothing else is touched).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from cat_code.agent.permissions import Answer, Permissions, RuleBook
from cat_code.host.mcp_tools.output_policy import output_dir
from cat_code.host.state.home import private_files
from cat_code.tools.base import Tool
from cat_code.tools.builtin import FileLedger, builtin_tools

SECRET = "tok-SECRET-5150"
HOME_FILES = ("mcp.json", "credentials.json", "AGENTS.md", "sessions/s.jsonl", "jobs/1/log")
NAMES = ("a", "b.txt", "d/c.json", "d/e", ".mcp.json", ".cat-code/settings.json", "f/g/h")
FILE_LINKS = (
    "inside",
    "outside",
    "home:mcp.json",
    "home:credentials.json",
    "home:sessions/s.jsonl",
    "own-output",
    "other-output",
    "/proc/self/environ",
    "/dev/zero",
    "/dev/null",
    "dangling",
)
DIR_LINKS = ("dir-inside", "dir-outside", "home", "home:sessions", "/proc/self/fd", "/dev/fd")
HARD_LINKS = ("home:credentials.json", "home:mcp.json", "outside", "inside", "other-output")
KINDS = st.one_of(
    st.just(("file", "")),
    st.just(("dir", "")),
    st.just(("fifo", "")),
    st.tuples(st.just("link"), st.sampled_from(FILE_LINKS + DIR_LINKS)),
    st.tuples(st.just("hard"), st.sampled_from(HARD_LINKS)),
)
TREES = st.lists(st.tuples(st.sampled_from(NAMES), KINDS), max_size=8)

EXTRA_PATHS = (
    ".",
    "..",
    "../outside/x.txt",
    "../home/mcp.json",
    "d/../../home/credentials.json",
    "/proc/self/environ",
    "/dev/zero",
    "new/deep/file.txt",
    "a\0b",
)
PATHS = st.one_of(st.sampled_from(NAMES), st.sampled_from(EXTRA_PATHS), st.just("@home"))
TEXT = st.sampled_from(["x", "hello\n", SECRET[:3], "", "a\nb\n"])
CALLS = st.one_of(
    st.fixed_dictionaries({"tool": st.just("read_file"), "path": PATHS}),
    st.fixed_dictionaries({"tool": st.just("write_file"), "path": PATHS, "content": TEXT}),
    st.fixed_dictionaries(
        {"tool": st.just("edit_file"), "path": PATHS, "old_string": TEXT, "new_string": TEXT}
    ),
    st.fixed_dictionaries(
        {"tool": st.just("grep"), "pattern": st.sampled_from(["x", "tok", ".", "SEC", "a\0"])},
        optional={"path": PATHS, "output": st.sampled_from(["files", "content", "count"])},
    ),
    st.fixed_dictionaries(
        {"tool": st.just("glob"), "pattern": st.sampled_from(["**/*", "*", "**/*.json", "d/*"])},
        optional={"path": PATHS},
    ),
)


@dataclass
class Places:
    root: Path
    home: Path
    project: Path
    outside: Path
    own_output: Path
    other_output: Path

    def target(self, spec: str) -> Path:
        """What a link or hard link of the random tree points at."""
        if spec.startswith("/"):
            return Path(spec)
        if spec.startswith("home"):
            return self.home.joinpath(*spec.split(":")[1:])
        return {
            "inside": self.project / "b.txt",
            "outside": self.outside / "x.txt",
            "dir-inside": self.project / "d",
            "dir-outside": self.outside,
            "own-output": self.own_output,
            "other-output": self.other_output,
            "dangling": self.root / "nowhere" / "x",
        }[spec]


def build(root: Path, tree: list[tuple[str, tuple[str, str]]]) -> Places:
    home, project, outside = root / "home", root / "project", root / "outside"
    for name in HOME_FILES:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f"{name} {SECRET}\n")
    own = output_dir(home, project=project) / "s__t-1.txt"
    other = output_dir(home, project=outside) / "s__t-2.txt"
    for path, text in ((own, "saved for this project\n"), (other, f"{SECRET}\n")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    outside.mkdir()
    (outside / "x.txt").write_text("outside x\n")
    project.mkdir()
    (project / "d").mkdir()
    (project / "b.txt").write_text("b x\n")
    places = Places(root, home, project, outside, own, other)
    for name, (kind, spec) in tree:
        path = project / name
        if os.path.lexists(path):
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:  # a parent is a file or a link: this entry is skipped
            continue
        if kind == "file":
            path.write_text(f"{name} x\n")
        elif kind == "dir":
            path.mkdir()
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "link":
            path.symlink_to(places.target(spec))
        else:
            os.link(places.target(spec), path)
    return places


def digest(folder: Path) -> str:
    """Every name, link and byte under ``folder`` (links not followed)."""
    hashed = hashlib.sha256()
    for top, dirs, files in sorted(os.walk(folder)):
        dirs.sort()
        for name in sorted(files + dirs):
            path = os.path.join(top, name)
            hashed.update(path.encode())
            if os.path.islink(path):
                hashed.update(os.readlink(path).encode())
            elif os.path.isfile(path):
                with open(path, "rb") as file:
                    hashed.update(file.read())
    return hashed.hexdigest()


@dataclass
class Asker:
    """Says yes only to what stays inside the temporary folder; counts the questions."""

    tools: dict[str, Tool]
    root: Path
    asked: list[str] = field(default_factory=list)

    async def __call__(self, tool: Tool, arguments: dict[str, Any]) -> Answer:
        self.asked.append(tool.name)
        targets = [p.resolve() for p in tool.file_paths(arguments)]
        inside = all(t.is_relative_to(self.root) for t in targets)
        return Answer.YES if inside else Answer.NO


async def play(places: Places, calls: list[dict[str, Any]], approve_all: bool) -> None:
    protected = private_files(
        {"CAT_CODE_HOME": str(places.home)}, readable=(places.own_output.parent,)
    )
    tools = {
        t.name: t for t in builtin_tools(places.project, protected=protected, ledger=FileLedger())
    }
    asker = Asker(tools, places.root)
    rules = RuleBook()
    if not approve_all:  # "always" answered for every tool
        rules.remember("*")
    permissions = Permissions(
        approve_all=approve_all,
        asker=asker,
        rules=rules,
        workspace=lambda: [places.project, places.own_output.parent],
    )
    home_before = digest(places.home)
    for call in calls:
        arguments = {k: v for k, v in call.items() if k != "tool"}
        if arguments.get("path") == "@home":
            arguments["path"] = str(places.home)
        tool = tools[call["tool"]]
        outside_before = digest(places.outside)
        asked_before = len(asker.asked)
        async with asyncio.timeout(30):
            decision = await permissions.authorize(tool, arguments)
            result = await tool.execute(arguments) if decision.allowed else None
        shown = decision.reason + (result.content if result is not None else "")
        assert SECRET not in shown, (call, shown)
        assert digest(places.home) == home_before, call
        if digest(places.outside) != outside_before:
            assert not tool.read_only and len(asker.asked) > asked_before, call


@settings(
    max_examples=100,
    database=None,  # hermetic: nothing kept between runs, nothing written to the repository
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(tree=TREES, calls=st.lists(CALLS, min_size=1, max_size=8), approve_all=st.booleans())
def test_no_file_tool_call_reads_a_protected_file_writes_outside_unasked_or_raises(
    tree: list[tuple[str, tuple[str, str]]], calls: list[dict[str, Any]], approve_all: bool
) -> None:
    root = Path(tempfile.mkdtemp(prefix="cat-code-prop-")).resolve()
    try:
        places = build(root, tree)
        asyncio.run(play(places, calls, approve_all))
    finally:
        shutil.rmtree(root, ignore_errors=True)
