"""``cat-code mcp add | remove | get | enable | disable | import``, the real command run as a
process with ``CAT_CODE_HOME``, ``HOME`` and the working directory in temporary folders,
on real config files, connecting real servers (``examples/echo_server.py``, the `mcp`
SDK's HTTP server)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ECHO_SERVER, REPO
from scripted.http_peers import free_port, running, sdk_command

ECHO_COMMAND = [sys.executable, str(ECHO_SERVER)]


@dataclass
class Shell:
    """A user's machine in miniature: a home folder, cat-code's home, a project folder."""

    home: Path
    cat_home: Path
    project: Path

    @property
    def user_file(self) -> Path:
        return self.cat_home / "mcp.json"

    @property
    def project_file(self) -> Path:
        return self.project / ".mcp.json"

    def run(
        self, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``cat-code ARGS`` to completion (bounded), in the project folder."""
        environ = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
        environ.update({"HOME": str(self.home), "CAT_CODE_HOME": str(self.cat_home)})
        # This checkout's code, whatever the venv has installed.
        paths = [str(REPO / "src"), *filter(None, [environ.get("PYTHONPATH")])]
        environ["PYTHONPATH"] = os.pathsep.join(paths)
        environ.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "cat_code", *args],
            cwd=self.project,
            env=environ,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )


@pytest.fixture
def shell(tmp_path: Path) -> Shell:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return Shell(home=home, cat_home=home / ".cat-code", project=project)


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return text


def common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def only_inserted(old: str, new: str) -> str:
    """The text ``new`` adds to ``old`` at one place; fails if any other byte changed."""
    prefix = common_prefix(old, new)
    suffix = common_prefix(old[prefix:][::-1], new[prefix:][::-1])
    assert prefix + suffix == len(old), f"bytes outside the edit changed:\n{new}"
    return new[prefix : len(new) - suffix]


#: A user file written by hand, with keys cat-code does not know, to be kept as they are.
USER_FILE = """{
  "$schema": "https://example.com/mcp.schema.json",
  "mcpServers": {
    "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                "env": { "GITHUB_TOKEN": "${GITHUB_TOKEN}" }, "x-note": "mine" }
  },
  "settings": {"colour": "never",   "width": 100}
}
"""


# -- add ----------------------------------------------------------------------------------


def test_add_writes_a_stdio_entry_to_the_user_file_and_connects_it(shell: Shell) -> None:
    run = shell.run("mcp", "add", "--env", "GREETING=hi", "echo", "--", *ECHO_COMMAND)

    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        f"Added stdio server 'echo' to {shell.user_file}",
        "connected: 6 tool(s)",
    ]
    entry = json.loads(shell.user_file.read_text())["mcpServers"]["echo"]
    assert entry == {"command": sys.executable, "args": [str(ECHO_SERVER)],
                     "env": {"GREETING": "hi"}}  # fmt: skip
    listed = shell.run("mcp", "list", "--json")
    assert [(s["name"], s["state"], s["tools"]) for s in json.loads(listed.stdout)] == [
        ("echo", "CONNECTED", 6)
    ]


def test_add_keeps_every_other_byte_of_an_existing_file(shell: Shell) -> None:
    before = write(shell.user_file, USER_FILE)

    run = shell.run("mcp", "add", "echo", "--", *ECHO_COMMAND, "--flag-for-the-server")

    assert run.returncode == 0, run.stderr
    after = shell.user_file.read_text()
    added = only_inserted(before, after)
    assert added.startswith(',\n    "echo": {\n      "command": ')
    data = json.loads(after)
    assert list(data) == ["$schema", "mcpServers", "settings"]
    assert data["mcpServers"]["echo"]["args"] == [str(ECHO_SERVER), "--flag-for-the-server"]


