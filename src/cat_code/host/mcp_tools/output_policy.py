"""How much of an MCP tool's result reaches the model; the rest is saved to a file.

A result whose text is longer than its limit is saved whole under
``$CAT_CODE_HOME/tool-output/<project>/`` (a new 0600 file per result, named after the
server, the tool and the time; one folder per project, `project_key`, so no project's
session ever sees another's outputs), and the model gets the head and the tail, the full
size, the file's path and the ``read_file`` call that reads on. The file tools never touch
``$CAT_CODE_HOME``, with one exception made for this: a session's file tools may read a
file of its own project's folder when a call names it (`cat_code.agent.session` passes
`output_dir` of its project as ``readable`` to `cat_code.host.state.home.private_files`).

The limit, in characters (a token is taken as 4 characters): the entry's
``maxOutputTokens``, else ``CAT_CODE_MAX_MCP_OUTPUT_TOKENS``, else 25,000 tokens; a tool
definition's ``_meta["anthropic/maxResultSizeChars"]`` may raise it, never lower it, and
never past 500,000 characters. An image too large for a model (`MAX_IMAGE_BASE64`) is
saved the same way and left out of the result's media.
Invariants: saving runs on a worker thread; a save that fails still shortens and says so;
``ToolResult.raw`` is never touched (``cat-code mcp call`` prints the whole result from
it); files older than `KEEP_FOR_S`, in every project's folder, are removed by the first
save of a process.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import logging
import math
import os
import re
import secrets
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cat_code.host.state.home import cat_code_home, ensure_home
from cat_code.tools.base import Media, ToolResult

logger = logging.getLogger(__name__)

DEFAULT_MAX_OUTPUT_TOKENS = 25_000
ENV_VAR = "CAT_CODE_MAX_MCP_OUTPUT_TOKENS"
#: The estimate every limit here uses; close enough for English and code.
CHARS_PER_TOKEN = 4
META_KEY = "anthropic/maxResultSizeChars"
#: The most a tool's ``_meta`` may raise its limit to (what Claude Code allows too).
MAX_META_CHARS = 500_000
#: Head plus tail of a shortened result: enough to judge it, small beside the context.
PREVIEW_CHARS = 10_000
#: The share of the preview that is the head (the rest is the tail).
HEAD_SHARE = 0.75
#: Characters a suggested ``read_file`` call should return (below its 30,000 cut).
READ_CHUNK_CHARS = 20_000
#: Anthropic refuses an image over 5 MB; counted on the base64 text, the stricter reading.
MAX_IMAGE_BASE64 = 5 * 1024 * 1024
OUTPUT_DIR = "tool-output"
#: Saved outputs older than this are removed (a week: long enough to come back to).
KEEP_FOR_S = 7 * 24 * 3600

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")
_LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/svg+xml": ".svg",
}

#: Bad values of `ENV_VAR` already warned about (one warning each per process).
_warned_env: set[str] = set()
#: Whether this process has removed old outputs yet.
_swept = False


def env_max_tokens(environ: Mapping[str, str] | None = None) -> int:
    """``CAT_CODE_MAX_MCP_OUTPUT_TOKENS`` if it is a positive whole number, else the default."""
    env = os.environ if environ is None else environ
    value = env.get(ENV_VAR)
    if value is None or not value.strip():
        return DEFAULT_MAX_OUTPUT_TOKENS
    try:
        tokens = int(value.strip())
    except ValueError:
        tokens = 0
    if tokens > 0:
        return tokens
    if value not in _warned_env:
        _warned_env.add(value)
        logger.warning(
            "%s=%r is not a positive whole number of tokens; using the default, %d",
            ENV_VAR,
            value,
            DEFAULT_MAX_OUTPUT_TOKENS,
        )
    return DEFAULT_MAX_OUTPUT_TOKENS


def meta_max_chars(meta: Any) -> int | None:
    """A tool's ``_meta["anthropic/maxResultSizeChars"]``, clamped (None: absent or unusable)."""
    value = meta.get(META_KEY) if isinstance(meta, dict) else None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        logger.debug("ignoring %s=%r: not a positive number", META_KEY, value)
        return None
    return int(min(value, MAX_META_CHARS))


def limit_chars(
    max_output_tokens: int | None, meta: Any = None, environ: Mapping[str, str] | None = None
) -> int:
    """The most characters of a result's text the model gets whole."""
    tokens = max_output_tokens if max_output_tokens is not None else env_max_tokens(environ)
    limit = tokens * CHARS_PER_TOKEN
    raised = meta_max_chars(meta)
    return max(limit, raised) if raised is not None else limit


# -- saving --------------------------------------------------------------------------------


