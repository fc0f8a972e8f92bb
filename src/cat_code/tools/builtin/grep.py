"""The built-in `grep` tool: regex search over files, by ripgrep when it is on PATH.

Two backends, one output. `_ripgrep` runs ``rg --json`` with the flags that make it walk
as `_walk.walk` does (hidden files in, ``.git`` out, ``.gitignore`` honoured inside or
outside a git repository, no ``.ignore``/global ignore files, sorted by path, files over
`MAX_FILE_BYTES` skipped); `_search` is the same search in Python. Both hand back the
matching lines per file, which `_format` turns into the answer:

- ``files`` (default): one path per line;
- ``content``: ``path:line:text`` per matching line, ``path-line-text`` per context
  line, ``--`` between groups that do not touch (as grep and ripgrep print them);
- ``count``: ``path:N``, N the number of matching lines.

Paths are relative to the working directory when inside it. Protected files never show.
The answer is capped (files, lines, characters) with a note saying what was left out;
so is the work behind it: ``context`` is at most `MAX_CONTEXT` lines, the Python search
stops after keeping `MAX_KEPT_LINES` lines, a ripgrep whose output grows past
`MAX_RG_OUTPUT_BYTES` is stopped, the Python search matches for at most `SEARCH_SECONDS` per
call (the `regex` module's ``timeout=``: ``re`` cannot stop a catastrophic backtrack).
The ``glob`` filter is matched in linear time
(`_glob_match`); a bad glob or regex is a tool error.
A tree holding an ignore file ripgrep cannot read safely (a FIFO, a link to ``/dev/zero``:
`_walk.ignore_files_usable`) is searched in Python, which skips that file with a warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex

import asyncio
import base64
import contextlib
import json
import logging
import re
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from cat_code.tools.base import ToolResult
from cat_code.tools.builtin._fs import (
    MAX_OUTPUT_CHARS,
    FileTool,
    FileToolError,
    ProtectedCheck,
    absolute,
    in_thread,
    is_binary,
    read_regular,
    shown,
)
from cat_code.tools.builtin._glob_match import GlobError, git_glob_filter
from cat_code.tools.builtin._walk import WalkStats, ignore_files_usable, walk

logger = logging.getLogger(__name__)

#: Files listed (files, count) and lines shown (content) before the answer is cut.
MAX_FILES = 200
MAX_LINES = 300
#: A matching line longer than this is cut in the answer.
MAX_LINE_CHARS = 500
#: Larger files are not searched (both backends): generated data, not code.
MAX_FILE_BYTES = 10 * 1024 * 1024
#: Lines of context around a match, at most: more is a search of whole files, not a grep.
MAX_CONTEXT = 100
#: Lines (matches and context) the Python search keeps before it stops: the answer shows
#: `MAX_LINES`, counts need no more than this to be worth reading.
MAX_KEPT_LINES = 100_000
#: ripgrep's output read before it is stopped: enough for every cap above many times over.
MAX_RG_OUTPUT_BYTES = 32 * 1024 * 1024
#: The longest the Python search may spend matching, for the whole call: a pattern that
#: backtracks catastrophically (``(a|a)+$``) is stopped, not left to run for ever.
SEARCH_SECONDS = 20.0
#: The longest a ripgrep run may take.
RG_TIMEOUT_S = 60.0


class Output(Enum):
    FILES = "files"
    CONTENT = "content"
    COUNT = "count"


@dataclass(slots=True)
class FileHits:
    """One file's matching lines (and, for content, the context lines around them)."""

    path: Path
    #: (line number, text, is a match), in line order.
    lines: list[tuple[int, str, bool]] = field(default_factory=list)

    @property
    def matches(self) -> int:
        return sum(1 for _, _, hit in self.lines if hit)


@dataclass(frozen=True, slots=True)
class Query:
    pattern: str
    root: Path
    single_file: bool
    glob: str | None
    ignore_case: bool
    output: Output
    context: int