def test_add_refuses_an_existing_name_without_force_and_replaces_it_with_force(
    shell: Shell,
) -> None:
    before = write(shell.user_file, USER_FILE)

    refused = shell.run("mcp", "add", "github", "--", *ECHO_COMMAND)

    assert refused.returncode == 1
    assert f"MCP server 'github' already exists in {shell.user_file}" in refused.stderr
    assert "--force" in refused.stderr
    assert shell.user_file.read_text() == before

    forced = shell.run("mcp", "add", "--force", "github", "--", *ECHO_COMMAND)

    assert forced.returncode == 0, forced.stderr
    assert "(replaced the previous entry)" in forced.stdout
    after = shell.user_file.read_text()
    start = before.index('{ "command": "npx"')
    end = before.index('"mine" }') + len('"mine" }')
    assert after[:start] == before[:start] and after.endswith(before[end:])
    assert json.loads(after)["mcpServers"]["github"]["command"] == sys.executable


def test_add_a_url_to_the_project_file_with_headers_and_the_sse_transport(shell: Shell) -> None:
    url = f"http://127.0.0.1:{free_port()}/sse"  # nothing listens there

    run = shell.run("mcp", "add", "--scope", "project", "old", url, "--transport", "sse",
                    "--header", "Authorization: Bearer ${OLD_TOKEN}", "-H", "X-Team: core",
                    env={"OLD_TOKEN": "t"})  # fmt: skip

    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"Added sse server 'old' to {shell.project_file}"
    assert lines[1].startswith("could not connect: ")
    assert json.loads(shell.project_file.read_text()) == {"mcpServers": {"old": {
        "type": "sse", "url": url,
        "headers": {"Authorization": "Bearer ${OLD_TOKEN}", "X-Team": "core"},
    }}}  # fmt: skip
    assert not shell.user_file.exists()


def test_add_a_url_server_that_answers_says_it_connected(shell: Shell) -> None:
    port = free_port()
    with running(sdk_command(port, "json"), port):
        run = shell.run("mcp", "add", "sdk", f"http://127.0.0.1:{port}/mcp")

    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == f"Added http server 'sdk' to {shell.user_file}"
    assert run.stdout.splitlines()[1].startswith("connected: ")
    entry = json.loads(shell.user_file.read_text())["mcpServers"]["sdk"]
    assert entry == {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}


def test_add_of_a_server_that_cannot_start_keeps_the_entry_and_says_why(shell: Shell) -> None:
    run = shell.run("mcp", "add", "broken", "--", "./nope-not-here", "--x")

    assert run.returncode == 0
    assert "could not connect: command not found: ./nope-not-here" in run.stdout
    assert "cat-code mcp remove broken" in run.stdout
    assert json.loads(shell.user_file.read_text())["mcpServers"]["broken"] == {
        "command": "./nope-not-here", "args": ["--x"]
    }  # fmt: skip


def test_add_refuses_a_file_that_is_not_valid_json_and_leaves_it_alone(shell: Shell) -> None:
    before = write(shell.user_file, '{\n  "mcpServers": {\n    "a": {"command": "a"},\n  }\n}\n')

    run = shell.run("mcp", "add", "echo", "--", *ECHO_COMMAND)

    assert run.returncode == 1
    assert f"{shell.user_file}:4:" in run.stderr and "not valid JSON" in run.stderr
    assert shell.user_file.read_text() == before
    # No temporary file left (the edit locks live in their own folder).
    assert sorted(p.name for p in shell.cat_home.iterdir()) == ["locks", "mcp.json"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["echo"], "say what to run"),
        (["echo", "https://x.example/mcp", "--env", "A=1"], "--env applies to stdio servers"),
        (["echo", "--header", "X: y", "--", "cmd"], "--header applies to URL servers"),
        (["echo", "--env", "NOEQUALS", "--", "cmd"], "--env 'NOEQUALS': expected KEY=VALUE"),
        (["echo", "--transport", "sse", "--", "cmd"], "--transport sse needs a URL"),
        (["bad name", "--", "cmd"], "use letters, digits"),
        (["echo", "--bogus", "--", "cmd"], "unknown option '--bogus'"),
        (["echo", "https://x.example/mcp", "extra"], "unexpected 'extra' after the URL"),
        (["x", "ftp://foo"], "a URL must start with http:// or https://, not 'ftp://foo'"),
        (["y", "python3", "s.py"], "put the command after --: cat-code mcp add y -- python3 s.py"),
        (["echo", "--transport", "ws", "https://x.example"], "must be http, sse or stdio"),
    ],
)
def test_add_usage_errors_exit_2_and_write_nothing(
    shell: Shell, args: list[str], message: str
) -> None:
    run = shell.run("mcp", "add", *args)
    assert run.returncode == 2
    assert message in run.stderr
    assert not shell.user_file.exists()


