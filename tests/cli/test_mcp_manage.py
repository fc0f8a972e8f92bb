"""The pure parts of ``mcp add | get``: taking the command line apart, masking secrets.

(The commands themselves run end to end in ``tests/e2e/test_cli_manage.py``.)
"""

from __future__ import annotations

import pytest

from cat_code.cli.mcp_add import AddRequest, parse_add
from cat_code.cli.mcp_entries import UsageError
from cat_code.cli.options import from_namespace
from cat_code.cli.parser import build_parser
from cat_code.host.config.masking import (
    mask_args,
    mask_entry,
    mask_url,
    mask_value,
    masked_target,
    shown_command,
)


def add(*argv: str) -> AddRequest:
    return parse_add(from_namespace(build_parser().parse_args(["mcp", "add", *argv])))


def test_everything_after_the_double_dash_is_the_command_its_options_included() -> None:
    request = add("-e", "A=1", "srv", "--scope", "project", "--", "npx", "-y", "pkg", "--scope",
                  "x", "-e", "B=2")  # fmt: skip
    assert request.scope == "project" and request.env == ["A=1"]
    assert request.command == ["npx", "-y", "pkg", "--scope", "x", "-e", "B=2"]
    assert request.entry() == {"command": "npx", "args": ["-y", "pkg", "--scope", "x", "-e", "B=2"],
                               "env": {"A": "1"}}  # fmt: skip


def test_a_double_dash_right_after_the_name_works_too() -> None:
    assert add("srv", "--", "python3", "server.py", "-v").command == ["python3", "server.py", "-v"]


def test_a_command_without_double_dash_is_refused_showing_where_to_put_it() -> None:
    # Without --, a command's own options would be read as mcp add's: the usage says --.
    with pytest.raises(UsageError) as caught:
        add("srv", "python3", "server.py", "--port", "1")
    assert str(caught.value) == (
        "put the command after --: cat-code mcp add srv -- python3 server.py --port 1"
    )
    with pytest.raises(UsageError, match=r"put the command after --: .* -- python3 -c 'a b'"):
        add("-e", "A=1", "srv", "python3", "-c", "a b")


@pytest.mark.parametrize(
    "argv",
    [("x", "ftp://foo"), ("x", "ws://h.example/mcp", "-H", "A: b"), ("x", "--", "file:///srv")],
)
def test_a_url_that_is_not_http_is_refused_not_taken_for_a_command(argv: tuple[str, ...]) -> None:
    with pytest.raises(UsageError, match=r"^a URL must start with http:// or https://, not '"):
        add(*argv)


def test_a_url_takes_options_before_and_after_it() -> None:
    request = add("--transport", "sse", "srv", "https://h.example/sse", "--header", "A: b",
                  "-H", "Authorization:Bearer ${T}", "--force")  # fmt: skip
    assert request.force is True
    assert request.entry() == {"type": "sse", "url": "https://h.example/sse",
                               "headers": {"A": "b", "Authorization": "Bearer ${T}"}}  # fmt: skip


def test_a_url_entry_is_streamable_http_by_default() -> None:
    assert add("srv", "http://127.0.0.1:3000/mcp").entry() == {
        "type": "http", "url": "http://127.0.0.1:3000/mcp"
    }  # fmt: skip


@pytest.mark.parametrize(
    "argv",
    [
        ("srv",),
        ("srv", "https://a.example", "https://b.example"),
        ("srv", "--env"),
        ("srv", "--scope", "global", "--", "x"),
        ("srv", "--transport", "ws", "https://a.example"),
        ("srv/../x", "--", "x"),
    ],
)
def test_bad_command_lines_are_usage_errors(argv: tuple[str, ...]) -> None:
    with pytest.raises(UsageError):
        add(*argv).entry()


def test_mask_value_hides_literals_and_keeps_variable_references() -> None:
    assert mask_value("sk-123") == "****"
    assert mask_value("${TOKEN}") == "${TOKEN}"
    assert mask_value("Bearer ${TOKEN}") == "Bearer ${TOKEN}"
    assert mask_value("${USER_NAME:-me}") == "${USER_NAME:-****}"  # a default may be a secret
    assert mask_value("Bearer ${T:-sk-fallback}") == "Bearer ${T:-****}"
    assert mask_value("${EMPTY:-}") == "${EMPTY:-}"
    assert mask_value("sk-123${SUFFIX}") == "****${SUFFIX}"
    assert mask_value(12345) == "****"
    assert mask_value("") == ""


def test_mask_url_hides_userinfo_and_query_values() -> None:
    assert mask_url("https://u:p@h.example/mcp?key=abc&v=${V}&flag") == (
        "https://****@h.example/mcp?key=****&v=${V}&flag"
    )
    assert mask_url("https://${CREDS}@h.example/mcp") == "https://${CREDS}@h.example/mcp"
    assert mask_url("http://127.0.0.1:8000/mcp") == "http://127.0.0.1:8000/mcp"
    assert mask_url("https://${C:-u:p}@h.example/?k=${K:-abc}") == (
        "https://${C:-****}@h.example/?k=${K:-****}"
    )


def test_mask_entry_covers_env_headers_url_and_oauth_secret() -> None:
    entry = {
        "command": "x", "args": ["--verbose", "--token", "t0k"], "env": {"K": "v", "R": "${R}"},
        "url": "https://h.example/?t=1", "headers": {"X": "y"},
        "oauth": {"clientId": "public", "clientSecret": "s3cret"},
    }  # fmt: skip
    assert mask_entry(entry) == {
        "command": "x", "args": ["--verbose", "--token", "****"], "env": {"K": "****", "R": "${R}"},
        "url": "https://h.example/?t=****", "headers": {"X": "****"},
        "oauth": {"clientId": "public", "clientSecret": "****"},
    }  # fmt: skip
    assert entry["env"] == {"K": "v", "R": "${R}"}  # the original is left alone


def test_mask_args_hides_the_values_of_secret_looking_options() -> None:
    assert mask_args([
        "-y", "server", "--api-key", "sk-1", "--token=abc", "--client-secret", "${S}",
        "--password", "pw", "--db-password=${P:-pw}", "--port", "8080", "-e",
        "GITHUB_TOKEN=ghp", "--auth", "u:p", "https://h.example/?key=k1", "--verbose",
    ]) == [
        "-y", "server", "--api-key", "****", "--token=****", "--client-secret", "${S}",
        "--password", "****", "--db-password=${P:-****}", "--port", "8080", "-e",
        "GITHUB_TOKEN=****", "--auth", "****", "https://h.example/?key=****", "--verbose",
    ]  # fmt: skip
    # An option that looks secret but is followed by another option has no value to hide.
    assert mask_args(["--token", "--verbose", 7]) == ["--token", "--verbose", 7]


def test_a_shown_command_is_quoted_where_a_word_needs_it_masks_and_variables_left_bare() -> None:
    assert shown_command(["python3", "-c", "import sys; print(sys.argv)", "a b", "", "ok.py"]) == (
        "python3 -c 'import sys; print(sys.argv)' 'a b' '' ok.py"
    )
    assert shown_command(["srv", "${DIR}", "--token=${T:-****}", "****", "*.py"]) == (
        "srv ${DIR} --token=${T:-****} **** '*.py'"
    )
    assert masked_target({"command": "srv", "args": ["--api-key", "sk 1", "x y"]}) == (
        "srv --api-key **** 'x y'"
    )


def test_mcp_config_after_the_name_is_read_too() -> None:
    request = add("srv", "--mcp-config", "a.json", "--", "x")
    assert request.mcp_config == ["a.json"] and request.command == ["x"]
