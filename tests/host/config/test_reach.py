"""What a project entry sends and reads, named for the approval, never expanded."""

from __future__ import annotations

from cat_code.host.config.reach import entry_reach


def test_every_variable_is_named_with_where_it_goes_and_never_expanded() -> None:
    entry = {
        "command": "${TOOL}",
        "args": ["--token", "${API_TOKEN:-none}"],
        "env": {"KEY": "${SECRET_KEY}"},
        "cwd": "${HOME}/x",
        "description": "${NOT_EXPANDED}",
    }
    assert entry_reach(entry) == (
        "sends: ${TOOL} (command), ${API_TOKEN} (args[1]), ${SECRET_KEY} (env KEY), ${HOME} (cwd)"
    )


def test_an_http_entry_names_its_header_variables_and_the_files_it_reads() -> None:
    entry = {
        "url": "https://h/${TENANT}/mcp",
        "headers": {"X-Trace": "${GITHUB_TOKEN}"},
        "oauth": {"privateKeyFile": "keys/k.pem", "clientSecret": "${CS}"},
    }
    assert entry_reach(entry) == (
        "sends: ${TENANT} (url), ${GITHUB_TOKEN} (header X-Trace), ${CS} (oauth.clientSecret); "
        "reads: keys/k.pem (oauth.privateKeyFile)"
    )


def test_an_entry_without_variables_or_files_reaches_nothing_and_names_are_escaped() -> None:
    assert entry_reach({"command": "npx", "args": ["-y", "docs"]}) == ""
    assert entry_reach("not an entry") == ""
    assert "\x1b" not in entry_reach({"headers": {"X\x1b[2J": "${T}"}})
