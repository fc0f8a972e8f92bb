"""Other hosts' config files, in their documented shapes, read and converted to ours."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cat_code.host.config.imports import SOURCES, FoundServer, scan, source_files, strip_jsonc
from cat_code.host.config.load import parse_entry


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    return tmp_path / "project"


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def found(source: str, home: Path, cwd: Path) -> dict[str, FoundServer]:
    result = scan((source,), home=home, cwd=cwd)
    assert result.warnings == []
    return {s.name: s for s in result.servers}


def test_claude_desktop_on_linux_and_macos(home: Path, cwd: Path) -> None:
    linux = write(home / ".config/Claude/claude_desktop_config.json", {
        "mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"],
                              "env": {"DEBUG": "1"}}},
        "globalShortcut": "Ctrl+Space",
    })  # fmt: skip
    mac = write(
        home / "Library/Application Support/Claude/claude_desktop_config.json",
        {"mcpServers": {"weather": {"command": "uvx", "args": ["mcp-weather"]}}},
    )

    servers = found("claude-desktop", home, cwd)

    assert servers["fs"].file == linux and servers["weather"].file == mac
    assert servers["fs"].entry == {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"],
                                   "env": {"DEBUG": "1"}}  # fmt: skip
    assert (servers["fs"].transport, servers["fs"].target) == (
        "stdio", "npx -y server-filesystem /tmp"
    )  # fmt: skip


def test_claude_code_user_servers_this_projects_servers_and_the_project_file(
    home: Path, cwd: Path
) -> None:
    write(home / ".claude.json", {
        "numStartups": 12,
        "mcpServers": {"sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp",
                                  "oauth": {"clientId": "abc", "callbackPort": 8080}}},
        "projects": {
            str(cwd): {"mcpServers": {"db": {"type": "stdio", "command": "db-mcp", "args": [],
                                             "env": {"DSN": "${DSN:-postgres://localhost}"}}}},
            "/somewhere/else": {"mcpServers": {"elsewhere": {"command": "x"}}},
        },
    })  # fmt: skip
    write(
        cwd / ".mcp.json", {"mcpServers": {"old": {"type": "sse", "url": "http://127.0.0.1:1/sse"}}}
    )

    servers = found("claude-code", home, cwd)

    assert sorted(servers) == ["db", "old", "sentry"]  # not another project's servers
    assert servers["sentry"].entry == {
        "type": "http",
        "url": "https://mcp.sentry.dev/mcp",
        "oauth": {"clientId": "abc", "callbackPort": 8080},
    }
    assert servers["db"].entry == {"type": "stdio", "command": "db-mcp", "args": [],
                                   "env": {"DSN": "${DSN:-postgres://localhost}"}}  # fmt: skip
    assert servers["old"].transport == "sse" and servers["old"].file == cwd / ".mcp.json"
    # cat-code reads ./.mcp.json itself (project scope): shown, never copied elsewhere.
    assert servers["old"].error == "already read by cat-code (project scope)"
    assert [s.error for s in servers.values() if s.name != "old"] == [None, None]


def test_claude_code_project_servers_are_for_that_exact_folder_only(home: Path, cwd: Path) -> None:
    # Claude Code's local scope applies to the one project directory, not to folders below it.
    sub = cwd / "src" / "pkg"
    sub.mkdir(parents=True)
    write(home / ".claude.json", {"projects": {
        str(cwd): {"mcpServers": {"db": {"command": "db"}}},
        str(sub): {"mcpServers": {"pkg": {"command": "pkg"}}},
    }})  # fmt: skip
    assert list(found("claude-code", home, sub)) == ["pkg"]
    assert list(found("claude-code", home, cwd)) == ["db"]
    assert list(found("claude-code", home, cwd.parent)) == []


def test_cursor_user_and_project_files_with_its_variables(home: Path, cwd: Path) -> None:
    write(home / ".cursor/mcp.json", {"mcpServers": {
        "remote": {"url": "https://mcp.example.com/mcp", "headers": {"API_KEY": "${env:KEY}"}},
    }})  # fmt: skip
    write(cwd / ".cursor/mcp.json", {"mcpServers": {
        "local": {"command": "node", "args": ["${workspaceFolder}/server.js"],
                  "env": {"HOME_DIR": "${userHome}"}, "envFile": ".env"},
    }})  # fmt: skip

    servers = found("cursor", home, cwd)

    assert servers["remote"].entry == {"url": "https://mcp.example.com/mcp",
                                       "headers": {"API_KEY": "${KEY}"}}  # fmt: skip
    assert servers["remote"].transport == "http"  # type-less: http, falling back to sse
    assert servers["local"].entry == {"command": "node", "args": [f"{cwd}/server.js"],
                                      "env": {"HOME_DIR": str(home)}}  # fmt: skip
    assert servers["local"].notes == ("ignored field(s) envFile",)


VSCODE = """{
  // Workspace MCP servers (JSON with comments, as VS Code writes it)
  "inputs": [
    { "type": "promptString", "id": "perplexity-key", "description": "API key", "password": true }
  ],
  "servers": {
    "perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": { "PERPLEXITY_API_KEY": "${input:perplexity-key}", "LOG": "${env:LOG_LEVEL}" },
    },
    /* a remote one */
    "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/" },
    "legacy": { "type": "sse", "url": "http://127.0.0.1:1/sse", "headers": {"X": "y"} },
    "fancy": { "command": "x", "args": ["${config:python.path}"] },
  },
}
"""


def test_vscode_servers_shape_inputs_env_and_comments(home: Path, cwd: Path) -> None:
    write(cwd / ".vscode/mcp.json", VSCODE)
    write(home / ".config/Code/User/mcp.json", {"servers": {"user-one": {"command": "u"}}})

    servers = found("vscode", home, cwd)

    assert list(servers) == ["user-one", "perplexity", "github", "legacy", "fancy"]
    perplexity = servers["perplexity"]
    assert perplexity.entry == {
        "type": "stdio", "command": "npx", "args": ["-y", "server-perplexity-ask"],
        "env": {"PERPLEXITY_API_KEY": "${PERPLEXITY_KEY}", "LOG": "${LOG_LEVEL}"},
    }  # fmt: skip
    assert perplexity.notes == (
        "asks for input 'perplexity-key': set PERPLEXITY_KEY in the environment instead",
    )
    assert servers["github"].entry == {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}
    assert servers["legacy"].transport == "sse"
    assert servers["fancy"].entry is None
    assert servers["fancy"].error == "uses ${config:python.path}, which cat-code cannot resolve"


def test_vscode_user_folder_on_macos(home: Path, cwd: Path) -> None:
    write(home / "Library/Application Support/Code/User/mcp.json",
          {"servers": {"mac": {"type": "stdio", "command": "m"}}})  # fmt: skip
    assert list(found("vscode", home, cwd)) == ["mac"]


def test_gemini_url_is_sse_http_url_is_http_and_timeout_is_kept(home: Path, cwd: Path) -> None:
    write(home / ".gemini/settings.json", {
        "theme": "GitHub",
        "mcpServers": {
            "events": {"url": "http://localhost:8080/sse", "timeout": 5000, "trust": True},
            "api": {"httpUrl": "https://api.example.com/mcp",
                    "headers": {"Authorization": "Bearer $API_TOKEN"}},
            "py": {"command": "python", "args": ["-m", "srv"], "cwd": "./server",
                   "env": {"KEY": "${KEY}"}, "includeTools": ["safe_*"], "excludeTools": ["rm"]},
        },
    })  # fmt: skip
    write(cwd / ".gemini/settings.json", '{ // project\n "mcpServers": {"proj": {"command": "p"}}}')

    servers = found("gemini", home, cwd)

    assert servers["events"].entry == {"type": "sse", "url": "http://localhost:8080/sse",
                                       "requestTimeoutMs": 5000}  # fmt: skip
    assert servers["events"].notes == (
        "ignored 'trust' (cat-code asks before tool calls; see --allow-tool)",
    )
    assert servers["api"].entry == {
        "type": "http",
        "url": "https://api.example.com/mcp",
        "headers": {"Authorization": "Bearer ${API_TOKEN}"},
    }
    assert servers["py"].entry == {
        "command": "python", "args": ["-m", "srv"], "env": {"KEY": "${KEY}"}, "cwd": "./server",
        "includeTools": ["safe_*"], "excludeTools": ["rm"],
    }  # fmt: skip
    assert servers["proj"].file == cwd / ".gemini/settings.json"


def test_every_converted_entry_is_one_cat_code_accepts(home: Path, cwd: Path) -> None:
    write(cwd / ".vscode/mcp.json", VSCODE)
    write(home / ".gemini/settings.json",
          {"mcpServers": {"a": {"httpUrl": "https://x.example/mcp", "timeout": 100}}})  # fmt: skip
    environ = {"PERPLEXITY_KEY": "k", "LOG_LEVEL": "debug"}
    for server in scan(SOURCES, home=home, cwd=cwd).servers:
        if server.entry is not None:
            parse_entry(server.name, server.entry, source=server.file, environ=environ)


def test_unreadable_files_are_warnings_and_the_rest_is_read(home: Path, cwd: Path) -> None:
    broken = write(home / ".cursor/mcp.json", '{"mcpServers": {"a": ')
    write(cwd / ".cursor/mcp.json", {"mcpServers": {"ok": {"command": "ok"}, "bad": 3}})
    write(home / ".gemini/settings.json", {"mcpServers": []})

    result = scan(("cursor", "gemini"), home=home, cwd=cwd)

    assert len(result.warnings) == 2
    assert result.warnings[0].startswith(f"{broken}:1:")
    assert "'mcpServers' is not an object" in result.warnings[1]
    by_name = {s.name: s for s in result.servers}
    assert by_name["ok"].entry == {"command": "ok"}
    assert by_name["bad"].error == "the entry is not an object"


def test_nothing_is_found_where_nothing_is(home: Path, cwd: Path) -> None:
    result = scan(SOURCES, home=home, cwd=cwd)
    assert result.servers == [] and result.warnings == []
    assert home / ".claude.json" in result.looked and cwd / ".vscode" / "mcp.json" in result.looked


def test_the_home_and_project_file_are_one_when_run_in_the_home_folder(home: Path) -> None:
    assert source_files("cursor", home=home, cwd=home) == [home / ".cursor" / "mcp.json"]


def test_strip_jsonc_keeps_strings_and_line_numbers() -> None:
    text = '{\n  // comment\n  "url": "https://x/y", /* c */ "a": "//not",\n  "b": [1, 2,],\n}'
    stripped = strip_jsonc(text)
    assert json.loads(stripped) == {"url": "https://x/y", "a": "//not", "b": [1, 2]}
    assert stripped.count("\n") == text.count("\n")


def test_servers_of_the_projects_own_files_are_folder_local_and_the_users_are_not(
    home: Path, cwd: Path
) -> None:
    here = {"mcpServers": {"here": {"command": "h"}}}
    write(
        home / ".claude.json",
        {"mcpServers": {"mine": {"command": "m"}}, "projects": {str(cwd): here}},
    )
    write(home / ".cursor/mcp.json", {"mcpServers": {"user-cursor": {"command": "u"}}})
    write(cwd / ".cursor/mcp.json", {"mcpServers": {"repo-cursor": {"command": "r"}}})
    write(cwd / ".vscode/mcp.json", {"servers": {"repo-vscode": {"command": "v"}}})
    write(cwd / ".gemini/settings.json", {"mcpServers": {"repo-gemini": {"command": "g"}}})

    local = {s.name: s.local for s in scan(home=home, cwd=cwd).servers}

    assert local == {"mine": False, "here": False, "user-cursor": False,
                     "repo-cursor": True, "repo-vscode": True, "repo-gemini": True}  # fmt: skip
    # Run in the home folder, the user's own files stay the user's.
    assert not any(s.local for s in scan(("cursor",), home=home, cwd=home).servers)