class GrepTool(FileTool):
    """Search file contents with a regular expression."""

    name = "grep"
    description = (
        "Search file contents with a regular expression (ripgrep syntax). Searches the "
        "working directory, or path (a folder or one file); files ignored by .gitignore are "
        "left out. glob filters files (e.g. '*.py', 'src/**/*.ts'). output: 'files' (default: "
        "paths of matching files), 'content' (matching lines as path:line:text; context adds "
        "N lines around each), 'count' (path:number of matching lines). ignore_case for a "
        "case-insensitive search. Use this rather than grep or rg in the shell."
    )
    input_schema: dict[str, Any] = {  # noqa: RUF012 - class-level schema is read-only by convention
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for"},
            "path": {"type": "string", "description": "Folder or file to search (default: .)"},
            "glob": {"type": "string", "description": "Only files matching this glob"},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive search"},
            "output": {
                "type": "string",
                "enum": [o.value for o in Output],
                "description": "files (default), content or count",
            },
            "context": {
                "type": "integer",
                "minimum": 0,
                "description": "Lines of context around each match (content output)",
            },
        },
        "required": ["pattern"],
    }
    read_only = True

    def __init__(self, *args: Any, ripgrep: str | bool | None = True, **kwargs: Any) -> None:
        """``ripgrep``: True finds ``rg`` on PATH; a path uses that one; False or None
        always searches in Python."""
        super().__init__(*args, **kwargs)
        self.ripgrep = shutil.which("rg") if ripgrep is True else (ripgrep or None)
        #: The Python search's matching time for one call (`SEARCH_SECONDS`).
        self.search_seconds = SEARCH_SECONDS

    def _query(self, arguments: dict[str, Any], guard: ProtectedCheck) -> Query:
        pattern = arguments.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise FileToolError("Error: 'pattern' must be a non-empty string")
        raw = arguments.get("path")
        if raw is not None and (not isinstance(raw, str) or not raw.strip()):
            raise FileToolError("Error: 'path' must be a non-empty string when given")
        glob = arguments.get("glob")
        if glob is not None and (not isinstance(glob, str) or not glob.strip()):
            raise FileToolError("Error: 'glob' must be a non-empty string when given")
        ignore_case = arguments.get("ignore_case", False)
        if not isinstance(ignore_case, bool):
            raise FileToolError("Error: 'ignore_case' must be true or false")
        try:
            output = Output(arguments.get("output") or "files")
        except ValueError:
            raise FileToolError("Error: 'output' must be 'files', 'content' or 'count'") from None
        context = arguments.get("context") or 0
        if isinstance(context, bool) or not isinstance(context, int) or context < 0:
            raise FileToolError("Error: 'context' must be an integer ≥ 0")
        if context > MAX_CONTEXT:
            raise FileToolError(
                f"Error: 'context' is at most {MAX_CONTEXT} lines; read_file shows more"
            )
        if glob is not None:
            try:
                git_glob_filter(glob)
            except GlobError as exc:
                raise FileToolError(f"Error: {exc}") from None
        try:
            re.compile(pattern)
        except re.error as exc:
            if self.ripgrep is None:
                raise FileToolError(f"Error: the pattern is not a valid regex: {exc}") from None
        root = absolute(raw, self.cwd) if raw else (self.cwd or absolute(".", None))
        name = shown(root, self.cwd)
        guard.refuse(root, name)
        if root.is_dir():
            single = False
        elif root.exists():
            read_regular(root, name, limit=0)  # a FIFO or device is refused, unopened
            single = True
        else:
            raise FileToolError(f"Error: {name} does not exist")
        return Query(pattern, root, single, glob, ignore_case, output, context)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        # The protected files stated once for the whole call: root, walk and rg's hits.
        guard = self.protected.check()
        query = self._query(arguments, guard)
        context = query.context if query.output is Output.CONTENT else 0
        stats = WalkStats()
        hits: list[FileHits] | None = None
        # ripgrep reads ignore files itself: one that is a FIFO or /dev/zero would hang it.
        if self.ripgrep is not None and await in_thread(lambda: ignore_files_usable(query.root)):
            hits = await _ripgrep(self.ripgrep, query, context)
            if hits is not None and query.glob:
                # Filtered here, not by rg --glob: rg lets a glob re-include ignored files.
                wanted = _glob_filter(query)
                hits = [h for h in hits if wanted(h.path)]
        if hits is None:
            stop = threading.Event()
            try:
                hits = await in_thread(lambda: self._search(query, context, stats, stop, guard))
            except asyncio.CancelledError:
                stop.set()
                raise
        if not query.single_file:  # a file named is checked already (`_query`)
            hits = [h for h in hits if not guard.covers(h.path)]
        return ToolResult(self._format(query, hits, stats.truncated))

    def _search(
        self,
        query: Query,
        context: int,
        stats: WalkStats,
        stop: threading.Event,
        guard: ProtectedCheck,
    ) -> list[FileHits]:
        import regex  # here: only the built-in search needs it, not start-up

        try:  # `regex`, not `re`: the same syntax, and a search it can stop (timeout=)
            pattern = regex.compile(query.pattern, regex.IGNORECASE if query.ignore_case else 0)
        except regex.error as exc:
            raise FileToolError(f"Error: the pattern is not a valid regex: {exc}") from None
        deadline = time.monotonic() + self.search_seconds
        selected = _glob_filter(query)
        if query.single_file:
            files: Any = [query.root]
        else:
            files = walk(query.root, guard=guard, stats=stats, stop=stop)
        found = []
        kept = 0
        for path in files:
            if kept >= MAX_KEPT_LINES:
                stats.truncated = True  # the answer's note: the search stopped early
                break
            if not selected(path):
                continue
            try:
                snapshot = read_regular(path, str(path), limit=MAX_FILE_BYTES + 1)
            except FileToolError:
                continue
            if snapshot.size > MAX_FILE_BYTES or is_binary(snapshot.data):
                continue
            if b"\0" in snapshot.data:
                continue
            lines = snapshot.data.split(b"\n")
            if lines and lines[-1] == b"":
                lines.pop()
            texts = [line.decode("utf-8", errors="replace") for line in lines]
            matched = [i for i, text in enumerate(texts) if _found(pattern, text, deadline)]
            if not matched:
                continue
            wanted: dict[int, bool] = {}
            for i in matched:
                for j in range(max(0, i - context), min(len(texts), i + context + 1)):
                    wanted.setdefault(j, False)
                wanted[i] = True
            entry = FileHits(path)
            entry.lines = [(i + 1, texts[i].rstrip("\r"), wanted[i]) for i in sorted(wanted)]
            found.append(entry)
            kept += len(entry.lines)
        return found

    def _format(self, query: Query, hits: list[FileHits], truncated: bool) -> str:
        where = shown(query.root, self.cwd)
        if not hits:
            text = f"No matches for {query.pattern!r} in {where}."
            return text + (_WALK_NOTE if truncated else "")
        notes = []
        if query.output is Output.CONTENT:
            lines: list[str] = []
            shown_lines = 0
            total = sum(len(h.lines) for h in hits)
            size = 0
            full = False
            for entry in hits:
                name = shown(entry.path, self.cwd)
                previous: int | None = None
                for number, text, hit in entry.lines:
                    if shown_lines >= MAX_LINES or size > MAX_OUTPUT_CHARS:
                        full = True
                        break
                    if query.context and lines and (previous is None or number != previous + 1):
                        lines.append("--")
                    if len(text) > MAX_LINE_CHARS:
                        text = text[:MAX_LINE_CHARS] + f"… [{len(text):,} characters]"
                    line = f"{name}{':' if hit else '-'}{number}{':' if hit else '-'}{text}"
                    lines.append(line)
                    size += len(line) + 1
                    shown_lines += 1
                    previous = number
                if full:
                    break
            if full:
                notes.append(
                    f"[Showing {shown_lines:,} of {total:,} lines from {len(hits):,} files; "
                    "narrow the pattern, path or glob to see the rest.]"
                )
        else:
            lines = []
            for entry in hits[:MAX_FILES]:
                name = shown(entry.path, self.cwd)
                lines.append(name if query.output is Output.FILES else f"{name}:{entry.matches}")
            if len(hits) > MAX_FILES:
                notes.append(
                    f"[{len(hits) - MAX_FILES:,} more matching files ({len(hits):,} in all); "
                    "narrow the pattern, path or glob to see them.]"
                )
        if truncated:
            notes.append(_WALK_NOTE.strip())
        return "\n".join(lines + notes)


