"""Load ``mcp.json`` files into server entries.

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
import enum
import json
import logging
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from cat_code.base.files import JsonTooDeep, parse_json, read_bounded
from cat_code.host.config.masking import (
    VARIABLE,
    mask_url,
    shown_command,
    written_target,
    written_word,
)
from cat_code.host.config.names import clashing, tool_prefix
from cat_code.host.config.reach import entry_reach
from cat_code.host.config.trust import APPROVALS_FILE, TrustDecision, TrustStore
from cat_code.host.state.home import cat_code_home
from cat_code.mcp.errors import ConfigError
from cat_code.mcp.versions import PROTOCOL_VERSIONS

if TYPE_CHECKING:  # imported when an entry has an ``oauth`` block: stdio runs never load it
    from cat_code.mcp.auth.types import GrantType, OAuthSettings

TRANSPORT_TYPES: tuple[str, ...] = ("stdio", "http", "sse")
DEFAULT_REQUEST_TIMEOUT_MS = 30_000
DEFAULT_STARTUP_TIMEOUT_MS = 30_000

_KNOWN_FIELDS = frozenset(
    {
        "type",
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "requestTimeoutMs",
        "startupTimeoutMs",
        "disabled",
        "oauth",
        "protocolVersion",
        "includeTools",
        "excludeTools",
        "toolTimeoutMs",
        "maxOutputTokens",
        "alwaysLoad",
        # Accepted for compatibility with other hosts' files; not used by cat-code.
        "description",
        "alwaysAllow",
        "autoApprove",
        "timeout",
    }
)
logger = logging.getLogger(__name__)


class Scope(enum.StrEnum):
    """Whose an entry is: the user's own files, or the project's ``./.mcp.json``."""

    USER = "user"
    PROJECT = "project"


@dataclass(frozen=True, slots=True, kw_only=True)
class _ServerEntry:
    """What every valid server entry has, whatever its transport; variables expanded."""

    name: str
    source: Path
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_MS / 1000
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_MS / 1000
    disabled: bool = False
    #: A protocol version the server is known to speak: no era probe (None: detect).
    protocol_version: str | None = None
    #: Names or globs of the server's own tool names to register (None: all of them).
    include_tools: tuple[str, ...] | None = None
    #: Names or globs of the server's own tool names never to register.
    exclude_tools: tuple[str, ...] = ()
    #: Time limit of a ``tools/call`` (None: ``request_timeout_s``).
    tool_timeout_s: float | None = None
    #: A tool result longer than this many tokens (≈ characters / 4) is saved to a file
    #: and shortened for the model (None: ``CAT_CODE_MAX_MCP_OUTPUT_TOKENS`` or the default).
    max_output_tokens: int | None = None
    #: The server's tool definitions are always sent to the model, even under tool search.
    always_load: bool = False
    #: The command line or URL as written, before ``${VAR}`` expansion: what status shows,
    #: so a secret passed through a variable never reaches a terminal or a log.
    display_target: str = ""
    #: USER for the user's own files; PROJECT for an approved ``./.mcp.json`` entry.
    scope: Scope = Scope.USER

    @property
    def target(self) -> str:
        """Where the server is, as the user wrote it (never header values or expanded secrets)."""
        return self.display_target or self._expanded_target()

    def _expanded_target(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, slots=True, kw_only=True)
class StdioServerConfig(_ServerEntry):
    """A server cat-code starts as a child process and talks to over stdin and stdout."""

    type: Literal["stdio"] = "stdio"
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    #: The program and the working directory as written, for errors (like ``display_target``).
    display_command: str = ""
    display_cwd: str = ""

    def _expanded_target(self) -> str:
        return shown_command([self.command, *self.args])


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpServerConfig(_ServerEntry):
    """A server at a URL: Streamable HTTP (``http``) or the legacy HTTP+SSE transport."""

    type: Literal["http", "sse"] = "http"
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    #: No ``type`` was given, so Streamable HTTP may fall back to legacy SSE (``http`` only).
    legacy_fallback: bool = False
    #: The entry's ``oauth`` block (None: none given; sign-in still works with defaults).
    oauth: OAuthSettings | None = None

    @property
    def has_own_authorization(self) -> bool:
        """The entry sends its own credentials — an ``Authorization`` header, or a
        ``user:password@`` in its URL (sent as Basic): cat-code never starts OAuth."""
        if any(key.lower() == "authorization" for key in self.headers):
            return True
        netloc = urlsplit(self.url).netloc
        return "@" in netloc

    def _expanded_target(self) -> str:
        return self.url


#: One valid server entry; the class says which transport, and carries only its fields.
ServerConfig = StdioServerConfig | HttpServerConfig


@dataclass(frozen=True, slots=True)
class BrokenServer:
    """An entry that could not be understood; it fails with ``error`` and nothing else."""

    name: str
    source: Path
    error: str
    type: str = "?"
    target: str = ""


def approval_hint(name: str, *, rejected: bool = False, in_repl: bool = False) -> str:
    """What a NEEDS_APPROVAL (or ``rejected``: REJECTED) server's status says to do; ``in_repl``
    names the slash command, not the shell's."""
    command = f"/mcp approve {name}" if in_repl else f"cat-code mcp approve {name}"
    return f"rejected; {command} runs it" if rejected else f"run: {command}"