def project_key(project: Path | None = None) -> str:
    """The name of a project's output folder: its folder's name (for people) and a digest
    of its real path (so two projects never share one), ``app-3f2a9c0d1e4b5a6f``."""
    root = (project or Path.cwd()).resolve()
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return f"{_safe(root.name)[:24]}-{digest}"


def output_dir(home: Path | None = None, *, project: Path | None = None) -> Path:
    """Where the long outputs of ``project`` (default: the working directory) are saved:
    ``$CAT_CODE_HOME/tool-output/<project_key>``."""
    return (cat_code_home() if home is None else home) / OUTPUT_DIR / project_key(project)


def save_output(
    data: bytes,
    *,
    server: str,
    tool: str,
    suffix: str,
    directory: Path | None = None,
    project: Path | None = None,
) -> Path:
    """Write ``data`` to a new 0600 file named after the server, the tool and the time, in
    ``directory``, else in ``project``'s output folder (`output_dir`)."""
    if directory is None:
        folder = ensure_home(OUTPUT_DIR, project_key(project))
        _sweep_once(folder.parent)
    else:
        folder = directory
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        _sweep_once(folder)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = f"{_safe(server)}__{_safe(tool)}-{stamp}"
    for _ in range(5):  # a clash needs the same tool, second and random part
        path = folder / f"{base}-{secrets.token_hex(3)}{suffix}"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        return path
    raise FileExistsError(f"no free file name for {base} in {folder}")


def _safe(part: str) -> str:
    return _SAFE.sub("_", part)[:40] or "_"


def _sweep_once(folder: Path) -> None:
    """Remove outputs older than `KEEP_FOR_S` in ``folder`` and in its project folders (one
    level down), the first time a process saves one."""
    global _swept
    if _swept:
        return
    _swept = True
    cutoff = time.time() - KEEP_FOR_S
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                with os.scandir(entry.path) as inner:
                    entries.extend(e for e in inner if e.is_file(follow_symlinks=False))
            elif entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
        except OSError as exc:  # someone else's file, or gone already: not ours to insist
            logger.debug("could not remove old output %s: %s", entry.path, exc)


# -- the model's view ----------------------------------------------------------------------


