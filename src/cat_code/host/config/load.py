"""Load ``mcp.json`` files into server entries (`entries` holds their types, `schema`
checks one entry; both are re-exported here, the config's front door).

Sources, lowest precedence first: ``$CAT_CODE_HOME/mcp.json`` (home defaults to
``~/.cat-code``), then ``.mcp.json`` in the working directory; a later file's entry
replaces an earlier one of the same name. ``--mcp-config PATH`` (repeatable) replaces
both with exactly the named files. Failures are contained: a missing file is silence, an
unparseable file is one warning (file, line, column) and contributes nothing, a bad
entry becomes a `BrokenServer` that fails only that server with a message naming the
field or variable at fault.

Trust: entries of ``./.mcp.json`` (read by default, not named with ``--mcp-config``) are
*project* entries, written by whoever made the repository. One the user has not approved
(`cat_code.host.config.trust`) is never parsed or ``${VAR}``-expanded: it becomes a
`WaitingServer` that status shows as NEEDS_APPROVAL (or REJECTED) and nothing starts. A
project entry named like one of the user's own is refused with a notice, so it can never
inherit the approvals or "always allow" rules the user gave their server of that name.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cat_code.base.files import JsonTooDeep, parse_json, read_bounded
from cat_code.host.config.entries import (
    DEFAULT_REQUEST_TIMEOUT_MS as DEFAULT_REQUEST_TIMEOUT_MS,
    DEFAULT_STARTUP_TIMEOUT_MS as DEFAULT_STARTUP_TIMEOUT_MS,
    BrokenServer as BrokenServer,
    HttpServerConfig as HttpServerConfig,
    McpConfig as McpConfig,
    Scope as Scope,
    ServerConfig as ServerConfig,
    StdioServerConfig as StdioServerConfig,
    WaitingServer as WaitingServer,
    approval_hint as approval_hint,
)
from cat_code.host.config.masking import (
    written_target,
)
from cat_code.host.config.names import clashing, tool_prefix
from cat_code.host.config.reach import entry_reach
from cat_code.host.config.schema import (
    _guess_type,
    parse_entry as parse_entry,
)
from cat_code.host.config.trust import APPROVALS_FILE, TrustDecision, TrustStore
from cat_code.host.state.home import cat_code_home
from cat_code.mcp.errors import ConfigError

logger = logging.getLogger(__name__)


def takes_name(earlier: Scope, later: Scope) -> bool:
    """Whether a later definition of a name replaces an earlier one (files are read lowest
    precedence first): it does, except that a project entry never takes the name of the
    user's own server."""
    return not (later is Scope.PROJECT and earlier is Scope.USER)


def in_effect(scopes: Sequence[Scope]) -> int:
    """Which of a name's definitions (their scopes, lowest precedence first) is used."""
    used = 0
    for index in range(1, len(scopes)):
        if takes_name(scopes[used], scopes[index]):
            used = index
    return used


def scope_file(scope: Scope, cwd: Path | None = None) -> Path:
    """The file of a scope: the user's ``$CAT_CODE_HOME/mcp.json``, the project's
    ``./.mcp.json`` (the default files, `default_config_paths`)."""
    user, project = default_config_paths(cwd)
    return user if scope is Scope.USER else project


def default_config_paths(
    cwd: Path | None = None, environ: Mapping[str, str] | None = None
) -> list[Path]:
    """The files read when no ``--mcp-config`` is given, lowest precedence first."""
    return [cat_code_home(environ) / "mcp.json", (cwd or Path.cwd()) / ".mcp.json"]