def test_add_with_an_unset_variable_writes_the_entry_and_names_the_variable(
    shell: Shell,
) -> None:
    run = shell.run("mcp", "add", "later", "--", "${CAT_CODE_TEST_UNSET_COMMAND}")
    assert run.returncode == 0, run.stderr
    assert "could not connect: 'command' uses ${CAT_CODE_TEST_UNSET_COMMAND}, which is not set" \
        in run.stdout  # fmt: skip
    entry = json.loads(shell.user_file.read_text())["mcpServers"]["later"]
    assert entry == {"command": "${CAT_CODE_TEST_UNSET_COMMAND}", "args": []}


def test_add_creates_a_new_user_file_readable_by_its_owner_only(shell: Shell) -> None:
    run = shell.run("mcp", "add", "remote", "http://127.0.0.1:1/mcp", "--header", "X-Key: sk-1")
    assert run.returncode == 0, run.stderr
    assert stat.S_IMODE(shell.user_file.stat().st_mode) == 0o600  # it holds a literal token


def test_add_and_import_write_to_the_single_mcp_config_file(shell: Shell) -> None:
    source_fixtures(shell)
    chosen = shell.project / "team" / "servers.json"

    added = shell.run("mcp", "add", "--mcp-config", str(chosen), "later", "--",
                      "${CAT_CODE_TEST_UNSET_COMMAND}")  # fmt: skip
    after_name = shell.run("mcp", "add", "later2", "--mcp-config", str(chosen), "--",
                           "${CAT_CODE_TEST_UNSET_COMMAND}")  # fmt: skip
    imported = shell.run("--mcp-config", str(chosen), "mcp", "import", "--from", "gemini")

    assert added.returncode == 0, added.stderr
    assert f"Added stdio server 'later' to {chosen}" in added.stdout
    assert after_name.returncode == 0, after_name.stderr
    assert imported.returncode == 0, imported.stderr
    assert f"Imported 2 of 2 server(s) into {chosen}." in imported.stdout
    assert list(json.loads(chosen.read_text())["mcpServers"]) == [
        "later", "later2", "gem-sse", "gem-http"
    ]  # fmt: skip
    assert not shell.user_file.exists() and not shell.project_file.exists()


@pytest.mark.parametrize("verb", ["add", "import"])
def test_add_and_import_refuse_several_mcp_config_files(shell: Shell, verb: str) -> None:
    source_fixtures(shell)
    a, b = shell.project / "a.json", shell.project / "b.json"
    argv = ["later", "--", "x"] if verb == "add" else ["--from", "gemini"]

    run = shell.run("mcp", verb, "--mcp-config", str(a), "--mcp-config", str(b), *argv)
    both = shell.run("mcp", verb, "--mcp-config", str(a), "--scope", "user", *argv)

    assert run.returncode == 2 and both.returncode == 2
    assert "one --mcp-config file" in run.stderr and str(b) in run.stderr
    assert "--scope" in both.stderr and "--mcp-config" in both.stderr
    assert not a.exists() and not b.exists() and not shell.user_file.exists()


# -- remove -------------------------------------------------------------------------------


def test_remove_takes_the_entry_out_of_the_file_that_has_it(shell: Shell) -> None:
    before = write(shell.user_file, USER_FILE)
    write(shell.project_file, '{"mcpServers": {"local": {"command": "x"}}}')

    run = shell.run("mcp", "remove", "github")

    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == f"Removed MCP server 'github' from {shell.user_file}"
    after = shell.user_file.read_text()
    servers_open = before.index('"mcpServers": {') + len('"mcpServers": {')
    servers_close = before.index("}\n  },") + 4
    assert after == before[:servers_open] + before[servers_close:]  # '"mcpServers": {},'
    assert json.loads(shell.project_file.read_text()) == {"mcpServers": {"local": {"command": "x"}}}


