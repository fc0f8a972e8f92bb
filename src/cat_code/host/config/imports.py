"""Other MCP hosts' config files: where they live and how their entries become ours.

Five sources, each a list of files in their documented places on Linux and macOS (the
home folder is `Path.home()`, the project folder the working directory):

- ``claude-desktop``: ``claude_desktop_config.json`` (``mcpServers``).
- ``claude-code``: ``~/.claude.json`` (``mcpServers``, and ``projects.<path>.mcpServers``
  for the working directory itself: Claude Code's local scope is one exact folder) and
  ``./.mcp.json`` — which is cat-code's own project file too, so its servers are listed
  but never imported (`PROJECT_FILE_NOTE`).
- ``cursor``: ``~/.cursor/mcp.json`` and ``./.cursor/mcp.json``.
- ``vscode``: the user ``mcp.json`` in Code's ``User`` folder and ``./.vscode/mcp.json``:
  ``{"servers": {...}, "inputs": [...]}``, with ``${env:X}``, ``${input:id}`` variables.
- ``gemini``: ``~/.gemini/settings.json`` and ``./.gemini/settings.json`` (``url`` is SSE,
  ``httpUrl`` Streamable HTTP, ``timeout`` in ms, ``$VAR`` variables).

Each source's second kind of file lives in the project (``./.vscode/mcp.json`` and the
like): it comes with the repository, so a server found there is *folder-local*
(`FoundServer.local`) and is imported as a project server waiting for the user's approval,
never into the user's own file (`cat_code.cli.mcp_manage`). User-level files (Claude
Desktop, ``~/.claude.json``, the other tools' user files) are the user's own.

Reading never fails as a whole: a missing file is skipped, an unreadable one is a warning,
an entry that cannot (or must not) be imported is a `FoundServer` with an ``error``. Files may carry
comments and trailing commas (VS Code and Gemini allow them). Converted entries are in
cat-code's shape with the other host's variables rewritten to ``${VAR}``; what cannot be
carried over is named in the entry's ``notes``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cat_code.base.files import JsonTooDeep, parse_json, read_bounded, same_file

SOURCES: tuple[str, ...] = ("claude-desktop", "claude-code", "cursor", "vscode", "gemini")
#: Why a server of ``./.mcp.json`` is not imported: cat-code reads that file already.
PROJECT_FILE_NOTE = "already read by cat-code (project scope)"

#: Fields carried over as they are (cat-code reads them the same way), in output order.
_SAME_FIELDS = (
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "requestTimeoutMs",
    "startupTimeoutMs",
    "toolTimeoutMs",
    "includeTools",
    "excludeTools",
    "disabled",
    "description",
)
_TYPES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http",
          "sse": "sse"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class FoundServer:
    """One server entry found in another host's file, converted (or why it cannot be)."""

    source: str
    file: Path
    name: str
    #: The entry in cat-code's shape (None when it cannot be converted: see ``error``).
    entry: dict[str, Any] | None
    #: Why it is not imported (None: it may be); set with or without an ``entry``.
    error: str | None = None
    notes: tuple[str, ...] = ()
    #: Found in a file of the project (the working directory), not of the user's home.
    local: bool = False

    @property
    def transport(self) -> str:
        entry = self.entry or {}
        declared = entry.get("type")
        if isinstance(declared, str):
            return declared
        return "stdio" if "command" in entry else "http" if "url" in entry else "?"

    @property
    def target(self) -> str:
        """The command line or URL, as written."""
        entry = self.entry or {}
        if isinstance(entry.get("command"), str):
            args = [str(a) for a in entry.get("args") or []]
            return " ".join([entry["command"], *args])
        url = entry.get("url")
        return url if isinstance(url, str) else ""


@dataclass(slots=True)
class Scan:
    """What reading the sources found: servers, warnings, and every file looked for."""

    servers: list[FoundServer] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    looked: list[Path] = field(default_factory=list)


