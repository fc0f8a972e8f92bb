"""What the config verbs (``mcp add | remove | get | enable | disable | import``) share:
the scopes and the file each writes to, the places an existing entry may be in, checking
an entry before it is written, and connecting one server alone to try it.

Scopes: ``user`` is ``$CAT_CODE_HOME/mcp.json``, ``project`` is ``./.mcp.json``, the
files `cat_code.host.config.load` reads, with its precedence (`in_effect`): a project
entry never takes the name of the user's own server.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cat_code.base.files import same_file
from cat_code.cli.output import EXIT_FAILED, EXIT_OK, print_error
from cat_code.host.config.edit import ConfigEditError, ConfigFile
from cat_code.host.config.load import (
    McpConfig,
    Scope,
    ServerConfig,
    in_effect as load_in_effect,
    parse_entry,
    scope_file,
)
from cat_code.host.config.masking import (
    VARIABLE,
)
from cat_code.host.config.trust import approve_written
from cat_code.mcp.errors import ConfigError
from cat_code.mcp.roots import Roots

if TYPE_CHECKING:
    from cat_code.host.mcp_tools.tool_adapter import McpTool


USER = "user"
PROJECT = "project"
SCOPES = (USER, PROJECT)

#: The longest ``add`` and ``get`` wait for a server to connect (its own startup timeout
#: if shorter): long enough for an ``npx`` download, short enough for a command line.
TRY_TIMEOUT_S = 30.0
#: What an unset ``${VAR}`` stands for while an entry is validated (a URL passes too).
_UNSET_STAND_IN = "https://unset.invalid"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]+$")
#: A word that is meant as a URL, whatever its scheme (``ftp://h``, ``ws://h``).
URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class UsageError(Exception):
    """The command line is wrong; the message says how."""


def scope_path(scope: str) -> Path:
    """The file a scope writes to."""
    return scope_file(Scope(scope))


def write_target(paths: Sequence[str], scope: str | None, verb: str) -> tuple[str, Path]:
    """The (scope, file) ``add`` or ``import`` writes to: the one ``--mcp-config`` file
    when given (``file``), else the scope's file (user by default)."""
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


def say_note(text: str) -> None:
    print_error(f"note: {text}")


def is_project_file(path: Path) -> bool:
    return same_file(path, scope_path(PROJECT))


def approve_if_project(path: Path, entries: Mapping[str, Any]) -> None:
    """Entries written for the user into this folder's project file are theirs: approved
    (`cat_code.host.config.trust`), so cat-code starts them without asking."""
    if is_project_file(path):
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


def config_reason(exc: ConfigError) -> str:
    """A fault in the entry at hand, without the file and server the reader knows already."""
    return exc.message if exc.server is not None else str(exc)


async def connect_one(config: ServerConfig, roots: Roots) -> tuple[dict[str, Any], list[McpTool]]:
    """Connect one server through a pool of its own; (its status JSON, its tools)."""
    from cat_code.host.servers.pool import McpPool
    from cat_code.host.servers.shutdown import run_until_signal
    from cat_code.host.state.run_records import reap_orphans

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
class Place:
    scope: str
    path: Path


def entry_places(paths: Sequence[str], scope: str | None = None) -> list[Place]:
    """The files an existing entry may be in, lowest precedence first."""
    if scope is not None:
        if scope not in SCOPES:
            raise UsageError(f"--scope must be user or project, not {scope!r}")
        return [Place(scope, scope_path(scope))]
    if paths:
        return [Place("file", Path(p)) for p in paths]
    return [Place(USER, scope_path(USER)), Place(PROJECT, scope_path(PROJECT))]


def holders_of(places: list[Place], name: str) -> list[tuple[Place, ConfigFile]]:
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


def in_effect(holders: list[tuple[Place, ConfigFile]]) -> int:
    """Which holder's definition is used, by the config's own precedence (a ``--mcp-config``
    file counts as the user's)."""
    scopes = [Scope.PROJECT if place.scope == PROJECT else Scope.USER for place, _ in holders]
    return load_in_effect(scopes)


def not_found(name: str, places: list[Place]) -> int:
    where = " or ".join(str(p.path) for p in places)
    print_error(f"no MCP server named {name!r} in {where}")
    return EXIT_FAILED


# -- remove -------------------------------------------------------------------------------