_WALK_NOTE = "\n[The search stopped early: too many files or matching lines under this folder.]"


def _found(pattern: regex.Pattern[str], text: str, deadline: float) -> bool:
    """Whether ``pattern`` matches in ``text``; a tool error once the call's matching time
    (`GrepTool.search_seconds`) is spent."""
    try:
        return pattern.search(text, timeout=max(deadline - time.monotonic(), 0.0)) is not None
    except TimeoutError:
        raise FileToolError(
            "Error: the pattern took too long to match (over the search's time limit); it "
            "probably backtracks catastrophically, like (a|a)+$. Simplify it."
        ) from None


def _glob_filter(query: Query) -> Callable[[Path], bool]:
    """Whether a file passes the query's ``glob`` (ripgrep's rules: git's, relative to the
    folder searched; a glob without ``/`` matches the name at any depth)."""
    if not query.glob:
        return lambda path: True
    wanted = git_glob_filter(query.glob)
    base = query.root.parent if query.single_file else query.root
    return lambda path: wanted(path.relative_to(base).as_posix())


def _rg_command(rg: str, query: Query, context: int) -> tuple[list[str], Path]:
    command = [
        rg, "--json", "--no-config", "--hidden", "--glob", "!.git", "--no-require-git",
        "--no-ignore-dot", "--no-ignore-global", "--no-follow", "--sort", "path",
        "--max-filesize", str(MAX_FILE_BYTES),
    ]  # fmt: skip
    if query.ignore_case:
        command.append("--ignore-case")
    if context:
        command += ["--context", str(context)]
    command += ["--regexp", query.pattern]
    if query.single_file:
        return [*command, "--", query.root.name], query.root.parent
    return command, query.root