def test_remove_of_a_name_in_both_files_asks_for_a_scope(shell: Shell) -> None:
    write(shell.user_file, '{"mcpServers": {"x": {"command": "user"}, "y": {"command": "y"}}}')
    write(shell.project_file, '{"mcpServers": {"x": {"command": "project"}}}')

    ambiguous = shell.run("mcp", "remove", "x")

    assert ambiguous.returncode == 2
    assert str(shell.user_file) in ambiguous.stderr and str(shell.project_file) in ambiguous.stderr
    assert "--scope" in ambiguous.stderr

    run = shell.run("mcp", "remove", "x", "--scope", "project")

    assert run.returncode == 0
    assert shell.project_file.read_text() == '{"mcpServers": {}}'
    assert json.loads(shell.user_file.read_text())["mcpServers"]["x"] == {"command": "user"}


def test_remove_of_an_unknown_name_fails_naming_where_it_looked(shell: Shell) -> None:
    run = shell.run("mcp", "remove", "ghost")
    assert run.returncode == 1
    assert "no MCP server named 'ghost'" in run.stderr and str(shell.user_file) in run.stderr


def test_remove_from_one_file_is_not_blocked_by_a_broken_other_file(shell: Shell) -> None:
    broken = write(shell.user_file, "{ not json")
    write(shell.project_file, '{"mcpServers": {"pj": {"command": "x"}}}')

    run = shell.run("mcp", "remove", "pj")
    disabled = shell.run("mcp", "disable", "ghost")
    named = shell.run("mcp", "remove", "pj", "--scope", "user")

    assert run.returncode == 0, run.stderr
    assert f"Removed MCP server 'pj' from {shell.project_file}" in run.stdout
    assert f"warning: {shell.user_file}:1:" in run.stderr and "skipped" in run.stderr
    assert shell.project_file.read_text() == '{"mcpServers": {}}'
    # Not found elsewhere: it may be in the broken file, so that file is the one at fault.
    assert disabled.returncode == 1 and f"{shell.user_file}:1:" in disabled.stderr
    assert "no MCP server named" not in disabled.stderr
    # --scope names the broken file: refused.
    assert named.returncode == 1 and f"{shell.user_file}:1:" in named.stderr
    assert shell.user_file.read_text() == broken


# -- get ----------------------------------------------------------------------------------


def test_get_masks_secrets_but_shows_variable_references(shell: Shell) -> None:
    port = free_port()  # nothing listens there
    write(shell.user_file, json.dumps({"mcpServers": {
        "echo": {"command": sys.executable, "args": [str(ECHO_SERVER)],
                 "env": {"API_KEY": "sk-live-123456", "FROM_ENV": "${MY_KEY}"}},
        "remote": {"type": "http",
                   "url": f"http://bob:hunter2@127.0.0.1:{port}/mcp?token=qwerty&v=${{VERSION}}",
                   "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}", "X-Api-Key": "abcdef"}},
    }}))  # fmt: skip
    env = {"MY_KEY": "expanded-secret", "VERSION": "1", "REMOTE_TOKEN": "tok-9f8e"}

    echo = shell.run("mcp", "get", "echo", "--json", env=env)
    remote = shell.run("mcp", "get", "remote", env=env)

    assert echo.returncode == 0, echo.stderr
    shown = json.loads(echo.stdout)
    assert shown["name"] == "echo" and shown["scope"] == "user"
    assert shown["file"] == str(shell.user_file)
    assert shown["entry"]["env"] == {"API_KEY": "****", "FROM_ENV": "${MY_KEY}"}
    assert shown["state"] == "CONNECTED" and shown["error"] is None
    assert sorted(t["tool"] for t in shown["tools"]) == [
        "add", "echo", "fail", "reverse", "sleep", "word_count"
    ]  # fmt: skip
    assert {"name": "mcp__echo__echo", "tool": "echo",
            "description": "Echo back the input text"} in shown["tools"]  # fmt: skip
    text = remote.stdout + remote.stderr
    assert f"http://****@127.0.0.1:{port}/mcp?token=****&v=${{VERSION}}" in remote.stdout
    assert "Authorization: Bearer ${REMOTE_TOKEN}" in remote.stdout
    assert "X-Api-Key: ****" in remote.stdout
    assert remote.returncode == 1  # nothing answers there
    assert "state:" in remote.stdout
    for secret in (
        "sk-live-123456",
        "expanded-secret",
        "hunter2",
        "bob",
        "qwerty",
        "abcdef",
        "tok-9f8e",
    ):
        assert secret not in echo.stdout and secret not in text