@dataclass(frozen=True, slots=True)
class WaitingServer:
    """A project entry without the user's approval: never parsed, expanded or started.

    ``target`` is the command line or URL as written, masked; ``rejected``: the user said
    no (`cat-code mcp reject`), rather than not yet."""

    name: str
    source: Path
    type: str
    target: str
    rejected: bool = False
    #: The variables it would expand and the files it would read, by name (`entry_reach`).
    reach: str = ""

    @property
    def hint(self) -> str:
        """What status shows after the target."""
        return approval_hint(self.name, rejected=self.rejected)


@dataclass(slots=True)
class McpConfig:
    """Everything the config files said: good servers, broken ones, and file-level warnings."""

    servers: list[ServerConfig] = field(default_factory=list)
    broken: list[BrokenServer] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The files read (or looked for), lowest precedence first: where to add servers.
    files: list[Path] = field(default_factory=list)
    #: Every server name, good or broken, in the order the files give them.
    order: list[str] = field(default_factory=list)
    #: The files that exist but gave no servers because they could not be used (each has
    #: its warning): "none configured" would be untrue while one of them is broken.
    unreadable: list[Path] = field(default_factory=list)
    #: Project entries put aside until the user approves them, in file order.
    waiting: list[WaitingServer] = field(default_factory=list)
    #: Project entries refused for sharing a name with one of the user's (one line each).
    notices: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return (
            [s.name for s in self.servers]
            + [b.name for b in self.broken]
            + [w.name for w in self.waiting]
        )

    @property
    def needs_approval(self) -> list[WaitingServer]:
        """The project entries waiting for a yes or no (not the rejected ones)."""
        return [w for w in self.waiting if not w.rejected]


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


@dataclass(frozen=True, slots=True)
class _Where:
    """The entry being parsed: what its errors and warnings name."""

    source: Path
    name: str

    def __str__(self) -> str:
        return f"{self.source}: server '{self.name}'"

    def error(self, message: str, *, field: str | None = None) -> ConfigError:
        return ConfigError(message, file=self.source, server=self.name, field=field)


