"""``cat-code mcp add | remove | get | enable | disable | import``: the config from the shell.

Every change goes through `ConfigFile`: one entry is spliced into the file's text and the
rest keeps its bytes; the write is atomic; a file that is not valid JSON is refused,
never overwritten. A new entry is checked with `parse_entry` before it is written (its
``${VAR}`` references may be unset now: they are checked with a stand-in value). ``add``
then connects the new server alone, through an `McpPool`, and says whether it answered;
the entry stays written either way (exit 0). ``get`` shows an entry with its secrets
masked (env and header values, URL userinfo and query values, the value after a
secret-looking argument such as ``--api-key``; ``${VAR}`` references are shown as
written, their ``:-default`` masked) and connects it for its live state and tools.
Scopes: ``user`` is ``$CAT_CODE_HOME/mcp.json``, ``project`` is ``./.mcp.json`` (whose
entry is not used when both name a server: `cat_code.host.config.load`); ``--mcp-config
FILE`` replaces both, for every verb (``add`` and ``import`` write to it, so they take one
only); what ``add`` and ``import`` write into ``./.mcp.json`` is approved for this folder,
except what ``import`` found in the project's own files (``.vscode/mcp.json`` and the like):
those go into ``./.mcp.json`` unapproved, whatever the scope, as project servers.
A file that cannot be read is skipped with a warning unless it is the one to change.
Exit codes: 0 done, 1 refused or failed, 2 a usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from cat_code.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_error, print_line
from cat_code.host.config.edit import ConfigEditError, ConfigFile, editing
from cat_code.host.config.imports import SOURCES, FoundServer, scan
from cat_code.host.config.load import (
    BrokenServer,
    McpConfig,
    ServerConfig,
    WaitingServer,
    load_config,
    parse_entry,
)
from cat_code.host.config.masking import (
    VARIABLE,
    mask_entry,
    mask_url,
    masked_target,
    shown_command,
)
from cat_code.host.config.trust import Decision, TrustStore, approve_written
from cat_code.host.home import cat_code_home
from cat_code.host.safe_text import safe_json
from cat_code.mcp.errors import ConfigError
from cat_code.mcp.files import same_file
from cat_code.mcp.roots import Roots

if TYPE_CHECKING:
    from cat_code.host.tool_adapter import McpTool

USER = "user"
PROJECT = "project"
SCOPES = (USER, PROJECT)

#: The longest ``add`` and ``get`` wait for a server to connect (its own startup timeout
#: if shorter): long enough for an ``npx`` download, short enough for a command line.
TRY_TIMEOUT_S = 30.0
#: What an unset ``${VAR}`` stands for while an entry is validated (a URL passes too).
_UNSET_STAND_IN = "https://unset.invalid"
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
#: A word that is meant as a URL, whatever its scheme (``ftp://h``, ``ws://h``).
_URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class UsageError(Exception):
    """The command line is wrong; the message says how."""


def scope_path(scope: str) -> Path:
    """The file a scope writes to."""
    return cat_code_home() / "mcp.json" if scope == USER else Path.cwd() / ".mcp.json"


def write_target(args: argparse.Namespace, scope: str | None, verb: str) -> tuple[str, Path]:
    """The (scope, file) ``add`` or ``import`` writes to: the one ``--mcp-config`` file
    when given (``file``), else the scope's file (user by default)."""
    paths: list[str] = getattr(args, "mcp_config", None) or []
    if not paths:
        scope = scope or USER
        if scope not in SCOPES:
            raise UsageError(f"--scope must be user or project, not {scope!r}")
        return scope, scope_path(scope)
    if len(paths) > 1:
        raise UsageError(
            f"mcp {verb} writes to one --mcp-config file, not {len(paths)} "
            f"({', '.join(paths)}); give one"
        )
    if scope is not None:
        raise UsageError(
            f"give either --scope {scope} or --mcp-config {paths[0]} to say where to write, "
            "not both"
        )
    return "file", Path(paths[0])