def test_get_masks_variable_defaults_and_secret_arguments(shell: Shell) -> None:
    write(shell.user_file, json.dumps({"mcpServers": {
        "echo": {"command": sys.executable,
                 "args": [str(ECHO_SERVER), "--api-key", "sk-arg-111", "--token=tok-arg-222"],
                 "env": {"K": "${MY_KEY:-default-secret-333}"}},
    }}))  # fmt: skip

    text = shell.run("mcp", "get", "echo")
    as_json = shell.run("mcp", "get", "echo", "--json")

    assert text.returncode == 0, text.stderr
    assert as_json.returncode == 0, as_json.stderr
    assert "K=${MY_KEY:-****}" in text.stdout
    assert f"{ECHO_SERVER} --api-key **** --token=****" in text.stdout
    shown = json.loads(as_json.stdout)
    assert shown["target"] == f"{sys.executable} {ECHO_SERVER} --api-key **** --token=****"
    assert shown["entry"]["args"] == [str(ECHO_SERVER), "--api-key", "****", "--token=****"]
    assert shown["entry"]["env"] == {"K": "${MY_KEY:-****}"}
    for secret in ("sk-arg-111", "tok-arg-222", "default-secret-333"):
        assert secret not in text.stdout + text.stderr + as_json.stdout + as_json.stderr


def test_get_and_list_quote_spaced_arguments_and_keep_masks_bare(shell: Shell) -> None:
    write(shell.user_file, json.dumps({"mcpServers": {
        "py": {"command": "./no-such-python", "args": ["-c", "import sys; print(1)",
                                                       "--api-key", "sk-arg-444"]},
    }}))  # fmt: skip
    shown = "./no-such-python -c 'import sys; print(1)' --api-key ****"

    text = shell.run("mcp", "get", "py")
    as_json = shell.run("mcp", "get", "py", "--json")
    listed = shell.run("mcp", "list")

    assert text.returncode == as_json.returncode == listed.returncode == 1
    assert f"  command:   {shown}\n" in text.stdout
    assert json.loads(as_json.stdout)["target"] == shown
    assert f"(stdio: {shown})" in listed.stdout
    assert "sk-arg-444" not in text.stdout + as_json.stdout + listed.stdout


def test_get_shows_the_users_entry_over_a_project_entry_of_its_name_and_a_disabled_state(
    shell: Shell,
) -> None:
    write(
        shell.user_file, json.dumps({"mcpServers": {"x": {"command": "user-x", "disabled": True}}})
    )
    write(shell.project_file, json.dumps({"mcpServers": {"x": {"command": "project-x"}}}))

    run = shell.run("mcp", "get", "x")

    assert run.returncode == 0, run.stderr
    assert f"scope:     user ({shell.user_file})" in run.stdout
    assert "command:   user-x" in run.stdout
    assert "state:     DISABLED" in run.stdout
    assert f"also defined in {shell.project_file}, which is not used" in run.stdout


def test_get_of_an_unknown_server_exits_1(shell: Shell) -> None:
    run = shell.run("mcp", "get", "ghost")
    assert run.returncode == 1 and "no MCP server named 'ghost'" in run.stderr


# -- enable / disable ---------------------------------------------------------------------