def source_files(source: str, *, home: Path, cwd: Path) -> list[Path]:
    """Where ``source`` keeps its MCP servers, user files first (deduplicated)."""
    return [path for path, _ in _source_places(source, home=home, cwd=cwd)]


def user_source_files(home: Path) -> list[Path]:
    """Every source's user-level files (the user's own, trusted everywhere: a write to one
    is guarded like a write to cat-code's ``.mcp.json``, `cat_code.agent.write_guard`)."""
    return [p for s in SOURCES for p, local in _source_places(s, home=home, cwd=home) if not local]


def _source_places(source: str, *, home: Path, cwd: Path) -> list[tuple[Path, bool]]:
    """`source_files`, each with whether it is the project's (folder-local) file."""
    mac = home / "Library" / "Application Support"
    linux = home / ".config"
    users = {
        "claude-desktop": [
            mac / "Claude" / "claude_desktop_config.json",
            linux / "Claude" / "claude_desktop_config.json",
        ],
        "claude-code": [home / ".claude.json"],
        "cursor": [home / ".cursor" / "mcp.json"],
        "vscode": [
            mac / "Code" / "User" / "mcp.json",
            linux / "Code" / "User" / "mcp.json",
            mac / "Code - Insiders" / "User" / "mcp.json",
            linux / "Code - Insiders" / "User" / "mcp.json",
        ],
        "gemini": [home / ".gemini" / "settings.json"],
    }[source]
    projects = {
        "claude-desktop": [],
        "claude-code": [cwd / ".mcp.json"],
        "cursor": [cwd / ".cursor" / "mcp.json"],
        "vscode": [cwd / ".vscode" / "mcp.json"],
        "gemini": [cwd / ".gemini" / "settings.json"],
    }[source]
    unique: list[tuple[Path, bool]] = []
    # User files first: run in the home folder, ~/.cursor/mcp.json stays the user's.
    for path, local in [*((p, False) for p in users), *((p, True) for p in projects)]:
        if not any(same_file(path, seen) for seen, _ in unique):
            unique.append((path, local))
    return unique


def scan(sources: tuple[str, ...] = SOURCES, *, home: Path | None = None,
         cwd: Path | None = None) -> Scan:  # fmt: skip
    """Read every file of ``sources`` that exists; convert the entries found in them."""
    home = Path.home() if home is None else home
    cwd = Path.cwd() if cwd is None else cwd
    result = Scan()
    for source in sources:
        for path, local in _source_places(source, home=home, cwd=cwd):
            result.looked.append(path)
            data = _read(path, result.warnings)
            if data is None:
                continue
            context = _Context(source=source, file=path, home=home, cwd=cwd, data=data)
            ours = same_file(path, cwd / ".mcp.json")
            for name, raw, convert in _entries(context, result.warnings):
                server = dataclasses.replace(_found(context, name, raw, convert), local=local)
                if ours and server.error is None:
                    server = dataclasses.replace(server, error=PROJECT_FILE_NOTE)
                result.servers.append(server)
    return result


# -- reading ------------------------------------------------------------------------------