def run_manage_command(args: argparse.Namespace) -> int:
    """Run one of ``commands.MANAGE_COMMANDS`` (``args.mcp_command``); its exit code."""
    command = args.mcp_command
    try:
        if command == "add":
            return _add(args)
        if command == "remove":
            return _remove(args)
        if command == "get":
            return _get(args)
        if command in ("enable", "disable"):
            return _set_disabled(args, disabled=command == "disable")
        if command == "import":
            return _import(args)
    except UsageError as exc:
        print_error(str(exc))
        return EXIT_USAGE
    except ConfigError as exc:
        print_error(str(exc))
        return EXIT_FAILED
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print_error(f"{where}{exc.strerror or exc}; nothing was changed")
        return EXIT_FAILED
    raise AssertionError(f"unknown mcp command {command!r}")


def _note(text: str) -> None:
    print_error(f"note: {text}")


# -- add ----------------------------------------------------------------------------------


@dataclass(slots=True)
class AddRequest:
    """What ``mcp add`` was asked for, its command line taken apart."""

    name: str
    #: None: not given (user, unless ``--mcp-config`` names the file).
    scope: str | None = None
    env: list[str] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    transport: str | None = None
    force: bool = False
    verbose: bool = False
    url: str | None = None
    command: list[str] = field(default_factory=list)
    mcp_config: list[str] = field(default_factory=list)

    def entry(self) -> dict[str, Any]:
        """The entry to write, in cat-code's shape (key order as written)."""
        if self.url is not None:
            if self.env:
                raise UsageError("--env applies to stdio servers; a URL server takes --header")
            if self.transport == "stdio":
                raise UsageError("--transport stdio needs a command after --, not a URL")
            entry: dict[str, Any] = {"type": self.transport or "http", "url": self.url}
            if self.headers:
                entry["headers"] = _pairs(self.headers, ":", "--header", "'Name: value'")
            return entry
        if not self.command:
            raise UsageError(
                f"say what to run: cat-code mcp add {self.name} -- COMMAND [ARGS...], "
                f"or where it is: cat-code mcp add {self.name} https://HOST/PATH"
            )
        if self.headers:
            raise UsageError("--header applies to URL servers; a stdio server takes --env")
        if self.transport in ("http", "sse"):
            raise UsageError(
                f"--transport {self.transport} needs a URL (http:// or https://), "
                f"not the command {self.command[0]!r}"
            )
        entry = {"command": self.command[0], "args": self.command[1:]}
        if self.env:
            entry["env"] = _pairs(self.env, "=", "--env", "KEY=VALUE")
        return entry