async def _ripgrep(rg: str, query: Query, context: int) -> list[FileHits] | None:
    """ripgrep's findings, or None when it cannot do this search (the Python search then
    does: a pattern only Python's regex knows, ripgrep missing or failing)."""
    command, cwd = _rg_command(rg, query, context)
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the pattern
        logger.debug("ripgrep could not start: %s", exc)
        return None
    assert process.stdout is not None and process.stderr is not None
    found: dict[Path, FileHits] = {}
    read = 0
    try:
        async with asyncio.timeout(RG_TIMEOUT_S):
            async for raw in process.stdout:
                read += len(raw)
                if read > MAX_RG_OUTPUT_BYTES:
                    break
                _take(json.loads(raw), cwd, found)
            if read > MAX_RG_OUTPUT_BYTES:
                process.kill()
            error = await process.stderr.read()
            code = await process.wait()
    except TimeoutError:
        process.kill()
        await process.wait()
        raise FileToolError(
            f"Error: the search took longer than {RG_TIMEOUT_S:g} s; narrow the path or glob"
        ) from None
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
    if code == 2 and not found:
        logger.debug("ripgrep failed (%s): %s", code, error.decode(errors="replace").strip())
        return None
    return list(found.values())


def _text(value: dict[str, Any]) -> str:
    if "text" in value:
        return str(value["text"])
    return base64.b64decode(value.get("bytes", "")).decode("utf-8", errors="replace")


def _take(event: dict[str, Any], cwd: Path, found: dict[Path, FileHits]) -> None:
    kind = event.get("type")
    if kind not in ("match", "context"):
        return
    data = event["data"]
    path = cwd / _text(data["path"])
    entry = found.setdefault(path, FileHits(path))
    text = _text(data["lines"]).rstrip("\n").rstrip("\r")
    entry.lines.append((int(data["line_number"]), text, kind == "match"))