def parse_entry(
    name: str, raw: Any, *, source: Path, environ: Mapping[str, str] | None = None
) -> ServerConfig:
    """Validate and expand one ``mcpServers`` entry; raise `ConfigError` naming the fault."""
    env = os.environ if environ is None else environ
    where = _Where(source, name)
    if not isinstance(raw, dict):
        raise where.error(f"entry must be an object, not {_json_type(raw)}")
    if not name:
        raise ConfigError("a server has an empty name", file=source)

    def get_str(key: str) -> str | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise where.error(f"'{key}' must be a string, not {_json_type(value)}", field=f"{key}")
        return _expand(value, env, where, key)

    def get_map(key: str) -> dict[str, str]:
        value = raw.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise where.error(f"'{key}' must be an object, not {_json_type(value)}", field=f"{key}")
        out: dict[str, str] = {}
        for k, v in value.items():
            if isinstance(v, bool) or not isinstance(v, str | int | float):
                raise where.error(
                    f"'{key}.{k}' must be a string, not {_json_type(v)}", field=f"{key}.{k}"
                )
            out[k] = _expand(str(v), env, where, f"{key}.{k}")
        return out

    def get_ms(key: str, default: int) -> float:
        value = raw.get(key, default)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 < value < math.inf  # also refuses NaN, which json reads too
        ):
            raise where.error(f"'{key}' must be a positive number of milliseconds", field=f"{key}")
        return float(value) / 1000

    unknown = sorted(set(raw) - _KNOWN_FIELDS)
    if unknown:
        logger.warning("%s: ignoring unknown field(s) %s", where, ", ".join(unknown))

    declared = raw.get("type")
    command = get_str("command")
    url = get_str("url")
    if declared is None:
        if command is not None:
            kind = "stdio"
        elif url is not None:
            kind = "http"
        else:
            raise where.error("needs either 'command' (stdio) or 'url' (http)")
    elif not isinstance(declared, str):
        raise where.error(f"'type' must be a string, not {_json_type(declared)}", field="type")
    else:
        kind = "http" if declared in ("streamable-http", "streamableHttp") else declared
        if kind not in TRANSPORT_TYPES:
            raise where.error(
                f"unknown 'type' {declared!r} (expected stdio, http or sse)", field="type"
            )
    if kind == "stdio" and not command:
        raise where.error("type stdio needs a 'command'", field="command")
    if kind in ("http", "sse"):
        if not url:
            raise where.error(f"type {kind} needs a 'url'", field="url")
        if not url.startswith(("http://", "https://")):
            # Quoted as written, masked: the expanded value may hold a ``${KEY}``'s secret.
            written = mask_url(str(raw.get("url")))
            raise where.error(
                f"'url' must start with http:// or https://, got {written!r}", field="url"
            )

    raw_args = raw.get("args")
    if raw_args is None:  # like every other optional field, null means absent
        raw_args = []
    if not isinstance(raw_args, list):
        raise where.error(
            f"'args' must be an array of strings, not {_json_type(raw_args)}", field="args"
        )
    args: list[str] = []
    for i, arg in enumerate(raw_args):
        if isinstance(arg, bool) or not isinstance(arg, str | int | float):
            raise where.error(
                f"'args[{i}]' must be a string, not {_json_type(arg)}", field=f"args[{i}]"
            )
        args.append(_expand(str(arg), env, where, f"args[{i}]"))

    disabled = raw.get("disabled", False)
    if not isinstance(disabled, bool):
        raise where.error("'disabled' must be true or false", field="disabled")
    always_load = raw.get("alwaysLoad", False)
    if not isinstance(always_load, bool):
        raise where.error("'alwaysLoad' must be true or false", field="alwaysLoad")

    def get_names(key: str) -> tuple[str, ...] | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise where.error(
                f"'{key}' must be an array of tool names or globs, not {_json_type(value)}",
                field=key,
            )
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item:
                got = _json_type(item) if item != "" else "an empty string"
                raise where.error(
                    f"'{key}[{i}]' must be a non-empty string, not {got}", field=f"{key}[{i}]"
                )
        return tuple(value)

    include_tools = get_names("includeTools")
    exclude_tools = get_names("excludeTools") or ()
    max_output = raw.get("maxOutputTokens")
    if max_output is not None and (
        isinstance(max_output, bool) or not isinstance(max_output, int) or max_output <= 0
    ):
        raise where.error(
            "'maxOutputTokens' must be a positive whole number", field="maxOutputTokens"
        )

    # Every field is checked whatever the transport, in this order, as it always was: an
    # entry that names an unusable field fails even if its transport would not use it.
    env_vars = get_map("env")
    cwd = get_str("cwd")
    headers = get_map("headers")
    request_timeout_s = get_ms("requestTimeoutMs", DEFAULT_REQUEST_TIMEOUT_MS)
    startup_timeout_s = get_ms("startupTimeoutMs", DEFAULT_STARTUP_TIMEOUT_MS)
    tool_timeout_s = get_ms("toolTimeoutMs", 1) if "toolTimeoutMs" in raw else None
    common: dict[str, Any] = {
        "include_tools": include_tools,
        "exclude_tools": exclude_tools,
        "tool_timeout_s": tool_timeout_s,
        "max_output_tokens": max_output,
        "always_load": always_load,
    }
    oauth = _parse_oauth(raw.get("oauth"), env, where, cwd=Path.cwd())
    protocol_version = get_str("protocolVersion")
    if protocol_version is not None and protocol_version not in PROTOCOL_VERSIONS:
        raise where.error(
            f"unknown 'protocolVersion' {protocol_version!r} "
            f"(expected one of {', '.join(PROTOCOL_VERSIONS)})",
            field="protocolVersion",
        )
    if kind == "stdio":
        assert command  # checked above; tells the type checker too
        if oauth is not None:
            logger.warning("%s: 'oauth' applies only to http and sse servers; ignoring it", where)
        return StdioServerConfig(
            name=name,
            source=source,
            command=command,
            args=tuple(args),
            env=env_vars,
            cwd=cwd,
            request_timeout_s=request_timeout_s,
            startup_timeout_s=startup_timeout_s,
            disabled=disabled,
            protocol_version=protocol_version,
            display_target=written_target(raw),
            display_command=written_word(raw["command"]),
            display_cwd=written_word(raw["cwd"]) if cwd is not None else "",
            **common,
        )
    assert url  # checked above
    return HttpServerConfig(
        name=name,
        source=source,
        type="sse" if kind == "sse" else "http",
        url=url,
        headers=headers,
        legacy_fallback=declared is None,
        oauth=oauth,
        request_timeout_s=request_timeout_s,
        startup_timeout_s=startup_timeout_s,
        disabled=disabled,
        protocol_version=protocol_version,
        display_target=written_target({"url": raw.get("url")}),
        **common,
    )


