"""Walking a folder as ripgrep does: ``.gitignore`` honoured, ``.git`` skipped, sorted by name.

`walk` yields the regular files under a folder, depth first, each folder's entries in
byte order of their names (ripgrep's ``--sort path``), so the built-in grep lists files
in the order ripgrep would. It honours every ``.gitignore`` from the folder's ancestors
(up to the git root) down, and the repository's ``.git/info/exclude``, with git's rules
(`pathspec`): a deeper file's verdict wins, a negation re-includes, an ignored folder is
not entered. As in ripgrep, the folder walked is searched even when ignored (the user
named it), and each path below it is judged by the patterns that match that path, not
by one that matches only the folder walked or one above it: ``build/`` hides ``build``
in a walk of the project but not ``build/out.py`` in a walk of ``build``, while ``*.log``
still hides ``build/x.log``. (ripgrep 13 also skips an anchored pattern of a parent's
``.gitignore``, like ``/build/gen/``, when it walks a subfolder, its issue 1757; the walk
applies it, as git does.) Hidden files are included, symlinks are not followed, special
files (FIFOs, devices) and `Protected` paths are never yielded. It stops after
`MAX_WALK_FILES`. An ignore file that is not a regular file or is over `MAX_IGNORE_BYTES`
is skipped with one warning naming it (the walk goes on as if it were absent);
`ignore_files_usable` says whether a tree has such a file (ripgrep cannot skip one). An
ignore pattern with more than `MAX_IGNORE_WILDCARDS` runs of ``*`` is skipped (matched by
backtracking, it could stall every walk), and so is a line pathspec cannot parse (``[z-a]``,
a trailing backslash): one warning per file and kind, per process.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from cat_code.tools.builtin._fs import FileToolError, ProtectedCheck, read_regular

#: Files a walk looks at before it stops (a home folder is not a project).
MAX_WALK_FILES = 200_000
#: Runs of ``*`` an ignore pattern may have (3 cost ~25 ms on a 255-character name, 4 ~2 s).
MAX_IGNORE_WILDCARDS = 3
_WILDCARD_RUN = re.compile(r"(?<!\\)\*+")
IGNORE_FILE = ".gitignore"
#: The largest ignore file honoured: real ones are a few kilobytes; a link to /dev/zero or
#: a runaway file is skipped with a warning, never read into memory.
MAX_IGNORE_BYTES = 1024 * 1024

logger = logging.getLogger(__name__)
#: Ignore files already warned about: one warning per file, not one per walk.
_warned: set[Path] = set()
_warned_lock = threading.Lock()
#: (ignore file, what was wrong in it) already warned about: skipped patterns.
_warned_about: set[tuple[Path, str]] = set()


def _refuse(path: Path, why: str, bad: list[Path] | None) -> None:
    if bad is not None:
        bad.append(path)
    with _warned_lock:
        if path in _warned:
            return
        _warned.add(path)
    logger.warning("ignore file %s not used: %s", path, why)


#: The group pathspec's pattern regexes give the ``/`` after a folder the pattern matched:
#: ``build/`` matches ``build/x.py`` through its folder ``build``.
_DIR_MARK = "(?P<ps_d>/)"


@dataclass(frozen=True, slots=True)
class _Rules:
    """One ignore file: its folder, and each pattern as (regex, whether it ignores), in
    order. A regex matches a path only by the path itself (see `_own_path_regex`)."""

    base: Path
    patterns: tuple[tuple[re.Pattern[str], bool], ...]


def _own_path_regex(regex: re.Pattern[str]) -> re.Pattern[str]:
    """pathspec's ``regex`` of a pattern, made to match a path by the path itself: where it
    matched through a folder above (its dir mark followed by more of the path), the mark
    must now end the path. ripgrep judges paths so, and a walk never enters an ignored
    folder, so what this leaves out only ever named the folder walked or one above it."""
    return re.compile(regex.pattern.replace(_DIR_MARK, _DIR_MARK + r"\Z"), regex.flags)


def _load(folder: Path, name: str = IGNORE_FILE, bad: list[Path] | None = None) -> _Rules | None:
    """``folder``'s ignore file ``name``, or None when it has none, none usable (then it is
    added to ``bad`` and warned about, once per process)."""
    path = folder / name
    try:
        os.stat(path)
    except OSError:
        return None  # the usual case: no ignore file here
    try:
        data = read_regular(path, str(path), MAX_IGNORE_BYTES).data
    except FileToolError as exc:
        _refuse(path, str(exc).removeprefix("Error: "), bad)
        return None
    if len(data) >= MAX_IGNORE_BYTES:
        _refuse(path, f"{path} is over {MAX_IGNORE_BYTES:,} bytes", bad)
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    lines = _without_runaway_patterns(lines, path)
    patterns = []
    for pattern in _parsed(lines, path):
        regex = getattr(pattern, "regex", None)
        if pattern.include is not None and isinstance(regex, re.Pattern):
            patterns.append((_own_path_regex(regex), pattern.include))
    return _Rules(folder, tuple(patterns)) if patterns else None


def _without_runaway_patterns(lines: list[str], source: Path) -> list[str]:
    """``lines`` less the patterns with more than `MAX_IGNORE_WILDCARDS` runs of ``*``:
    pathspec matches by backtracking regexes, where each run multiplies the work on a long
    name (a repository's ``*a*a*a*a*a*a*b`` took 109 s on one 90-character name). Such a
    pattern is skipped, with a warning: the search then shows what it would have hidden."""
    kept = [line for line in lines if len(_WILDCARD_RUN.findall(line)) <= MAX_IGNORE_WILDCARDS]
    if len(kept) < len(lines) and _first_time(source, "wildcards"):
        logger.warning(
            "%s: %d pattern(s) with more than %d wildcards skipped (too slow to match)",
            source, len(lines) - len(kept), MAX_IGNORE_WILDCARDS,
        )  # fmt: skip
    return kept


def _parsed(lines: list[str], source: Path) -> list[pathspec.Pattern]:
    """The patterns of ``lines``, each parsed on its own: one git rejects or pathspec cannot
    compile (``[z-a]``, a trailing backslash) is skipped with one warning per file, and the
    others still apply (git ignores such a line too)."""
    patterns: list[pathspec.Pattern] = []
    bad = []
    for line in lines:
        try:
            patterns.extend(pathspec.GitIgnoreSpec.from_lines([line]).patterns)
        except (re.error, ValueError):
            bad.append(line)
    if bad and _first_time(source, "bad lines"):
        logger.warning(
            "%s: %d pattern(s) skipped, not valid (first: %r)", source, len(bad), bad[0][:80]
        )
    return patterns


def _first_time(source: Path, what: str) -> bool:
    """Whether ``what`` is yet to be warned about for ``source`` in this process (walks
    run again and again: one warning, not one per walk)."""
    with _warned_lock:
        if (source, what) in _warned_about:
            return False
        _warned_about.add((source, what))
        return True


def git_root(folder: Path) -> Path | None:
    """The nearest folder at or above ``folder`` that holds ``.git``."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def _inherited(root: Path, bad: list[Path] | None = None) -> list[_Rules]:
    """The ignore rules of ``root``'s ancestors (up to the git root), shallowest first."""
    top = git_root(root)
    chain = [root, *root.parents]
    if top is not None:
        chain = chain[: chain.index(top) + 1]
    rules = []
    if top is not None:
        exclude = top / ".git" / "info"
        found = _load(exclude, "exclude", bad)
        if found is not None:
            rules.append(_Rules(top, found.patterns))
    for folder in reversed(chain[1:]):
        found = _load(folder, bad=bad)
        if found is not None:
            rules.append(found)
    return rules


def _ignored(rules: list[_Rules], path: Path, is_dir: bool) -> bool:
    verdict: bool | None = None
    for rule in rules:
        relative = path.relative_to(rule.base).as_posix() + ("/" if is_dir else "")
        for regex, ignores in rule.patterns:  # the last that matches decides, as in git
            if regex.search(relative):
                verdict = ignores
    return bool(verdict)


@dataclass(slots=True)
class WalkStats:
    """What a walk left out because it stopped early."""

    truncated: bool = False


def walk(
    root: Path,
    *,
    guard: ProtectedCheck,
    stats: WalkStats | None = None,
    stop: threading.Event | None = None,
) -> Iterator[Path]:
    """The regular files under ``root`` (see the module docstring)."""
    stats = stats or WalkStats()
    seen = 0

    def visit(folder: Path, rules: list[_Rules]) -> Iterator[Path]:
        nonlocal seen
        own = _load(folder)
        if own is not None:
            rules = [*rules, own]
        try:
            with os.scandir(folder) as entries:
                listed = sorted(entries, key=lambda e: os.fsencode(e.name))
        except OSError:
            return
        for entry in listed:
            if stop is not None and stop.is_set():
                return
            if seen >= MAX_WALK_FILES:
                stats.truncated = True
                return
            path = Path(entry.path)
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                if entry.name == ".git" or _ignored(rules, path, True):
                    continue
                if guard.covers(path, info):
                    continue
                yield from visit(path, rules)
            elif stat.S_ISREG(info.st_mode):
                seen += 1
                if _ignored(rules, path, False) or guard.covers(path, info):
                    continue
                yield path

    yield from visit(root, _inherited(root))


def ignore_files_usable(root: Path) -> bool:
    """Whether every ignore file a walk of ``root`` (a folder or a file) honours is usable.

    ripgrep reads ignore files itself, blocking for good on a FIFO and reading a link to
    ``/dev/zero`` until memory runs out; grep asks this first and searches in Python, which
    skips such a file with its one warning, when the answer is no. Folders only are listed
    (no file is stated), pruned by the rules as the walk prunes them.
    """
    bad: list[Path] = []
    pending = [(root, _inherited(root, bad))]
    if bad or not root.is_dir():
        return not bad
    listed = 0
    while pending and listed < MAX_WALK_FILES:
        folder, rules = pending.pop()
        own = _load(folder, bad=bad)
        if bad:
            return False
        if own is not None:
            rules = [*rules, own]
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    listed += 1
                    if entry.name == ".git" or not entry.is_dir(follow_symlinks=False):
                        continue
                    path = Path(entry.path)
                    if not _ignored(rules, path, True):
                        pending.append((path, rules))
        except OSError:
            continue
    return True