def load_config(
    paths: Sequence[Path] | None = None,
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    trust_project: bool = False,
    trust_store: TrustStore | None = None,
) -> McpConfig:
    """Read the config files (``paths``, else the defaults) into one `McpConfig`.

    With the defaults, ``./.mcp.json``'s entries are project entries: each needs the
    user's approval (``trust_store``), unless ``trust_project`` trusts them for this run."""
    env = os.environ if environ is None else environ
    files = list(paths) if paths is not None else default_config_paths(cwd, env)
    #: The project file: the last default one; never a file the user named.
    project = files[-1] if paths is None else None
    store = trust_store or TrustStore(cat_code_home(env) / APPROVALS_FILE)
    entries: dict[str, ServerConfig | BrokenServer | WaitingServer] = {}
    warnings: list[str] = []
    notices: list[str] = []
    unreadable: list[Path] = []
    for path in files:
        raw_servers = _read_file(path, warnings)
        if raw_servers is None:
            unreadable.append(path)
            continue
        scope = Scope.PROJECT if path is project else Scope.USER
        users = list(entries)  # the project file comes last: what is read so far is the user's
        # The approvals file read once per project file, not once per entry.
        decided = (
            store.decisions(path.parent) if scope is Scope.PROJECT and not trust_project else None
        )
        for name, raw in raw_servers.items():
            if scope is Scope.PROJECT:
                mine = entries.get(name)
                # Every entry read before the project file is the user's own.
                if mine is not None and not takes_name(Scope.USER, scope):
                    notices.append(
                        f"{path}: project server '{name}' is not used: it has the name of your "
                        f"own server in {mine.source}, which stays (rename it in {path} to use it)"
                    )
                    continue
                alike = clashing(name, users)
                if alike is not None:  # echo.srv beside echo_srv: one name to every rule
                    notices.append(
                        f"{path}: project server '{name}' is not used: its tools would be named "
                        f"like those of your own server '{alike}' ({tool_prefix(alike)}…) in "
                        f"{entries[alike].source}, which stays (rename it in {path} to use it)"
                    )
                    continue
                decision = None if decided is None else decided(name, raw)
                if decided is not None and decision is not TrustDecision.APPROVED:
                    entries[name] = WaitingServer(
                        name=name,
                        source=path,
                        type=_guess_type(raw),
                        target=written_target(raw),
                        rejected=decision is TrustDecision.REJECTED,
                        reach=entry_reach(raw),
                    )
                    continue
            # Re-inserting moves the entry to the end: the winner keeps a stable order.
            entries.pop(name, None)
            try:
                parsed = parse_entry(name, raw, source=path, environ=env)
                entries[name] = dataclasses.replace(parsed, scope=scope)
            except ConfigError as exc:
                entries[name] = BrokenServer(
                    name=name,
                    source=path,
                    error=str(exc),
                    type=_guess_type(raw),
                    target=written_target(raw),
                )
    config = McpConfig(
        warnings=warnings,
        files=files,
        order=list(entries),
        unreadable=unreadable,
        notices=notices,
    )
    for entry in entries.values():
        if isinstance(entry, BrokenServer):
            config.broken.append(entry)
        elif isinstance(entry, WaitingServer):
            config.waiting.append(entry)
        else:
            config.servers.append(entry)
    return config


def _read_file(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    """A file's ``mcpServers`` ({} when missing or empty); None, with a warning, when the
    file exists but cannot be used."""
    try:
        # utf-8-sig: JSON parsers may ignore a byte order mark (RFC 8259), editors add one.
        text = read_bounded(path).decode("utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        warnings.append(f"{path}: cannot read MCP config: {reason}; ignoring it")
        return None
    if not text.strip():
        return {}
    try:
        data = parse_json(text)
    except JsonTooDeep as exc:
        warnings.append(f"{path}: not an MCP config ({exc}); no servers loaded from it")
        return None
    except json.JSONDecodeError as exc:
        warnings.append(
            f"{path}:{exc.lineno}:{exc.colno}: invalid JSON in MCP config ({exc.msg}); "
            "no servers loaded from it"
        )
        return None
    if not isinstance(data, dict):
        warnings.append(f"{path}: MCP config must be a JSON object; no servers loaded from it")
        return None
    if "mcpServers" not in data and "servers" in data:
        # VS Code's mcp.json shape: easy to copy, silently empty without this.
        warnings.append(
            f'{path}: servers go under "mcpServers", not "servers" (VS Code\'s format); '
            "no servers loaded from it"
        )
        return None
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        warnings.append(f"{path}: 'mcpServers' must be an object; no servers loaded from it")
        return None
    return servers


def only_servers(config: McpConfig, names: list[str] | None) -> McpConfig:
    if names is None:
        return config
    # replace(): every other field (warnings, files, notices, ...) carried over as it is.
    return dataclasses.replace(
        config,
        servers=[s for s in config.servers if s.name in names],
        broken=[b for b in config.broken if b.name in names],
        order=[n for n in config.order if n in names],
        waiting=[w for w in config.waiting if w.name in names],
    )


def missing_files(paths: Sequence[Path] | None) -> list[str]:
    """What to say of each given config file that does not exist."""
    return [f"{p}: MCP config file not found" for p in paths or () if not p.exists()]


def load_run_config(paths: Sequence[Path] | None, *, trust_project: bool = False) -> McpConfig:
    """The config of one run: the given files (``--mcp-config``; None: the default ones),
    warnings, notices and missing files logged; ``trust_project`` trusts the project's
    servers for this run."""
    config = load_config(list(paths) if paths is not None else None, trust_project=trust_project)
    for warning in [*config.warnings, *config.notices, *missing_files(paths)]:
        logger.warning("%s", warning)
    return config
