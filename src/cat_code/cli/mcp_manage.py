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

import asyncio
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cat_code.base.files import same_file
from cat_code.base.safe_text import safe_json
from cat_code.cli.mcp_add import run_add
from cat_code.cli.mcp_entries import (
    PROJECT,
    Place,
    UsageError,
    approve_if_project,
    config_reason,
    connect_one,
    entry_places,
    holders_of,
    in_effect,
    is_project_file,
    not_found,
    scope_path,
    validate_entry,
    write_target,
)
from cat_code.cli.options import Options
from cat_code.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_error, print_line
from cat_code.host.config.edit import ConfigEditError, ConfigFile, editing
from cat_code.host.config.imports import SOURCES, FoundServer, scan
from cat_code.host.config.load import (
    BrokenServer,
    ServerConfig,
    WaitingServer,
    load_config,
)
from cat_code.host.config.masking import (
    mask_entry,
    mask_url,
    masked_target,
    shown_command,
)
from cat_code.host.config.trust import TrustDecision, TrustStore
from cat_code.mcp.errors import ConfigError
from cat_code.mcp.roots import Roots

if TYPE_CHECKING:
    from cat_code.host.mcp_tools.tool_adapter import McpTool


def run_manage_command(verb: str, args: Options) -> int:
    """Run the config verb ``verb`` (its parser is in `cat_code.cli.verbs.mcp_config`);
    the exit code, a usage error or a refused change said on stderr."""
    runs: dict[str, Callable[[Options], int]] = {
        "add": run_add,
        "remove": _remove,
        "get": _get,
        "enable": lambda options: _set_disabled(options, disabled=False),
        "disable": lambda options: _set_disabled(options, disabled=True),
        "import": _import,
    }
    try:
        return runs[verb](args)
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


def _remove(args: Options) -> int:
    name = args.name or ""
    places = entry_places(args.mcp_config, args.scope)
    with editing(*(p.path for p in places)):
        return _remove_locked(name, places)


def _remove_locked(name: str, places: list[Place]) -> int:
    holders = holders_of(places, name)
    if not holders:
        return not_found(name, places)
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


def _set_disabled(args: Options, *, disabled: bool) -> int:
    name = args.name or ""
    places = entry_places(args.mcp_config, args.scope)
    with editing(*(p.path for p in places)):
        return _set_disabled_locked(name, places, disabled=disabled)


def _set_disabled_locked(name: str, places: list[Place], *, disabled: bool) -> int:
    holders = holders_of(places, name)
    if not holders:
        return not_found(name, places)
    place, file = holders[in_effect(holders)]  # the definition in effect
    word = "disabled" if disabled else "enabled"
    raw = file.servers[name]
    if not isinstance(raw, dict):
        print_error(f"{place.path}: the entry of '{name}' is not an object; fix it first")
        return EXIT_FAILED
    if raw.get("disabled", False) is disabled:
        print_line(f"MCP server '{name}' is already {word} ({place.path})")
        return EXIT_OK
    approved = is_project_file(place.path) and (
        TrustStore().decision(place.path.parent, name, raw) is TrustDecision.APPROVED
    )
    file.set_field(name, "disabled", disabled)
    file.write()
    if approved:  # the user's own edit of an entry they approved: still approved
        approve_if_project(place.path, {name: file.servers[name]})
    print_line(f"{word.capitalize()} MCP server '{name}' in {place.path}")
    return EXIT_OK


# -- get ----------------------------------------------------------------------------------


def _get(args: Options) -> int:
    name = args.name or ""
    places = entry_places(args.mcp_config)
    holders: list[tuple[Place, ConfigFile]] = []
    for place in places:
        try:
            file = ConfigFile.read(place.path)
        except ConfigEditError:
            continue  # `load_config` below warns about it, in words for a reader
        if name in file.servers:
            holders.append((place, file))
    config = load_config(
        [p.path for p in places] if args.mcp_config else None, trust_project=args.trust_project
    )
    for warning in config.warnings:
        print_error(f"warning: {warning}")
    if not holders:
        return not_found(name, places)
    effect = in_effect(holders)
    place, file = holders[effect]
    raw = file.servers[name]
    masked = mask_entry(raw) if isinstance(raw, dict) else raw
    entry = next((s for s in config.servers if s.name == name), None)
    broken = next((b for b in config.broken if b.name == name), None)
    waiting = next((w for w in config.waiting if w.name == name), None)
    status, tools = asyncio.run(_live(entry, broken, waiting, Roots(args.add_dir)))
    from cat_code.host.servers.server import ServerState

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
    from cat_code.host.servers.server import ServerState

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
    return await connect_one(entry, roots)


def _describe(
    name: str, place: Place, entry: Any, status: dict[str, Any], tools: list[McpTool]
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
    from cat_code.host.servers.server import ServerState

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


def _import(args: Options) -> int:
    sources = (args.source,) if args.source else SOURCES
    _, target = write_target(args.mcp_config, args.scope, "import")
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


def _import_locked(args: Options, servers: list[FoundServer], target: Path, project: Path) -> int:
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
    approve_if_project(target, theirs)  # only what came from the user's own files
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
        return False, f"skipped: {config_reason(exc)}"
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