def test_disable_and_enable_write_the_disabled_field_in_place(shell: Shell) -> None:
    before = write(shell.user_file, USER_FILE)

    disabled = shell.run("mcp", "disable", "github")
    after_disable = shell.user_file.read_text()
    again = shell.run("mcp", "disable", "github")
    listed = shell.run("mcp", "list", "--json", env={"GITHUB_TOKEN": "t"})
    enabled = shell.run("mcp", "enable", "github")

    assert disabled.returncode == 0, disabled.stderr
    assert disabled.stdout.strip() == f"Disabled MCP server 'github' in {shell.user_file}"
    assert only_inserted(before, after_disable) == ', "disabled": true'
    assert again.returncode == 0 and "already disabled" in again.stdout
    assert json.loads(listed.stdout)[0]["state"] == "DISABLED"
    assert enabled.returncode == 0
    assert enabled.stdout.strip() == f"Enabled MCP server 'github' in {shell.user_file}"
    assert shell.user_file.read_text() == after_disable.replace('"disabled": true',
                                                                 '"disabled": false')  # fmt: skip


def test_enable_of_an_unknown_server_exits_1(shell: Shell) -> None:
    run = shell.run("mcp", "enable", "ghost")
    assert run.returncode == 1 and "no MCP server named 'ghost'" in run.stderr


# -- import -------------------------------------------------------------------------------


def source_fixtures(shell: Shell) -> None:
    """One config file per source, in each tool's documented shape and place."""
    home, project = shell.home, shell.project
    write(home / ".config/Claude/claude_desktop_config.json", json.dumps({
        "mcpServers": {"desktop-echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]}},
        "globalShortcut": "Ctrl+Space",
    }))  # fmt: skip
    write(home / ".claude.json", json.dumps({
        "numStartups": 7,
        "mcpServers": {"github": {"type": "stdio", "command": "npx", "args": ["gh"], "env": {}}},
        "projects": {str(project): {"mcpServers": {
            "sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp"}}}},
    }))  # fmt: skip
    write(
        home / ".cursor/mcp.json",
        json.dumps(
            {
                "mcpServers": {
                    "cursor-remote": {
                        "url": "https://c.example.com/mcp",
                        "headers": {"K": "${env:C_KEY}"},
                    }
                }
            }
        ),
    )
    write(
        project / ".vscode/mcp.json",
        """{
  // VS Code
  "inputs": [{"type": "promptString", "id": "token", "password": true}],
  "servers": {
    "vs-http": {"type": "http", "url": "https://v.example.com/mcp",
                "headers": {"Authorization": "Bearer ${input:token}"}},
  }
}""",
    )
    write(home / ".gemini/settings.json", json.dumps({"theme": "Dracula", "mcpServers": {
        "gem-sse": {"url": "http://127.0.0.1:1/sse", "timeout": 4000},
        "gem-http": {"httpUrl": "https://g.example.com/mcp"}}}))  # fmt: skip


def test_import_from_every_source_adds_converted_entries_and_keeps_the_rest(shell: Shell) -> None:
    source_fixtures(shell)
    before = write(shell.user_file, USER_FILE)

    run = shell.run("mcp", "import")

    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert f"From claude-desktop ({shell.home}/.config/Claude/claude_desktop_config.json):" in out
    assert f"From vscode ({shell.project}/.vscode/mcp.json):" in out
    assert "skipped: 'github' already exists" in out  # a clash with the user's own entry
    assert "note: asks for input 'token': set TOKEN in the environment instead" in out
    assert f"Imported 5 of 7 server(s) into {shell.user_file}." in out
    assert "1 server(s) from this folder's own files (vs-http) went into" in out
    after = shell.user_file.read_text()
    assert after.startswith(before[: before.index("\n  },\n")])  # the old entries, untouched
    assert after.endswith(before[before.index("\n  },\n") :])  # and everything after them
    servers = json.loads(after)["mcpServers"]
    assert list(servers) == ["github", "desktop-echo", "sentry", "cursor-remote", "gem-sse",
                             "gem-http"]  # fmt: skip
    project_servers = json.loads(shell.project_file.read_text())["mcpServers"]
    assert servers["github"]["command"] == "npx"  # the user's, not Claude Code's
    assert servers["sentry"] == {"type": "http", "url": "https://mcp.sentry.dev/mcp"}
    assert servers["cursor-remote"]["headers"] == {"K": "${C_KEY}"}
    assert project_servers["vs-http"]["headers"] == {"Authorization": "Bearer ${TOKEN}"}
    assert servers["gem-sse"] == {"type": "sse", "url": "http://127.0.0.1:1/sse",
                                  "requestTimeoutMs": 4000}  # fmt: skip
    assert servers["gem-http"] == {"type": "http", "url": "https://g.example.com/mcp"}
    listed = shell.run("mcp", "tools", "desktop-echo")
    assert "mcp__desktop-echo__echo" in listed.stdout


