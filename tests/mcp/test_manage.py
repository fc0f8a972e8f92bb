"""The pure parts of ``mcp add | get``: taking the command line apart, masking secrets.

(The commands themselves run end to end in ``tests/e2e/test_cli_manage.py``.)
"""

from __future__ import annotations

import pytest

from cat_code.cli import build_parser
from cat_code.mcp.manage import AddRequest, UsageError, mask_entry, mask_url, mask_value, parse_add


def add(*argv: str) -> AddRequest:
    return parse_add(build_parser().parse_args(["mcp", "add", *argv]))


def test_everything_after_the_double_dash_is_the_command_its_options_included() -> None:
    request = add("-e", "A=1", "srv", "--scope", "project", "--", "npx", "-y", "pkg", "--scope",
                  "x", "-e", "B=2")  # fmt: skip
    assert request.scope == "project" and request.env == ["A=1"]
    assert request.command == ["npx", "-y", "pkg", "--scope", "x", "-e", "B=2"]
    assert request.entry() == {"command": "npx", "args": ["-y", "pkg", "--scope", "x", "-e", "B=2"],
                               "env": {"A": "1"}}  # fmt: skip


def test_a_double_dash_right_after_the_name_works_too() -> None:
    assert add("srv", "--", "python3", "server.py", "-v").command == ["python3", "server.py", "-v"]


def test_a_command_without_double_dash_keeps_its_own_options() -> None:
    assert add("srv", "python3", "server.py", "--port", "1").command == [
        "python3", "server.py", "--port", "1"
    ]  # fmt: skip


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
    assert mask_value("${USER_NAME:-me}") == "${USER_NAME:-me}"
    assert mask_value("sk-123${SUFFIX}") == "****${SUFFIX}"
    assert mask_value(12345) == "****"
    assert mask_value("") == ""


def test_mask_url_hides_userinfo_and_query_values() -> None:
    assert mask_url("https://u:p@h.example/mcp?key=abc&v=${V}&flag") == (
        "https://****@h.example/mcp?key=****&v=${V}&flag"
    )
    assert mask_url("https://${CREDS}@h.example/mcp") == "https://${CREDS}@h.example/mcp"
    assert mask_url("http://127.0.0.1:8000/mcp") == "http://127.0.0.1:8000/mcp"


def test_mask_entry_covers_env_headers_url_and_oauth_secret() -> None:
    entry = {
        "command": "x", "args": ["--verbose"], "env": {"K": "v", "R": "${R}"},
        "url": "https://h.example/?t=1", "headers": {"X": "y"},
        "oauth": {"clientId": "public", "clientSecret": "s3cret"},
    }  # fmt: skip
    assert mask_entry(entry) == {
        "command": "x", "args": ["--verbose"], "env": {"K": "****", "R": "${R}"},
        "url": "https://h.example/?t=****", "headers": {"X": "****"},
        "oauth": {"clientId": "public", "clientSecret": "****"},
    }  # fmt: skip
    assert entry["env"] == {"K": "v", "R": "${R}"}  # the original is left alone