def shortened(text: str, limit: int, *, path: Path | None, error: str | None = None) -> str:
    """What the model reads instead of ``text``: head, tail, size, and where the rest is.

    ``path`` is the file holding all of ``text``; without one, ``error`` says why.
    """
    size = len(text)
    preview = min(PREVIEW_CHARS, limit)
    head_end = _head_end(text, int(preview * HEAD_SHARE))
    tail_start = _tail_start(text, preview - head_end)
    lines = text.splitlines()
    total = len(lines)
    head_last = len(text[:head_end].splitlines())
    tail_first = total - len(text[tail_start:].splitlines()) + 1
    head_whole = head_end > 0 and text[head_end - 1] in _LINE_BREAKS
    tail_whole = text[tail_start - 1] in _LINE_BREAKS

    intro = (
        f"[Output too long: {size:,} characters (≈{math.ceil(size / CHARS_PER_TOKEN):,} tokens), "
        f"{_lines(total)}; the limit is {limit:,} characters. "
    )
    if path is not None:
        intro += f"The whole output is saved in {path}. "
    else:
        intro += f"It could not be saved to a file ({error}), so the middle is lost. "
    intro += (
        f"Shown: the first {head_end:,} characters ({_span(1, head_last)}) and the last "
        f"{size - tail_start:,} ({_span(tail_first, total)}).]"
    )
    gap = f"[… {tail_start - head_end:,} characters not shown …]"
    parts = [intro, text[:head_end].rstrip("\n"), gap, text[tail_start:].rstrip("\n")]
    if path is None:
        parts.append("[To see the rest, call the tool again asking for less.]")
        return "\n".join(parts)
    first_hidden = head_last + 1 if head_whole else head_last
    last_hidden = tail_first - 1 if tail_whole else tail_first
    hidden = lines[first_hidden - 1 : last_hidden]
    # Only a cut result needs it: `mcp list` and friends never load the file tools.
    from cat_code.tools.builtin import MAX_LINE_CHARS as READ_FILE_MAX_CHARS

    longest = max(map(len, lines))
    per_line = max(1, sum(map(len, hidden)) // max(1, len(hidden)) + 1)
    count = max(1, min(len(hidden), READ_CHUNK_CHARS // per_line))
    if not hidden or max(map(len, hidden[:count])) <= READ_FILE_MAX_CHARS:
        hint = (
            f'[To read more: read_file with path "{path}", offset {first_hidden} and limit '
            f"{count} reads {_span(first_hidden, first_hidden + count - 1)}; the part not shown "
            f"is {_span(first_hidden, last_hidden)} of {total:,}."
        )
        if longest > READ_FILE_MAX_CHARS:
            hint += (
                f" Some lines are longer ({longest:,} characters at most) than read_file "
                f"returns in a call ({READ_FILE_MAX_CHARS:,}): to see characters A–B of line N, "
                f"use the shell tool: {_slice_command(path, 'N-1', 'A-1', 'B')}."
            )
    else:
        # Lines past read_file's cut: only the shell can show their inside.
        first = 0 if head_whole else len(text[:head_end].splitlines()[-1])
        command = _slice_command(path, first_hidden - 1, first, first + READ_CHUNK_CHARS)
        hint = (
            f"[Its lines are too long for read_file ({longest:,} characters at most; it returns "
            f"{READ_FILE_MAX_CHARS:,} a call). To read more, use the shell tool: {command} "
            f"shows the next {READ_CHUNK_CHARS:,} characters of line {first_hidden:,}."
        )
    parts.append(hint + "]")
    return "\n".join(parts)


def _slice_command(path: Path, index: object, start: object, stop: object) -> str:
    """A shell command printing ``splitlines()[index][start:stop]`` of the saved file.

    Python, not ``sed | cut -c``: GNU cut counts bytes, and sed counts only ``\\n`` as a line
    break; this counts characters and lines exactly as the numbers in the hint do.
    """
    code = (
        'import sys; print(open(sys.argv[1], encoding="utf-8", newline="").read()'
        f".splitlines()[{index}][{start}:{stop}])"
    )
    return f"python3 -c {shlex.quote(code)} {shlex.quote(str(path))}"


def _head_end(text: str, budget: int) -> int:
    """Where the head ends: after the last line break within ``budget``, if not too early."""
    cut = text.rfind("\n", 0, budget)
    return cut + 1 if cut >= budget // 2 else budget


def _tail_start(text: str, budget: int) -> int:
    """Where the tail starts: after the first line break in the last ``budget`` characters."""
    start = len(text) - budget
    cut = text.find("\n", start, start + budget // 2)
    return cut + 1 if cut != -1 and cut + 1 < len(text) else start


def _lines(n: int) -> str:
    return "1 line" if n == 1 else f"{n:,} lines"


def _span(first: int, last: int) -> str:
    return f"line {first:,}" if first >= last else f"lines {first:,}–{last:,}"


# -- applying the policy -------------------------------------------------------------------


@dataclass(slots=True)
class _Oversized:
    """An image left out of the result's media, and what became of it."""

    media: Media
    size: int
    path: Path | None = None
    error: str | None = None


async def enforce(
    result: ToolResult, *, limit: int, server: str, tool: str, project: Path | None = None
) -> ToolResult:
    """``result`` as the model should get it: text within ``limit``, images within reach;
    what is cut is saved in ``project``'s output folder (default: the working directory's)."""
    too_long = len(result.content) > limit
    oversized = [
        _Oversized(m, len(m.data))
        for m in result.media
        if m.kind == "image" and len(m.data) > MAX_IMAGE_BASE64
    ]
    if not too_long and not oversized:
        return result
    text_path, text_error = await asyncio.to_thread(
        _save_text, result.content if too_long else None, server, tool, project
    )
    for item in oversized:
        item.path, item.error = await asyncio.to_thread(
            _save_media, item.media, server, tool, project
        )
    content = result.content
    if too_long:
        content = shortened(content, limit, path=text_path, error=text_error)
    for item in oversized:
        where = f"saved to {item.path}" if item.path else f"it could not be saved ({item.error})"
        content += (
            f"\n[an {item.media.mime_type} image of {item.size:,} base64 characters is larger "
            f"than a model accepts ({MAX_IMAGE_BASE64:,}) and was not sent; {where}]"
        )
    media = [m for m in result.media if not any(m is o.media for o in oversized)]
    return replace(result, content=content, media=media)


def _save_text(
    text: str | None, server: str, tool: str, project: Path | None
) -> tuple[Path | None, str | None]:
    if text is None:
        return None, None
    try:
        data = text.encode("utf-8", errors="replace")
        path = save_output(data, server=server, tool=tool, suffix=".txt", project=project)
    except OSError as exc:
        logger.warning("could not save the long output of %s/%s: %s", server, tool, exc)
        return None, _reason(exc)
    logger.debug("saved %d characters of %s/%s output to %s", len(text), server, tool, path)
    return path, None


def _save_media(
    media: Media, server: str, tool: str, project: Path | None
) -> tuple[Path | None, str | None]:
    try:
        data = base64.b64decode(media.data)
        suffix = _EXTENSIONS.get(media.mime_type, ".bin")
        return save_output(data, server=server, tool=tool, suffix=suffix, project=project), None
    except (OSError, binascii.Error, ValueError) as exc:
        logger.warning("could not save an image from %s/%s: %s", server, tool, exc)
        return None, _reason(exc)


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror}"
    return str(exc) or type(exc).__name__