def _read(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    try:
        text = read_bounded(path).decode("utf-8-sig")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        warnings.append(f"{path}: cannot read it ({reason}); skipped")
        return None
    if not text.strip():
        return None
    try:
        data = parse_json(strip_jsonc(text))
    except JsonTooDeep as exc:
        warnings.append(f"{path}: {exc}; skipped")
        return None
    except json.JSONDecodeError as exc:
        warnings.append(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); skipped")
        return None
    if not isinstance(data, dict):
        warnings.append(f"{path}: not a JSON object; skipped")
        return None
    return data


def strip_jsonc(text: str) -> str:
    """JSON with comments (``//``, ``/* */``) and trailing commas, as plain JSON.

    Comments become spaces (newlines kept), so a JSON error's line and column stay true.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == ",":
            k = i + 1
            while k < n and text[k] in " \t\r\n":
                k += 1
            # A trailing comma (before } or ]) is dropped; comments after it are rare.
            out.append(" " if k < n and text[k] in "}]" else ",")
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class _Context:
    source: str
    file: Path
    home: Path
    cwd: Path
    data: dict[str, Any]


Converter = Callable[[_Context, dict[str, Any], list[str]], dict[str, Any]]


def _entries(context: _Context, warnings: list[str]) -> Iterator[tuple[str, Any, Converter]]:
    """(name, raw entry, converter) for every server the file defines."""
    data, source, path = context.data, context.source, context.file
    if source == "vscode":
        yield from _members(data.get("servers"), path, "servers", warnings, _from_vscode)
        return
    convert = _from_gemini if source == "gemini" else _from_mcp_servers
    yield from _members(data.get("mcpServers"), path, "mcpServers", warnings, convert)
    if source == "claude-code" and path.name == ".claude.json":
        projects = data.get("projects")
        if isinstance(projects, dict):
            here = context.cwd.resolve()
            for project, settings in projects.items():
                if not isinstance(settings, dict) or _resolve(project) != here:
                    continue
                key = f"projects.{project}.mcpServers"
                yield from _members(settings.get("mcpServers"), path, key, warnings, convert)


def _members(
    servers: Any, path: Path, key: str, warnings: list[str], convert: Converter
) -> Iterator[tuple[str, Any, Converter]]:
    if servers is None:
        return
    if not isinstance(servers, dict):
        warnings.append(f"{path}: '{key}' is not an object; skipped")
        return
    for name, raw in servers.items():
        yield name, raw, convert


def _found(context: _Context, name: str, raw: Any, convert: Converter) -> FoundServer:
    if not isinstance(raw, dict):
        return FoundServer(context.source, context.file, name, None, "the entry is not an object")
    notes: list[str] = []
    try:
        entry = convert(context, raw, notes)
    except _CannotConvert as exc:
        return FoundServer(context.source, context.file, name, None, str(exc), tuple(notes))
    return FoundServer(context.source, context.file, name, entry, None, tuple(notes))


class _CannotConvert(Exception):
    """The entry uses something cat-code cannot express; the text says what."""


# -- conversions --------------------------------------------------------------------------


def _from_mcp_servers(context: _Context, raw: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Claude Desktop, Claude Code and Cursor: already (nearly) cat-code's shape."""
    entry = _shape(raw, notes, handled={"type", "oauth"})
    declared = raw.get("type")
    if declared is not None:
        entry = {"type": _type(declared), **entry}
    oauth = raw.get("oauth")
    if isinstance(oauth, dict):
        entry["oauth"] = oauth  # Claude Code's clientId / callbackPort are ours too
    if context.source == "cursor":  # Cursor expands VS Code style variables
        entry = _rewrite_vars(entry, lambda s: _vscode_vars(s, context, notes))
    return entry


def _from_vscode(context: _Context, raw: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    entry = _shape(raw, notes, handled={"type", "dev"})
    declared = raw.get("type")
    if declared is not None:
        entry = {"type": _type(declared), **entry}
    if "dev" in raw:
        notes.append("ignored 'dev' (VS Code's watch-and-debug settings)")
    return _rewrite_vars(entry, lambda s: _vscode_vars(s, context, notes))


def _from_gemini(context: _Context, raw: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    handled = {"httpUrl", "url", "type", "timeout", "trust", "oauth", "authProviderType"}
    entry = _shape(raw, notes, handled=handled)
    http_url, url, declared = raw.get("httpUrl"), raw.get("url"), raw.get("type")
    if isinstance(http_url, str):
        entry = {"type": "http", "url": http_url, **entry}
    elif isinstance(url, str):
        # Gemini's plain `url` is the SSE transport unless the entry says otherwise.
        kind = _type(declared) if declared is not None else "sse"
        entry = {"type": kind, "url": url, **entry}
    elif declared is not None:
        entry = {"type": _type(declared), **entry}
    timeout = raw.get("timeout")
    if timeout is not None:
        entry["requestTimeoutMs"] = timeout
    if "trust" in raw:
        notes.append("ignored 'trust' (cat-code asks before tool calls; see --allow-tool)")
    oauth = raw.get("oauth")
    if isinstance(oauth, dict):
        ours = {k: oauth[k] for k in ("clientId", "clientSecret") if k in oauth}
        if ours:
            entry["oauth"] = ours
        dropped = sorted(set(oauth) - {"clientId", "clientSecret", "enabled"})
        if dropped:
            notes.append(f"ignored oauth field(s) {', '.join(dropped)} (discovered instead)")
    if "authProviderType" in raw:
        notes.append("ignored 'authProviderType'")
    return _rewrite_vars(entry, _dollar_vars)


def _shape(raw: dict[str, Any], notes: list[str], *, handled: set[str]) -> dict[str, Any]:
    """The fields cat-code shares with every host, in order; the rest named in ``notes``."""
    entry = {key: raw[key] for key in _SAME_FIELDS if key in raw}
    ignored = sorted(set(raw) - set(_SAME_FIELDS) - handled)
    if ignored:
        notes.append(f"ignored field(s) {', '.join(ignored)}")
    return entry


def _type(declared: Any) -> str:
    if isinstance(declared, str) and declared in _TYPES:
        return _TYPES[declared]
    raise _CannotConvert(f"unknown transport type {declared!r}")


def _rewrite_vars(entry: dict[str, Any], rewrite: Callable[[str], str]) -> dict[str, Any]:
    """``rewrite`` applied to every string of the fields cat-code expands variables in."""
    out = dict(entry)
    for key in ("command", "cwd", "url"):
        if isinstance(out.get(key), str):
            out[key] = rewrite(out[key])
    if isinstance(out.get("args"), list):
        out["args"] = [rewrite(a) if isinstance(a, str) else a for a in out["args"]]
    for key in ("env", "headers"):
        if isinstance(out.get(key), dict):
            out[key] = {k: rewrite(v) if isinstance(v, str) else v for k, v in out[key].items()}
    return out


_VSCODE_VAR = re.compile(r"\$\{([A-Za-z]+)(?::([^}]*))?\}")


def _vscode_vars(value: str, context: _Context, notes: list[str]) -> str:
    """``${env:X}`` → ``${X}``; ``${input:id}`` → ``${ID}`` (noted); folders resolved."""

    def replace(match: re.Match[str]) -> str:
        kind, arg = match.group(1), match.group(2)
        if kind == "env" and arg:
            return "${" + arg + "}"
        if kind == "input" and arg:
            var = re.sub(r"[^A-Za-z0-9_]", "_", arg).upper()
            if var[:1].isdigit():
                var = "_" + var
            note = f"asks for input '{arg}': set {var} in the environment instead"
            if note not in notes:
                notes.append(note)
            return "${" + var + "}"
        if arg is None:
            known = {
                "userHome": str(context.home),
                "workspaceFolder": str(context.cwd),
                "workspaceFolderBasename": context.cwd.name,
                "pathSeparator": "/",
            }
            if kind in known:
                return known[kind]
            if kind.isupper() or "_" in kind:  # already ${VAR}: cat-code's own syntax
                return match.group(0)
        raise _CannotConvert(f"uses {match.group(0)}, which cat-code cannot resolve")

    return _VSCODE_VAR.sub(replace, value) if "${" in value else value


_BARE_VAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def _dollar_vars(value: str) -> str:
    """Gemini's ``$VAR`` as ``${VAR}`` (``${VAR}`` is left as it is)."""
    return _BARE_VAR.sub(r"${\1}", value) if "$" in value else value


def _resolve(path: str) -> Path | None:
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return None
