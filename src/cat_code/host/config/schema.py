"""One ``mcpServers`` entry, checked field by field: `parse_entry`.

Every field has one reader here (`_KNOWN_FIELDS`, `_OAUTH_FIELDS`); a wrong type, an
unknown transport or an unset ``${VAR}`` without a default is a `ConfigError` that names
the file, the server and the field at fault, and fails only that server. Values are
expanded here and nowhere else; what is shown of them is masked (`masking`).
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cat_code.base.files import read_bounded
from cat_code.host.config.entries import (
    _KNOWN_FIELDS,
    DEFAULT_REQUEST_TIMEOUT_MS,
    DEFAULT_STARTUP_TIMEOUT_MS,
    TRANSPORT_TYPES,
    HttpServerConfig,
    ServerConfig,
    StdioServerConfig,
)
from cat_code.host.config.masking import (
    VARIABLE,
    mask_url,
    written_target,
    written_word,
)
from cat_code.mcp.errors import ConfigError
from cat_code.mcp.versions import PROTOCOL_VERSIONS

logger = logging.getLogger(__name__)

if TYPE_CHECKING:  # imported when an entry has an ``oauth`` block: stdio runs never load it
    from cat_code.mcp.auth.types import GrantType, OAuthSettings


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