def test_import_dry_run_shows_and_writes_nothing(shell: Shell) -> None:
    source_fixtures(shell)

    run = shell.run("mcp", "import", "--dry-run", "--from", "gemini")

    assert run.returncode == 0, run.stderr
    assert f"From gemini ({shell.home}/.gemini/settings.json):" in run.stdout
    assert "gem-sse" in run.stdout and "sse" in run.stdout and "→ would add" in run.stdout
    assert "Dry run: 2 of 2 server(s) would be imported" in run.stdout
    assert "desktop-echo" not in run.stdout
    assert not shell.user_file.exists()


def test_import_with_force_replaces_a_clash_into_the_project_file(shell: Shell) -> None:
    source_fixtures(shell)
    write(shell.project_file, '{\n  "mcpServers": {\n    "gem-http": {"command": "old"}\n  }\n}\n')

    skipped = shell.run("mcp", "import", "--from", "gemini", "--scope", "project")
    forced = shell.run("mcp", "import", "--from", "gemini", "--scope", "project", "--force")

    assert "skipped: 'gem-http' already exists" in skipped.stdout
    assert json.loads(shell.project_file.read_text())["mcpServers"]["gem-http"] == {
        "type": "http", "url": "https://g.example.com/mcp"
    }  # fmt: skip
    assert forced.returncode == 0 and "replaced the existing entry" in forced.stdout


def test_import_with_nothing_to_find_names_where_it_looked(shell: Shell) -> None:
    run = shell.run("mcp", "import", "--from", "cursor")
    assert run.returncode == 0
    assert run.stdout.splitlines() == [
        "No MCP servers found. Looked in:",
        f"  {shell.home}/.cursor/mcp.json",
        f"  {shell.project}/.cursor/mcp.json",
    ]


def test_import_leaves_the_project_file_to_cat_code_and_masks_secret_arguments(
    shell: Shell,
) -> None:
    write(shell.project_file, json.dumps({"mcpServers": {"pj": {"command": "pj-server"}}}))
    db = {"command": "db-mcp", "args": ["--password", "pw-444", "--port", "5432"]}
    write(shell.home / ".claude.json", json.dumps({"mcpServers": {"db": db}}))

    run = shell.run("mcp", "import", "--from", "claude-code")

    assert run.returncode == 0, run.stderr
    assert "pj-server  → skipped: already read by cat-code (project scope)" in run.stdout
    assert "db-mcp --password **** --port 5432  → added" in run.stdout
    assert "pw-444" not in run.stdout + run.stderr
    assert list(json.loads(shell.user_file.read_text())["mcpServers"]) == ["db"]
    assert json.loads(shell.user_file.read_text())["mcpServers"]["db"]["args"][1] == "pw-444"


def test_import_refuses_a_broken_target_file(shell: Shell) -> None:
    source_fixtures(shell)
    before = write(shell.user_file, "{ not json")

    run = shell.run("mcp", "import")

    assert run.returncode == 1
    assert f"{shell.user_file}:1:" in run.stderr
    assert shell.user_file.read_text() == before


# -- help ---------------------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["add", "remove", "get", "enable", "disable", "import"])
def test_every_verb_has_help(shell: Shell, verb: str) -> None:
    run = shell.run("mcp", verb, "--help")
    assert run.returncode == 0
    assert run.stdout.startswith(f"usage: cat-code mcp {verb}")


def test_add_and_get_help_say_what_the_options_and_the_masking_do(shell: Shell) -> None:
    add = " ".join(shell.run("mcp", "add", "--help").stdout.split())
    get = " ".join(shell.run("mcp", "get", "--help").stdout.split())
    # -t lists http, sse and stdio: the help says what each is for.
    assert "-t {http,sse,stdio}" in add
    assert "http (a URL's default: Streamable HTTP) or sse for a URL; stdio" in add
    assert "the value after a secret- looking argument: --api-key ****, --token=****" in get
