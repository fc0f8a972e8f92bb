"""Loading ``mcp.json`` files: missing, broken, bad entries, ``${VAR}`` expansion, precedence."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from cat_code.host.config.load import (
    DEFAULT_REQUEST_TIMEOUT_MS,
    DEFAULT_STARTUP_TIMEOUT_MS,
    HttpServerConfig,
    McpConfig,
    Scope,
    ServerConfig,
    StdioServerConfig,
    default_config_paths,
    load_config,
)
from cat_code.host.config.trust import TrustDecision, TrustStore
from cat_code.host.state.home import cat_code_home


def write(path: Path, servers: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def only(config: McpConfig) -> ServerConfig:
    assert not config.broken and not config.warnings, (config.broken, config.warnings)
    assert len(config.servers) == 1
    return config.servers[0]


def load_one(tmp_path: Path, entry: Any, environ: dict[str, str] | None = None) -> McpConfig:
    path = write(tmp_path / "mcp.json", {"s": entry})
    return load_config([path], environ=environ if environ is not None else {})


# -- files -------------------------------------------------------------------------------


def test_a_missing_file_means_no_servers_and_no_warning(tmp_path: Path) -> None:
    config = load_config([tmp_path / "nope.json"])
    assert config.servers == [] and config.broken == [] and config.warnings == []


def test_no_config_files_at_all_means_no_servers(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path)  # CAT_CODE_HOME is an empty temporary folder
    assert config.servers == [] and config.broken == [] and config.warnings == []


def test_an_empty_file_means_no_servers_and_no_warning(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text("\n")
    config = load_config([tmp_path / "mcp.json"])
    assert config.servers == [] and config.warnings == []


def test_an_unparseable_file_gives_one_warning_naming_file_line_and_column(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}\n')
    good = write(tmp_path / "good.json", {"b": {"command": "y"}})

    config = load_config([broken, good])

    assert [s.name for s in config.servers] == ["b"]  # the other file still loads
    assert config.broken == []
    assert len(config.warnings) == 1
    warning = config.warnings[0]
    assert warning.startswith(f"{broken}:3:")
    line, column = warning.removeprefix(f"{broken}:").split(":")[:2]
    assert (int(line), int(column)) == (3, 26)  # the "}" after the trailing comma


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('["not", "an", "object"]', "must be a JSON object"),
        ('{"mcpServers": ["a"]}', "'mcpServers' must be an object"),
    ],
)
def test_a_file_of_the_wrong_shape_gives_one_warning_and_no_servers(
    tmp_path: Path, text: str, fragment: str
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(text)
    config = load_config([path])
    assert config.servers == [] and config.broken == []
    assert len(config.warnings) == 1
    assert str(path) in config.warnings[0] and fragment in config.warnings[0]


def test_a_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"mcpServers": {"s": {"command": "x"}}}).encode())
    assert only(load_config([path])).command == "x"


def test_a_file_without_mcp_servers_has_no_servers(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"other": 1}')
    config = load_config([path])
    assert config.servers == [] and config.warnings == []


def test_a_file_in_vs_codes_servers_shape_gives_a_warning_naming_mcp_servers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers": {"echo": {"command": "python3"}}}))
    config = load_config([path])
    assert config.servers == [] and config.broken == []
    assert len(config.warnings) == 1
    assert str(path) in config.warnings[0] and '"mcpServers", not "servers"' in config.warnings[0]


# -- bad entries -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        ({}, "needs either 'command' (stdio) or 'url' (http)"),
        ({"args": ["x"]}, "needs either 'command'"),
        ("python3 server.py", "entry must be an object"),
        ({"command": 5}, "'command' must be a string"),
        ({"command": ["python3"]}, "'command' must be a string"),
        ({"command": "x", "args": "a b"}, "'args' must be an array of strings"),
        ({"command": "x", "args": ["ok", {"no": 1}]}, "'args[1]'"),
        ({"command": "x", "env": ["A=1"]}, "'env' must be an object"),
        ({"command": "x", "env": {"A": None}}, "'env.A' must be a string"),
        ({"command": "x", "env": {"A": True}}, "'env.A' must be a string"),
        ({"command": "x", "cwd": 1}, "'cwd' must be a string"),
        ({"url": "http://h", "headers": {"X": []}}, "'headers.X' must be a string"),
        ({"type": "websocket", "url": "ws://h"}, "unknown 'type' 'websocket'"),
        ({"type": 1, "command": "x"}, "'type' must be a string"),
        ({"type": "stdio", "url": "http://h"}, "type stdio needs a 'command'"),
        ({"type": "http", "command": "x"}, "type http needs a 'url'"),
        ({"url": "ftp://h/mcp"}, "'url' must start with http:// or https://"),
        ({"command": "x", "requestTimeoutMs": 0}, "'requestTimeoutMs'"),
        ({"command": "x", "startupTimeoutMs": "10s"}, "'startupTimeoutMs'"),
        ({"command": "x", "startupTimeoutMs": True}, "'startupTimeoutMs'"),
        # Python's json reads NaN and Infinity (and 1e400 is infinite): no usable limit.
        ({"command": "x", "startupTimeoutMs": float("nan")}, "'startupTimeoutMs'"),
        ({"command": "x", "requestTimeoutMs": float("nan")}, "'requestTimeoutMs'"),
        ({"command": "x", "requestTimeoutMs": float("inf")}, "'requestTimeoutMs'"),
        ({"command": "x", "disabled": "yes"}, "'disabled'"),
        ({"command": "${CAT_CODE_TEST_UNSET}"}, "${CAT_CODE_TEST_UNSET}"),
        ({"command": "x", "args": ["--k=${CAT_CODE_TEST_UNSET}"]}, "'args[0]'"),
        ({"command": "x", "env": {"K": "${CAT_CODE_TEST_UNSET}"}}, "'env.K'"),
        ({"url": "https://${CAT_CODE_TEST_UNSET}/mcp"}, "'url'"),
        ({"url": "https://h", "headers": {"A": "${CAT_CODE_TEST_UNSET}"}}, "'headers.A'"),
        ({"command": "x", "cwd": "${CAT_CODE_TEST_UNSET}/w"}, "'cwd'"),
    ],
)
def test_a_bad_entry_fails_only_that_server_naming_the_field_or_variable(
    tmp_path: Path, entry: Any, fragment: str
) -> None:
    servers = {"good": {"command": "ok"}, "bad": entry, "fine": {"url": "https://h.test/mcp"}}
    path = write(tmp_path / "mcp.json", servers)

    config = load_config([path], environ={})

    assert [s.name for s in config.servers] == ["good", "fine"]
    assert [b.name for b in config.broken] == ["bad"]
    error = config.broken[0].error
    assert fragment in error
    assert str(path) in error and "'bad'" in error
    assert config.warnings == []
    assert config.names == ["good", "fine", "bad"]


def test_an_unset_variable_is_named_in_the_error(tmp_path: Path) -> None:
    config = load_one(tmp_path, {"command": "x", "env": {"TOKEN": "${API_TOKEN}"}})
    assert "API_TOKEN" in config.broken[0].error
    assert "not set" in config.broken[0].error


def test_a_broken_entry_keeps_a_guess_of_its_transport_and_target(tmp_path: Path) -> None:
    config = load_one(tmp_path, {"command": "srv", "args": ["--x"], "env": "nope"})
    broken = config.broken[0]
    assert (broken.type, broken.target) == ("stdio", "srv --x")
    assert broken.source == tmp_path / "mcp.json"


def test_unknown_fields_are_logged_and_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="cat_code.host.config.load")
    server = only(load_one(tmp_path, {"command": "x", "colour": "blue"}))
    assert server.command == "x"
    assert any("colour" in r.getMessage() for r in caplog.records)


# -- expansion ---------------------------------------------------------------------------


def test_variables_are_expanded_in_command_args_env_and_cwd(tmp_path: Path) -> None:
    environ = {"BIN": "/opt/bin", "TOKEN": "s3cret", "WORK": "/srv/work"}
    entry = {
        "command": "${BIN}/server",
        "args": ["--token=${TOKEN}", "${MISSING:-fallback}", "plain $TOKEN"],
        "env": {"API_TOKEN": "${TOKEN}", "LEVEL": "${LEVEL:-info}"},
        "cwd": "${WORK}/project",
    }
    server = only(load_one(tmp_path, entry, environ))
    assert server.command == "/opt/bin/server"
    assert server.args == ("--token=s3cret", "fallback", "plain $TOKEN")
    assert dict(server.env) == {"API_TOKEN": "s3cret", "LEVEL": "info"}
    assert server.cwd == "/srv/work/project"


def test_variables_are_expanded_in_url_and_headers(tmp_path: Path) -> None:
    environ = {"HOST": "api.example.test", "KEY": "k-123"}
    entry = {
        "url": "https://${HOST}:${PORT:-8443}/mcp",
        "headers": {"Authorization": "Bearer ${KEY}", "X-Env": "${ENV:-dev}"},
    }
    server = only(load_one(tmp_path, entry, environ))
    assert server.url == "https://api.example.test:8443/mcp"
    assert dict(server.headers) == {"Authorization": "Bearer k-123", "X-Env": "dev"}


def test_a_default_applies_to_an_empty_variable_and_a_set_one_wins(tmp_path: Path) -> None:
    environ = {"EMPTY": "", "SET": "yes"}
    entry = {"command": "x", "args": ["${EMPTY:-d1}", "${SET:-d2}", "${EMPTY}", "${NONE:-}"]}
    server = only(load_one(tmp_path, entry, environ))
    assert server.args == ("d1", "yes", "", "")


def test_expansion_reads_the_process_environment_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAT_CODE_TEST_BIN", "/usr/local/bin/srv")
    path = write(tmp_path / "mcp.json", {"s": {"command": "${CAT_CODE_TEST_BIN}"}})
    assert only(load_config([path])).command == "/usr/local/bin/srv"


def test_numbers_in_args_and_env_become_strings(tmp_path: Path) -> None:
    server = only(load_one(tmp_path, {"command": "x", "args": ["--port", 8080], "env": {"N": 2}}))
    assert server.args == ("--port", "8080")
    assert dict(server.env) == {"N": "2"}


# -- precedence --------------------------------------------------------------------------


def test_an_approved_project_entry_is_loaded_with_the_user_entries(
    tmp_path: Path, cat_code_home: Path
) -> None:
    write(cat_code_home / "mcp.json", {"mine": {"command": "user-only"}})
    project = tmp_path / "project"
    ours = {"theirs": {"command": "project-only"}}
    write(project / ".mcp.json", ours)
    TrustStore().record(project, ours, TrustDecision.APPROVED)

    config = load_config(cwd=project)

    assert {s.name: (s.command, s.scope) for s in config.servers} == {
        "mine": ("user-only", Scope.USER),
        "theirs": ("project-only", Scope.PROJECT),
    }
    assert config.waiting == []


def test_a_project_entry_named_like_a_user_entry_is_refused_with_a_notice(
    tmp_path: Path, cat_code_home: Path
) -> None:
    user = write(cat_code_home / "mcp.json", {"shared": {"command": "user-version"}})
    project = tmp_path / "project"
    ours = {"shared": {"command": "project-version"}}
    write(project / ".mcp.json", ours)
    TrustStore().record(project, ours, TrustDecision.APPROVED)  # even approved: never shadows

    config = load_config(cwd=project)

    [shared] = config.servers
    assert (shared.command, shared.source, shared.scope) == ("user-version", user, Scope.USER)
    [notice] = config.notices
    assert "'shared'" in notice and str(user) in notice and "rename it" in notice
    assert config.warnings == []  # a notice is no reason to refuse a reload


def test_a_broken_project_entry_never_replaces_a_good_user_entry(
    tmp_path: Path, cat_code_home: Path
) -> None:
    write(cat_code_home / "mcp.json", {"s": {"command": "good"}})
    write(tmp_path / ".mcp.json", {"s": {"command": 1}})
    config = load_config(cwd=tmp_path, trust_project=True)
    assert [s.command for s in config.servers] == ["good"]
    assert config.broken == []


def test_explicit_paths_use_only_the_named_files(tmp_path: Path, cat_code_home: Path) -> None:
    write(cat_code_home / "mcp.json", {"user": {"command": "u"}})
    write(tmp_path / ".mcp.json", {"project": {"command": "p"}})
    first = write(tmp_path / "first.json", {"a": {"command": "first-a"}, "b": {"command": "b"}})
    second = write(tmp_path / "second.json", {"a": {"command": "second-a"}})

    config = load_config([first, second], cwd=tmp_path)

    assert {s.name: s.command for s in config.servers} == {"a": "second-a", "b": "b"}


def test_the_default_paths_are_the_home_file_then_the_project_file(tmp_path: Path) -> None:
    paths = default_config_paths(tmp_path, {"CAT_CODE_HOME": "/h"})
    assert paths == [Path("/h/mcp.json"), tmp_path / ".mcp.json"]


def test_cat_code_home_defaults_to_a_folder_in_the_home_directory() -> None:
    assert cat_code_home({}) == Path.home() / ".cat-code"
    assert cat_code_home({"CAT_CODE_HOME": "/x/y"}) == Path("/x/y")


# -- types and defaults ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "kind"),
    [
        ({"command": "x"}, "stdio"),
        ({"url": "http://127.0.0.1:1/mcp"}, "http"),
        ({"type": "stdio", "command": "x"}, "stdio"),
        ({"type": "http", "url": "https://h/mcp"}, "http"),
        ({"type": "streamable-http", "url": "https://h/mcp"}, "http"),
        ({"type": "sse", "url": "https://h/sse"}, "sse"),
    ],
)
def test_the_transport_type_is_taken_or_inferred(
    tmp_path: Path, entry: dict[str, Any], kind: str
) -> None:
    assert only(load_one(tmp_path, entry)).type == kind


@pytest.mark.parametrize(
    ("entry", "fallback"),
    [
        ({"url": "https://h/mcp"}, True),
        ({"type": "http", "url": "https://h/mcp"}, False),
        ({"type": "streamable-http", "url": "https://h/mcp"}, False),
        ({"type": "sse", "url": "https://h/sse"}, False),
    ],
)
def test_only_a_url_entry_without_a_type_may_fall_back_to_legacy_sse(
    tmp_path: Path, entry: dict[str, Any], fallback: bool
) -> None:
    server = only(load_one(tmp_path, entry))
    assert isinstance(server, HttpServerConfig)
    assert server.legacy_fallback is fallback


def test_each_entry_carries_only_its_transports_fields(tmp_path: Path) -> None:
    entry = {"command": "x", "args": ["-v"], "cwd": "/tmp", "url": "https://h/mcp"}
    stdio = only(load_one(tmp_path, entry))
    assert isinstance(stdio, StdioServerConfig)
    assert (stdio.command, stdio.args, stdio.cwd) == ("x", ("-v",), "/tmp")
    assert not hasattr(stdio, "url")
    http = only(load_one(tmp_path, {"type": "http", "url": "https://h/mcp", "command": "x"}))
    assert isinstance(http, HttpServerConfig)
    assert not hasattr(http, "command")


def test_timeouts_default_to_thirty_seconds(tmp_path: Path) -> None:
    server = only(load_one(tmp_path, {"command": "x"}))
    assert DEFAULT_REQUEST_TIMEOUT_MS == DEFAULT_STARTUP_TIMEOUT_MS == 30_000
    assert server.request_timeout_s == 30.0
    assert server.startup_timeout_s == 30.0
    assert server.disabled is False


def test_timeouts_are_given_in_milliseconds(tmp_path: Path) -> None:
    entry = {"command": "x", "requestTimeoutMs": 1500, "startupTimeoutMs": 250}
    server = only(load_one(tmp_path, entry))
    assert server.request_timeout_s == 1.5
    assert server.startup_timeout_s == 0.25


def test_a_disabled_entry_is_kept_and_marked(tmp_path: Path) -> None:
    assert only(load_one(tmp_path, {"command": "x", "disabled": True})).disabled is True


def test_the_target_is_the_command_line_or_the_url(tmp_path: Path) -> None:
    stdio = only(load_one(tmp_path, {"command": "python3", "args": ["srv.py", "-q"]}))
    http = only(load_one(tmp_path, {"url": "https://h/mcp", "headers": {"Authorization": "x"}}))
    assert stdio.target == "python3 srv.py -q"
    assert http.target == "https://h/mcp"  # never header values


def test_status_shows_the_target_as_written_so_expanded_secrets_stay_hidden(tmp_path: Path) -> None:
    from cat_code.host.config.load import load_config as _load

    path = tmp_path / "mcp.json"
    path.write_text(
        '{"mcpServers": {"s": {"command": "srv", "args": ["--token=${TOKEN}"]},'
        ' "h": {"url": "https://example.invalid/mcp?key=${TOKEN}"}}}'
    )
    config = _load([path], environ={"TOKEN": "s3cret"})
    by_name = {s.name: s for s in config.servers}
    assert by_name["s"].args == ("--token=s3cret",)
    assert by_name["s"].target == "srv --token=${TOKEN}"
    assert by_name["h"].target == "https://example.invalid/mcp?key=${TOKEN}"


def test_null_args_mean_no_args_like_every_other_optional_field(tmp_path: Path) -> None:
    from cat_code.host.config.load import load_config as _load

    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"s": {"command": "srv", "args": null, "env": null}}}')
    (server,) = _load([path]).servers
    assert server.args == () and dict(server.env) == {}


# -- the oauth block ------------------------------------------------------------------


def test_an_oauth_block_becomes_oauth_settings_with_variables_expanded(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    key.write_text("-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n")
    entry = {
        "url": "https://mcp.example.com/mcp",
        "oauth": {
            "clientId": "${CID}",
            "clientSecret": "${SECRET}",
            "clientMetadataUrl": "https://cat-code.example/client.json",
            "callbackPort": 33418,
            "grantType": "client_credentials",
            "privateKeyFile": str(key),
            "signingAlgorithm": "ES256",
        },
    }
    server = only(load_one(tmp_path, entry, {"CID": "my-client", "SECRET": "s3cret"}))
    assert isinstance(server, HttpServerConfig)
    oauth = server.oauth
    assert oauth is not None
    assert (oauth.client_id, oauth.client_secret) == ("my-client", "s3cret")
    assert oauth.client_metadata_url == "https://cat-code.example/client.json"
    assert oauth.callback_port == 33418
    assert oauth.grant_type == "client_credentials"
    assert oauth.private_key_pem is not None and "BEGIN PRIVATE KEY" in oauth.private_key_pem
    assert oauth.signing_algorithm == "ES256"
    assert "s3cret" not in repr(server) and "BEGIN" not in repr(server)


@pytest.mark.parametrize("grant", ["jwt_bearer", "urn:ietf:params:oauth:grant-type:jwt-bearer"])
def test_the_workload_grant_takes_its_token_file_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, grant: str
) -> None:
    monkeypatch.chdir(tmp_path)
    entry = {
        "url": "https://mcp.example.com/mcp",
        "oauth": {"grantType": grant, "clientId": "ci-runner", "assertionFile": "tokens/mcp"},
    }
    server = only(load_one(tmp_path, entry))
    assert isinstance(server, HttpServerConfig) and server.oauth is not None
    assert server.oauth.grant_type == "jwt_bearer"
    assert server.oauth.client_id == "ci-runner"
    # Not read yet: the platform rotates it, so every sign-in reads it afresh.
    assert server.oauth.assertion_file == str(tmp_path / "tokens" / "mcp")


def test_the_workload_grant_takes_its_token_from_a_variable_never_shown(tmp_path: Path) -> None:
    entry = {
        "url": "https://mcp.example.com/mcp",
        "oauth": {"grantType": "jwt_bearer", "assertion": "${WORKLOAD_JWT}"},
    }
    server = only(load_one(tmp_path, entry, {"WORKLOAD_JWT": "eyJ.payload.sig"}))
    assert isinstance(server, HttpServerConfig) and server.oauth is not None
    assert server.oauth.assertion == "eyJ.payload.sig" and server.oauth.client_id is None
    assert "eyJ.payload.sig" not in repr(server)


def test_an_http_entry_without_an_oauth_block_has_none(tmp_path: Path) -> None:
    server = only(load_one(tmp_path, {"url": "https://mcp.example.com/mcp"}))
    assert isinstance(server, HttpServerConfig)
    assert server.oauth is None
    assert not server.has_own_authorization


def test_an_authorization_header_in_any_case_is_the_entrys_own(tmp_path: Path) -> None:
    entry = {"url": "https://x.example/mcp", "headers": {"AUTHORIZATION": "Bearer t"}}
    server = only(load_one(tmp_path, entry))
    assert isinstance(server, HttpServerConfig) and server.has_own_authorization


@pytest.mark.parametrize(
    ("oauth", "message"),
    [
        ("yes", "'oauth' must be an object, not a string"),
        ({"clientId": 7}, "'oauth.clientId' must be a string, not a number"),
        ({"clientSecret": ["x"]}, "'oauth.clientSecret' must be a string, not an array"),
        ({"callbackPort": "8080"}, "'oauth.callbackPort' must be a port number"),
        ({"callbackPort": 70000}, "'oauth.callbackPort' must be a port number"),
        ({"grantType": "password"}, "'oauth.grantType' must be authorization_code, client_cre"),
        ({"grantType": "jwt_bearer"}, "jwt_bearer needs one of 'oauth.assertionFile' and"),
        (
            {"grantType": "jwt_bearer", "assertion": "a.b.c", "assertionFile": "/t"},
            "jwt_bearer needs one of 'oauth.assertionFile' and",
        ),
        ({"clientMetadataUrl": "http://x/c.json"}, "'oauth.clientMetadataUrl' must be an https"),
        ({"clientId": "${NOPE}"}, "'oauth.clientId' uses ${NOPE}, which is not set"),
        ({"grantType": "client_credentials"}, "client_credentials needs 'oauth.clientId'"),
        ({"privateKeyFile": "/no/such/key.pem"}, "'oauth.privateKeyFile': cannot read"),
    ],
)
def test_a_bad_oauth_block_fails_only_that_server_naming_the_field(
    tmp_path: Path, oauth: Any, message: str
) -> None:
    path = write(
        tmp_path / "mcp.json",
        {
            "bad": {"url": "https://mcp.example.com/mcp", "oauth": oauth},
            "good": {"url": "https://ok.example.com/mcp"},
        },
    )
    config = load_config([path], environ={})
    assert [s.name for s in config.servers] == ["good"]
    (broken,) = config.broken
    assert broken.name == "bad"
    assert message in broken.error and "server 'bad'" in broken.error


def test_a_private_key_file_that_is_not_pem_is_named(tmp_path: Path) -> None:
    key = tmp_path / "key.txt"
    key.write_text("not a key")
    entry = {"url": "https://x.example/mcp", "oauth": {"privateKeyFile": str(key)}}
    (broken,) = load_one(tmp_path, entry).broken
    assert f"'oauth.privateKeyFile': {key} is not a PEM key" in broken.error


def test_an_oauth_block_on_a_stdio_entry_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server = only(load_one(tmp_path, {"command": "x", "oauth": {"clientId": "c"}}))
    assert server.type == "stdio"
    assert "'oauth' applies only to http and sse servers" in caplog.text


def test_credentials_in_the_url_count_as_the_entrys_own_authorization(tmp_path: Path) -> None:
    server = only(load_one(tmp_path, {"url": "https://alice:s3cret@example.com/mcp"}))
    assert isinstance(server, HttpServerConfig) and server.has_own_authorization


def test_tool_filters_timeouts_and_output_limits_are_read(tmp_path: Path) -> None:
    entry = only(
        load_one(
            tmp_path,
            {
                "command": "srv",
                "includeTools": ["read_*", "echo"],
                "excludeTools": ["read_secret"],
                "toolTimeoutMs": 90_000,
                "maxOutputTokens": 5000,
                "alwaysLoad": True,
            },
        )
    )
    assert entry.include_tools == ("read_*", "echo")
    assert entry.exclude_tools == ("read_secret",)
    assert entry.tool_timeout_s == 90.0
    assert entry.max_output_tokens == 5000
    assert entry.always_load is True
    plain = only(load_one(tmp_path, {"url": "http://127.0.0.1:1/mcp"}))
    assert plain.include_tools is None and plain.exclude_tools == ()
    assert plain.tool_timeout_s is None and plain.max_output_tokens is None
    assert plain.always_load is False


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("includeTools", "echo", "'includeTools' must be an array"),
        ("excludeTools", {"a": 1}, "'excludeTools' must be an array of tool names or globs"),
        ("excludeTools", [1], "'excludeTools[0]' must be a non-empty string, not a number"),
        ("excludeTools", ["ok", None], "'excludeTools[1]' must be a non-empty string, not null"),
        ("includeTools", ["ok", ""], "'includeTools[1]' must be a non-empty string, not an empty"),
        ("toolTimeoutMs", 0, "'toolTimeoutMs' must be a positive number"),
        ("maxOutputTokens", 1.5, "'maxOutputTokens' must be a positive whole number"),
        ("maxOutputTokens", True, "'maxOutputTokens' must be a positive whole number"),
        ("alwaysLoad", "yes", "'alwaysLoad' must be true or false"),
    ],
)
def test_a_bad_filter_or_limit_fails_the_entry_naming_the_field(
    tmp_path: Path, field: str, value: Any, named: str
) -> None:
    config = load_one(tmp_path, {"command": "srv", field: value})
    assert not config.servers
    assert named in config.broken[0].error


def test_status_targets_mask_secret_arguments_and_url_credentials(tmp_path: Path) -> None:
    entry = only(load_one(tmp_path, {"command": "srv", "args": ["--api-key", "sk-1", "-v"]}))
    assert entry.target == "srv --api-key **** -v"
    remote = only(load_one(tmp_path, {"url": "https://u:pw@h.example/mcp?token=abc"}))
    assert remote.target == "https://****@h.example/mcp?token=****"


def test_status_targets_quote_arguments_that_need_it_but_not_masks_or_variables(
    tmp_path: Path,
) -> None:
    args = ["-c", "import sys; print(1)", "--token", "t0k", "--key=${K:-dflt}", "", "it's"]
    entry = only(load_one(tmp_path, {"command": "python3", "args": args}))
    assert entry.target == (
        "python3 -c 'import sys; print(1)' --token **** --key=${K:-****} '' 'it'\"'\"'s'"
    )


def test_files_that_exist_but_give_no_servers_are_named_unreadable(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{ nope")
    vscode = write(tmp_path / "vscode.json", {})
    vscode.write_text('{"servers": {"a": {"command": "x"}}}')
    empty = tmp_path / "empty.json"
    empty.write_text("")
    good = write(tmp_path / "good.json", {"a": {"command": "x"}})

    config = load_config([broken, vscode, empty, tmp_path / "missing.json", good])

    assert config.unreadable == [broken, vscode]
    assert [s.name for s in config.servers] == ["a"]