_OAUTH_FIELDS = frozenset(
    {
        "clientId",
        "clientSecret",
        "clientMetadataUrl",
        "callbackPort",
        "grantType",
        "privateKeyFile",
        "signingAlgorithm",
        "assertion",
        "assertionFile",
    }
)
_JWT_BEARER_URN = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: ``grantType`` as written -> the grant (``jwt_bearer`` may be given by its URN).
_GRANT_TYPES: dict[str, GrantType] = {
    "authorization_code": "authorization_code",
    "client_credentials": "client_credentials",
    "jwt_bearer": "jwt_bearer",
    _JWT_BEARER_URN: "jwt_bearer",
}


def _parse_oauth(
    raw: Any, environ: Mapping[str, str], where: _Where, *, cwd: Path
) -> OAuthSettings | None:
    """An entry's ``oauth`` block; `ConfigError` naming the ``oauth.<field>`` at fault."""
    if raw is None:
        return None
    from cat_code.mcp.auth.types import OAuthSettings

    if not isinstance(raw, dict):
        raise where.error(f"'oauth' must be an object, not {_json_type(raw)}", field="oauth")
    unknown = sorted(set(raw) - _OAUTH_FIELDS)
    if unknown:
        logger.warning("%s: ignoring unknown field(s) %s in 'oauth'", where, ", ".join(unknown))

    def get_str(key: str) -> str | None:
        value = raw.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise where.error(
                f"'oauth.{key}' must be a string, not {_json_type(value)}", field=f"oauth.{key}"
            )
        return _expand(value, environ, where, f"oauth.{key}") or None

    port = raw.get("callbackPort")
    if port is not None and (
        isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536
    ):
        raise where.error(
            "'oauth.callbackPort' must be a port number (1-65535)", field="oauth.callbackPort"
        )
    grant_name = get_str("grantType") or "authorization_code"
    grant = _GRANT_TYPES.get(grant_name)
    if grant is None:
        raise where.error(
            "'oauth.grantType' must be authorization_code, client_credentials or jwt_bearer, "
            f"not {grant_name!r}",
            field="oauth.grantType",
        )
    metadata_url = get_str("clientMetadataUrl")
    if metadata_url is not None and not metadata_url.startswith("https://"):
        raise where.error(
            "'oauth.clientMetadataUrl' must be an https:// URL", field="oauth.clientMetadataUrl"
        )
    key_pem = None
    key_file = get_str("privateKeyFile")
    if key_file is not None:
        key_path = cwd / Path(key_file).expanduser()
        try:
            key_pem = read_bounded(key_path).decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise where.error(
                f"'oauth.privateKeyFile': cannot read {key_file}: {reason}",
                field="oauth.privateKeyFile",
            ) from None
        if "-----BEGIN" not in key_pem:
            raise where.error(
                f"'oauth.privateKeyFile': {key_file} is not a PEM key", field="oauth.privateKeyFile"
            )
    client_id = get_str("clientId")
    client_secret = get_str("clientSecret")
    if grant == "client_credentials" and (client_id is None or not (client_secret or key_pem)):
        raise where.error(
            "'oauth.grantType' client_credentials needs 'oauth.clientId' and "
            "'oauth.clientSecret' or 'oauth.privateKeyFile'",
            field="oauth.grantType",
        )
    assertion = get_str("assertion")
    assertion_file = get_str("assertionFile")
    if assertion_file is not None:
        # Read at every sign-in, not now: platforms rotate workload tokens.
        assertion_file = str(cwd / Path(assertion_file).expanduser())
    if grant == "jwt_bearer" and (assertion is None) == (assertion_file is None):
        raise where.error(
            "'oauth.grantType' jwt_bearer needs one of 'oauth.assertionFile' and "
            "'oauth.assertion' (the workload's token)",
            field="oauth.grantType",
        )
    return OAuthSettings(
        client_id=client_id,
        client_secret=client_secret,
        client_metadata_url=metadata_url,
        callback_port=port,
        grant_type=grant,
        private_key_pem=key_pem,
        signing_algorithm=get_str("signingAlgorithm"),
        assertion=assertion,
        assertion_file=assertion_file,
    )


def _expand(value: str, environ: Mapping[str, str], where: _Where, key: str) -> str:
    def replace(match: re.Match[str]) -> str:
        var, default = match.group(1), match.group(2)
        found = environ.get(var)
        if found is not None and (found != "" or default is None):
            return found
        if default is not None:
            return default
        raise where.error(f"'{key}' uses ${{{var}}}, which is not set (and has no default)")

    return VARIABLE.sub(replace, value) if "${" in value else value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _guess_type(raw: Any) -> str:
    if not isinstance(raw, dict):
        return "?"
    declared = raw.get("type")
    if isinstance(declared, str):
        return declared
    if "command" in raw:
        return "stdio"
    if "url" in raw:
        return "http"
    return "?"


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