def _pairs(items: Sequence[str], sep: str, option: str, form: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(sep)
        key = key.strip()
        if not found or not key:
            raise UsageError(f"{option} {item!r}: expected {form}")
        out[key] = value.strip() if sep == ":" else value
    return out


#: ``mcp add``'s options: flag → (attribute, takes a value).
_ADD_OPTIONS: dict[str, tuple[str, bool]] = {
    "--scope": ("scope", True), "-s": ("scope", True),
    "--env": ("env", True), "-e": ("env", True),
    "--header": ("headers", True), "-H": ("headers", True),
    "--transport": ("transport", True), "-t": ("transport", True),
    "--force": ("force", False), "-f": ("force", False),
    "--verbose": ("verbose", False), "-v": ("verbose", False),
    "--mcp-config": ("mcp_config", True),
}  # fmt: skip


def parse_add(args: argparse.Namespace) -> AddRequest:
    """Take ``mcp add``'s arguments apart: options, then a URL (more options may follow)
    or ``--`` and a command; everything after ``--`` is the command, its options included.
    A command without ``--`` is refused (its options would be read as ``mcp add``'s), so
    is a URL that is not http(s) (``ftp://h`` is a typo, not a command to run).

    argparse hands over NAME and everything after it untouched (its ``*`` positionals
    cannot be followed by ``--`` in Python 3.11, and a positional NAME would swallow a
    ``--`` right after it), so NAME and the options after it are read here.
    """
    words: list[str] = list(args.rest)
    if not words or words[0].startswith("-"):
        raise UsageError(
            "say which server to add: cat-code mcp add NAME -- COMMAND [ARGS...], "
            "or cat-code mcp add NAME https://HOST/PATH"
        )
    request = AddRequest(
        name=words[0],
        scope=args.scope,
        env=list(args.env or []),
        headers=list(args.header or []),
        transport=args.transport,
        force=args.force,
        mcp_config=list(getattr(args, "mcp_config", None) or []),
    )
    rest = words[1:]
    i = 0
    while i < len(rest):
        token = rest[i]
        if token == "--":
            if request.url is not None:
                raise UsageError("give either a URL or a command after --, not both")
            request.command = rest[i + 1 :]
            break
        flag, eq, inline = token.partition("=")
        if token.startswith("-") and flag in _ADD_OPTIONS:
            attribute, takes_value = _ADD_OPTIONS[flag]
            if not takes_value:
                setattr(request, attribute, True)
                i += 1
                continue
            if eq:
                value = inline
            elif i + 1 < len(rest):
                value = rest[i + 1]
                i += 1
            else:
                raise UsageError(f"{flag} needs a value")
            current = getattr(request, attribute)
            if isinstance(current, list):
                current.append(value)
            else:
                setattr(request, attribute, value)
            i += 1
            continue
        if token.startswith("-") and len(token) > 1:
            raise UsageError(
                f"unknown option {token!r} for mcp add (put the server's command and its "
                f"options after --: cat-code mcp add {request.name} -- COMMAND ARGS...)"
            )
        if request.url is not None:
            raise UsageError(f"unexpected {token!r} after the URL {request.url}")
        if not token.startswith(("http://", "https://")):
            _refuse_target(request.name, token, rest[i:])
        request.url = token
        i += 1
    if request.command and request.command[0].startswith(("http://", "https://")):
        if len(request.command) > 1:
            raise UsageError(f"unexpected {request.command[1]!r} after the URL")
        request.url, request.command = request.command[0], []
    if request.command and _URL_LIKE.match(request.command[0]):
        _refuse_target(request.name, request.command[0], request.command)
    if request.scope not in (None, *SCOPES):
        raise UsageError(f"--scope must be user or project, not {request.scope!r}")
    if request.transport not in (None, "stdio", "http", "sse"):
        raise UsageError(f"--transport must be http, sse or stdio, not {request.transport!r}")
    if not _NAME.match(request.name):
        raise UsageError(
            f"server name {request.name!r}: use letters, digits, '-', '_' and '.' only"
        )
    return request


def _refuse_target(name: str, token: str, words: Sequence[str]) -> NoReturn:
    """A word where the URL or ``--`` belongs: a URL of another scheme, or a command
    given without ``--`` (its own options would be taken for ``mcp add``'s)."""
    if _URL_LIKE.match(token):
        raise UsageError(f"a URL must start with http:// or https://, not {token!r}")
    raise UsageError(f"put the command after --: cat-code mcp add {name} -- {shlex.join(words)}")


def _add(args: argparse.Namespace) -> int:
    request = parse_add(args)
    if request.verbose and not args.verbose:  # -v after NAME: argparse did not see it
        from cat_code.cli.log import configure_logging

        configure_logging(1)
    entry = request.entry()
    args.mcp_config = request.mcp_config
    scope, path = write_target(args, request.scope, "add")
    validate_entry(request.name, entry, path)
    with editing(path):  # held from the check to the write: no concurrent add is lost
        file = ConfigFile.read(path)
        existed = request.name in file.servers
        if existed and not request.force:
            print_error(
                f"MCP server '{request.name}' already exists in {path}; use --force to "
                f"replace it, or remove it first: cat-code mcp remove {request.name}"
            )
            return EXIT_FAILED
        file.set_entry(request.name, entry)
        file.write()
        _approve_if_project(path, {request.name: entry})
    kind = entry.get("type", "stdio")
    replaced = " (replaced the previous entry)" if existed else ""
    print_line(f"Added {kind} server '{request.name}' to {path}{replaced}")
    if scope in SCOPES:
        other = scope_path(PROJECT if scope == USER else USER)
        try:
            shadowed = request.name in ConfigFile.read(other).servers
        except ConfigError:
            shadowed = False
        if shadowed:
            user = path if scope == USER else other
            _note(
                f"{other} also defines '{request.name}'; the entry in {user} is the one used "
                "(a project entry never takes the name of your own server)"
            )
    return asyncio.run(_try_entry(request.name, entry, path, Roots(args.add_dir)))


def _is_project_file(path: Path) -> bool:
    return same_file(path, scope_path(PROJECT))


def _approve_if_project(path: Path, entries: Mapping[str, Any]) -> None:
    """Entries written for the user into this folder's project file are theirs: approved
    (`cat_code.host.config.trust`), so cat-code starts them without asking."""
    if _is_project_file(path):
        approve_written(Path.cwd(), entries)


def validate_entry(name: str, entry: dict[str, Any], source: Path) -> ServerConfig:
    """`parse_entry` on an entry about to be written; unset ``${VAR}``s stand in as set."""
    _refuse_non_utf8(entry, source, name)
    env = dict(os.environ)
    for var in _variables(entry):
        env.setdefault(var, _UNSET_STAND_IN)
    return parse_entry(name, entry, source=source, environ=env)


def _refuse_non_utf8(entry: dict[str, Any], source: Path, name: str) -> None:
    """A word that is not UTF-8 (bytes Python keeps as surrogates) cannot go into a JSON
    file: name it instead of failing on the write."""
    for key, value in entry.items():
        values = value if isinstance(value, list) else [value]
        if isinstance(value, dict):
            values = [*value, *value.values()]
        for word in values:
            if isinstance(word, str) and not _is_utf8(word):
                raw = word.encode("utf-8", "surrogateescape")
                what = "argument" if key == "args" else f"{key!r} value"
                raise ConfigError(
                    f"{source}: server '{name}': {what} {ascii(raw)[1:]} is not valid UTF-8 "
                    "(the config file holds UTF-8 text only); nothing was written"
                )


def _is_utf8(word: str) -> bool:
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _variables(value: Any) -> set[str]:
    if isinstance(value, str):
        return {match.group(1) for match in VARIABLE.finditer(value)}
    if isinstance(value, dict):
        return set().union(*(_variables(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_variables(v) for v in value))
    return set()


async def _try_entry(name: str, entry: dict[str, Any], source: Path, roots: Roots) -> int:
    """Connect the entry just written, alone, and say how that went. Always exit 0 but
    for a signal: the entry is written either way."""
    try:
        config = parse_entry(name, entry, source=source)
    except ConfigError as exc:
        print_line(f"could not connect: {_reason(exc)}")
        return EXIT_OK
    from cat_code.host.server import ServerState

    status, tools = await _connect_one(config, roots)
    code = int(status.pop("exit", EXIT_OK))
    state = ServerState(status["state"]) if code == EXIT_OK else None  # None: a signal
    if state is ServerState.CONNECTED:
        print_line(f"connected: {len(tools)} tool(s)")
    elif state is ServerState.NEEDS_LOGIN:
        print_line(f"needs a sign-in: cat-code mcp login {name}")
    else:
        print_line(f"could not connect: {status.get('error') or status.get('state')}")
        print_line(
            f"(the entry is saved; fix it with cat-code mcp add {name} --force ..., "
            f"or remove it: cat-code mcp remove {name})"
        )
    return code


def _reason(exc: ConfigError) -> str:
    """A fault in the entry at hand, without the file and server the reader knows already."""
    return exc.message if exc.server is not None else str(exc)


async def _connect_one(config: ServerConfig, roots: Roots) -> tuple[dict[str, Any], list[McpTool]]:
    """Connect one server through a pool of its own; (its status JSON, its tools)."""
    from cat_code.host.pool import McpPool
    from cat_code.host.run_records import reap_orphans
    from cat_code.host.shutdown import run_until_signal

    config = dataclasses.replace(
        config, startup_timeout_s=min(config.startup_timeout_s, TRY_TIMEOUT_S)
    )
    # Before the server starts: the groups a killed cat-code left are ended meanwhile.
    reap_orphans()
    pool = McpPool(
        McpConfig(servers=[config], files=[config.source], order=[config.name]), roots=roots
    )
    seen: dict[str, Any] = {}
    tools: list[McpTool] = []

    async def work() -> int:
        await pool.connect_all()
        seen.update(pool.status()[0].to_json())
        tools.extend(pool.tools(config.name))
        return EXIT_OK

    code = await run_until_signal(pool, work)
    if code != EXIT_OK:
        return {"state": "INTERRUPTED", "error": "interrupted", "exit": code}, []
    return seen, tools


# -- finding entries ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Place:
    scope: str
    path: Path


def _places(args: argparse.Namespace, scope: str | None = None) -> list[_Place]:
    """The files an existing entry may be in, lowest precedence first."""
    if scope is not None:
        if scope not in SCOPES:
            raise UsageError(f"--scope must be user or project, not {scope!r}")
        return [_Place(scope, scope_path(scope))]
    paths = getattr(args, "mcp_config", None)
    if paths:
        return [_Place("file", Path(p)) for p in paths]
    return [_Place(USER, scope_path(USER)), _Place(PROJECT, scope_path(PROJECT))]


def _holders(places: list[_Place], name: str) -> list[tuple[_Place, ConfigFile]]:
    """The places whose file defines ``name``.

    A file that cannot be read is refused (`ConfigEditError`) only when it may be the one
    to change: the only place looked in (``--scope``), or the name is in no other file.
    Otherwise it is skipped with a warning, so a broken user file does not block an edit
    of the project file.
    """
    found = []
    broken: list[ConfigEditError] = []
    for place in places:
        try:
            file = ConfigFile.read(place.path)
        except ConfigEditError as exc:
            if len(places) == 1:
                raise
            broken.append(exc)
            continue
        if name in file.servers:
            found.append((place, file))
    if broken and not found:
        raise broken[0]
    for skipped in broken:
        print_error(f"warning: {skipped.reason}; skipped it (it may define '{name}' too)")
    return found


def _in_effect(holders: list[tuple[_Place, ConfigFile]]) -> int:
    """Which holder's definition is used: the user's own when the project file shadows it
    (a project entry never takes a user server's name), else the last file read."""
    scopes = [place.scope for place, _ in holders]
    return scopes.index(USER) if USER in scopes and PROJECT in scopes else len(holders) - 1


def _not_found(name: str, places: list[_Place]) -> int:
    where = " or ".join(str(p.path) for p in places)
    print_error(f"no MCP server named {name!r} in {where}")
    return EXIT_FAILED


# -- remove -------------------------------------------------------------------------------


def _remove(args: argparse.Namespace) -> int:
    name: str = args.name
    places = _places(args, args.scope)
    with editing(*(p.path for p in places)):
        return _remove_locked(name, places)


def _remove_locked(name: str, places: list[_Place]) -> int:
    holders = _holders(places, name)
    if not holders:
        return _not_found(name, places)
    if len(holders) > 1:
        where = " and ".join(f"{p.path} ({p.scope})" for p, _ in holders)
        print_error(
            f"MCP server '{name}' is defined in {where}; "
            "say which to remove with --scope user or --scope project"
        )
        return EXIT_USAGE
    place, file = holders[0]
    file.remove_entry(name)
    file.write()
    print_line(f"Removed MCP server '{name}' from {place.path}")
    return EXIT_OK


# -- enable / disable ---------------------------------------------------------------------


def _set_disabled(args: argparse.Namespace, *, disabled: bool) -> int:
    name: str = args.name
    places = _places(args, getattr(args, "scope", None))
    with editing(*(p.path for p in places)):
        return _set_disabled_locked(name, places, disabled=disabled)


def _set_disabled_locked(name: str, places: list[_Place], *, disabled: bool) -> int:
    holders = _holders(places, name)
    if not holders:
        return _not_found(name, places)
    place, file = holders[_in_effect(holders)]  # the definition in effect
    word = "disabled" if disabled else "enabled"
    raw = file.servers[name]
    if not isinstance(raw, dict):
        print_error(f"{place.path}: the entry of '{name}' is not an object; fix it first")
        return EXIT_FAILED
    if raw.get("disabled", False) is disabled:
        print_line(f"MCP server '{name}' is already {word} ({place.path})")
        return EXIT_OK
    approved = _is_project_file(place.path) and (
        TrustStore().decision(place.path.parent, name, raw) is Decision.APPROVED
    )
    file.set_field(name, "disabled", disabled)
    file.write()
    if approved:  # the user's own edit of an entry they approved: still approved
        _approve_if_project(place.path, {name: file.servers[name]})
    print_line(f"{word.capitalize()} MCP server '{name}' in {place.path}")
    return EXIT_OK


# -- get ----------------------------------------------------------------------------------


def _get(args: argparse.Namespace) -> int:
    name: str = args.name
    places = _places(args)
    holders: list[tuple[_Place, ConfigFile]] = []
    for place in places:
        try:
            file = ConfigFile.read(place.path)
        except ConfigEditError:
            continue  # `load_config` below warns about it, in words for a reader
        if name in file.servers:
            holders.append((place, file))
    given = getattr(args, "mcp_config", None)
    config = load_config(
        [p.path for p in places] if given else None,
        trust_project=bool(getattr(args, "trust_project", False)),
    )
    for warning in config.warnings:
        print_error(f"warning: {warning}")
    if not holders:
        return _not_found(name, places)
    effect = _in_effect(holders)
    place, file = holders[effect]
    raw = file.servers[name]
    masked = mask_entry(raw) if isinstance(raw, dict) else raw
    entry = next((s for s in config.servers if s.name == name), None)
    broken = next((b for b in config.broken if b.name == name), None)
    waiting = next((w for w in config.waiting if w.name == name), None)
    status, tools = asyncio.run(_live(entry, broken, waiting, Roots(args.add_dir)))
    from cat_code.host.server import ServerState

    exit_code = status.pop("exit", None)
    if exit_code is not None and exit_code != EXIT_OK:
        return int(exit_code)
    state = ServerState(status["state"])
    if isinstance(raw, dict):
        target = masked_target(raw)
    else:
        target = mask_url(str(status.get("target") or ""))
    if args.json:
        print_line(safe_json({
            "name": name,
            "scope": place.scope,
            "file": str(place.path),
            "entry": masked,
            "transport": status.get("transport"),
            "target": target,
            "state": state,
            "error": status.get("error"),
            "protocolVersion": status.get("protocolVersion"),
            "tools": [{"name": t.name, "tool": t.tool_name, "description": t.description}
                      for t in tools],
            "stderrTail": status.get("stderrTail", []),
        }))  # fmt: skip
    else:
        print_line(_describe(name, place, masked, status, tools))
        for index, (other, _) in enumerate(holders):
            if index < effect:
                print_line(f"  (also defined in {other.path}, which this entry overrides)")
            elif index > effect:
                print_line(
                    f"  (also defined in {other.path}, which is not used: a project entry "
                    "never takes the name of your own server)"
                )
    fine = (ServerState.CONNECTED, ServerState.DISABLED, ServerState.REJECTED)
    return EXIT_OK if state in fine else EXIT_FAILED


async def _live(
    entry: ServerConfig | None,
    broken: BrokenServer | None,
    waiting: WaitingServer | None,
    roots: Roots,
) -> tuple[dict[str, Any], list[McpTool]]:
    from cat_code.host.server import ServerState

    if waiting is not None:  # never started before the user approves it
        state = ServerState.REJECTED if waiting.rejected else ServerState.NEEDS_APPROVAL
        return {"state": state, "error": waiting.hint, "transport": waiting.type,
                "target": waiting.target}, []  # fmt: skip
    if entry is None:
        error = broken.error if broken is not None else "not loaded"
        return {"state": ServerState.FAILED, "error": error, "transport": broken and broken.type,
                "target": broken.target if broken else ""}, []  # fmt: skip
    if entry.disabled:
        return {"state": ServerState.DISABLED, "error": None, "transport": entry.type,
                "target": entry.target}, []  # fmt: skip
    return await _connect_one(entry, roots)


def _describe(
    name: str, place: _Place, entry: Any, status: dict[str, Any], tools: list[McpTool]
) -> str:
    lines = [f"{name}", f"  scope:     {place.scope} ({place.path})"]
    if isinstance(entry, dict):
        kind = entry.get("type") or ("stdio" if "command" in entry else "http")
        lines.append(f"  type:      {kind}")
        if "command" in entry:
            raw_args = entry.get("args")
            args: list[Any] = raw_args if isinstance(raw_args, list) else []
            lines.append(
                f"  command:   {shown_command([str(a) for a in [entry['command'], *args]])}"
            )
        for key, value in entry.items():
            if key in ("type", "command", "args"):
                continue
            if key in ("env", "headers") and isinstance(value, dict):
                sep = "=" if key == "env" else ": "
                shown = ", ".join(f"{k}{sep}{v}" for k, v in value.items()) or "(none)"
            elif isinstance(value, str):
                shown = value
            else:
                shown = json.dumps(value, ensure_ascii=False)
            lines.append(f"  {(key + ':').ljust(10)} {shown}")
    from cat_code.host.server import ServerState

    state = ServerState(status["state"])
    if state is ServerState.CONNECTED:
        lines.append(f"  state:     CONNECTED, {len(tools)} tool(s)")
    elif status.get("error"):
        lines.append(f"  state:     {state} — {status['error']}")
    else:
        lines.append(f"  state:     {state}")
    for line in status.get("stderrTail", [])[-5:]:
        lines.append(f"    stderr: {line}")
    if tools:
        width = max(len(t.name) for t in tools)
        lines.append("  tools:")
        for tool in tools:
            summary = " ".join(tool.description.split())
            summary = summary[:79] + "…" if len(summary) > 80 else summary
            lines.append(f"    {tool.name.ljust(width)}  {summary}".rstrip())
    return "\n".join(lines)


# -- import -------------------------------------------------------------------------------


def _import(args: argparse.Namespace) -> int:
    sources = (args.source,) if args.source else SOURCES
    _, target = write_target(args, args.scope, "import")
    found = scan(sources)
    for warning in found.warnings:
        print_error(f"warning: {warning}")
    if not found.servers:
        print_line("No MCP servers found. Looked in:")
        for path in found.looked:
            print_line(f"  {path}")
        return EXIT_OK
    project = scope_path(PROJECT)
    with editing(target, project):
        return _import_locked(args, found.servers, target, project)


def _import_locked(
    args: argparse.Namespace, servers: list[FoundServer], target: Path, project: Path
) -> int:
    """Import ``servers`` into ``target``; those found in the project's own files
    (`FoundServer.local`) into ``project`` (./.mcp.json) instead, as project servers
    waiting for approval: a repository's servers never become the user's own."""
    files = {target: ConfigFile.read(target)}
    if any(s.local for s in servers) and not same_file(project, target):
        files[project] = ConfigFile.read(project)
    taken: dict[str, FoundServer] = {}
    written: dict[str, Path] = {}  # name -> the file it goes into
    outcomes: list[tuple[FoundServer, str]] = []
    dry = args.dry_run
    for server in servers:
        dest = project if server.local and project in files else target
        imported, outcome = _plan(server, files[dest], dest, taken, force=args.force, dry=dry)
        if imported and server.local:
            outcome += f" to {dest} (a project server: it waits for your approval)"
        outcomes.append((server, outcome))
        if imported and server.entry is not None:
            taken[server.name] = server
            written[server.name] = dest
            if not dry:
                files[dest].set_entry(server.name, server.entry)
    print_line(_describe_import(outcomes))
    local = [name for name, server in taken.items() if server.local]
    count = len(taken) - len(local)
    if dry:
        print_line(f"Dry run: {count} of {len(outcomes)} server(s) would be imported into "
               f"{target}; nothing was written.")  # fmt: skip
        if local:
            print_line(f"{len(local)} more from this folder's own files would go into {project} "
                       "as project servers waiting for approval.")  # fmt: skip
        return EXIT_OK
    for path in dict.fromkeys(written.values()):
        files[path].write()
    theirs = {name: found.entry for name, found in taken.items() if not found.local}
    _approve_if_project(target, theirs)  # only what came from the user's own files
    print_line(f"Imported {count} of {len(outcomes)} server(s) into {target}.")
    if local:
        names = " ".join(local)
        print_line(
            f"{len(local)} server(s) from this folder's own files ({', '.join(local)}) went "
            f"into {project} as project servers: nothing of them runs until you approve them. "
            f"Check each command (cat-code mcp list), then: cat-code mcp approve {names}"
        )
    return EXIT_OK


def _plan(
    server: FoundServer,
    file: ConfigFile,
    target: Path,
    taken: Mapping[str, FoundServer],
    *,
    force: bool,
    dry: bool,
) -> tuple[bool, str]:
    """What importing one found server does: whether it is taken, and the words for it
    (``added``, ``would add``, or ``skipped: why``)."""
    if server.entry is None:
        return False, f"skipped: {server.error or 'cannot be converted'}"
    if server.error is not None:
        return False, f"skipped: {server.error}"
    if same_file(server.file, target):
        return False, "skipped: already in cat-code's own config file"
    try:
        validate_entry(server.name, server.entry, server.file)
    except ConfigError as exc:
        return False, f"skipped: {_reason(exc)}"
    earlier = taken.get(server.name)
    if earlier is not None:
        return False, f"skipped: '{server.name}' was already taken from {earlier.file}"
    if server.name in file.servers:
        if not force:
            return (
                False,
                f"skipped: '{server.name}' already exists in {target} (--force replaces it)",
            )
        return True, "would replace the existing entry" if dry else "replaced the existing entry"
    return True, "would add" if dry else "added"


def _describe_import(outcomes: list[tuple[FoundServer, str]]) -> str:
    lines: list[str] = []
    width = max(len(s.name) for s, _ in outcomes)
    kind_width = max(len(s.transport) for s, _ in outcomes)
    current: tuple[str, Path] | None = None
    for server, outcome in outcomes:
        if (server.source, server.file) != current:
            current = (server.source, server.file)
            lines.append(f"From {server.source} ({server.file}):")
        target = masked_target(server.entry) if server.entry is not None else ""
        lines.append(f"  {server.name.ljust(width)}  {server.transport.ljust(kind_width)}  "
                     f"{target}  → {outcome}")  # fmt: skip
        lines.extend(f"      note: {note}" for note in server.notes)
    return "\n".join(lines)
