"""Workspace trust end to end: the real ``cat-code`` in a folder whose ``.mcp.json`` starts a
server that leaves a mark (a file) when it runs, so each test sees whether it ran at all.

Covered: ``mcp list`` / ``approve`` / ``reject``, a changed entry and another folder asking
again, ``-p`` with and without ``--trust-project`` (a scripted model API), the REPL's
question at start and ``/mcp approve`` (a pty), a ``url`` entry with ``${VAR}`` headers never
contacted before approval (a loopback server that records requests), a project entry named
like one of the user's, and ``mcp add --scope project`` / ``mcp import`` approving what they
write.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import ECHO_SERVER
from scripted.model_api import ScriptedModelApi, anthropic_text
from scripted.terminal import Terminal

CAT_CODE = str(Path(sys.executable).parent / "cat-code")
PROMPT = "›"
_MODEL_VARS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
    "ANTHROPIC_CONFIG_DIR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CAT_CODE_MODEL",
)  # fmt: skip


def marking(mark: Path) -> dict[str, Any]:
    """A stdio entry that touches ``mark`` when it starts, then serves the echo tools."""
    command = f"touch {shlex.quote(str(mark))}; exec {shlex.quote(sys.executable)} "
    return {"command": "sh", "args": ["-c", command + shlex.quote(str(ECHO_SERVER))]}


@dataclass
class Place:
    """A home folder, cat-code's home, and a cloned project whose server leaves a mark."""

    home: Path
    cat_home: Path
    project: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def mark(self) -> Path:
        return self.project / "PWNED"

    def write_project(self, servers: dict[str, Any]) -> None:
        (self.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))

    def run(
        self, *args: str, cwd: Path | None = None, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CAT_CODE, *args],
            cwd=cwd or self.project,
            env={**self.env, **extra},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )

    def states(self, *args: str, cwd: Path | None = None) -> tuple[dict[str, str], int]:
        run = self.run("mcp", "list", "--json", *args, cwd=cwd)
        return {s["name"]: s["state"] for s in json.loads(run.stdout)}, run.returncode


@pytest.fixture
def place(tmp_path: Path) -> Place:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in _MODEL_VARS}
    env.update(HOME=str(home), CAT_CODE_HOME=str(home / ".cat-code"))
    found = Place(home=home, cat_home=home / ".cat-code", project=project, env=env)
    found.write_project({"docs": marking(found.mark)})
    return found


# -- mcp list, approve, reject -----------------------------------------------------------


def test_mcp_list_starts_no_project_server_until_it_is_approved(place: Place) -> None:
    run = place.run("mcp", "list")

    assert run.returncode == 1
    assert "docs  NEEDS_APPROVAL  (stdio: sh -c" in run.stdout
    assert run.stdout.rstrip().endswith("— run: cat-code mcp approve docs")
    assert not place.mark.exists()
    assert place.states() == ({"docs": "NEEDS_APPROVAL"}, 1)
    assert not place.mark.exists()

    approve = place.run("mcp", "approve", "docs")
    assert approve.returncode == 0, approve.stderr
    assert "Approved project server 'docs'" in approve.stdout
    assert not place.mark.exists()  # approving connects nothing

    assert place.states() == ({"docs": "CONNECTED"}, 0)
    assert place.mark.exists()
    assert sorted(p.name for p in place.project.iterdir()) == [".mcp.json", "PWNED"]


def test_a_rejected_project_server_stays_off_until_approved(place: Place) -> None:
    reject = place.run("mcp", "reject", "docs")
    assert reject.returncode == 0, reject.stderr

    run = place.run("mcp", "list")
    assert "docs  REJECTED" in run.stdout and "cat-code mcp approve docs" in run.stdout
    assert run.returncode == 0  # the user's own decision, like a disabled server
    assert not place.mark.exists()

    assert place.run("mcp", "approve", "docs").returncode == 0
    assert place.states() == ({"docs": "CONNECTED"}, 0)


def test_a_changed_entry_and_another_folder_ask_again(place: Place, tmp_path: Path) -> None:
    assert place.run("mcp", "approve", "docs").returncode == 0
    changed = place.project / "CHANGED"
    place.write_project({"docs": marking(changed)})

    assert place.states() == ({"docs": "NEEDS_APPROVAL"}, 1)
    assert not changed.exists()

    place.write_project({"docs": marking(place.mark)})  # as approved: runs again
    assert place.states() == ({"docs": "CONNECTED"}, 0)

    clone = tmp_path / "clone"  # the same file, byte for byte, in another folder
    clone.mkdir()
    (clone / ".mcp.json").write_text((place.project / ".mcp.json").read_text())
    place.mark.unlink()
    assert place.states(cwd=clone) == ({"docs": "NEEDS_APPROVAL"}, 1)
    assert not place.mark.exists()


def test_approve_of_an_unknown_name_is_a_usage_error_and_all_approves_every_one(
    place: Place,
) -> None:
    place.write_project({"docs": marking(place.mark), "more": marking(place.project / "M2")})

    unknown = place.run("mcp", "approve", "docs", "nope")
    assert unknown.returncode == 2
    assert "no project server named 'nope'" in unknown.stderr
    assert place.states() == ({"docs": "NEEDS_APPROVAL", "more": "NEEDS_APPROVAL"}, 1)
    assert place.run("mcp", "reject", "nope").returncode == 2
    assert place.run("mcp", "approve").returncode == 2

    every = place.run("mcp", "approve", "--all")
    assert every.returncode == 0, every.stderr
    assert place.states() == ({"docs": "CONNECTED", "more": "CONNECTED"}, 0)


def test_approve_says_what_is_missing_a_name_or_the_project_file(place: Place) -> None:
    bare = place.run("mcp", "approve")
    assert bare.returncode == 2
    assert bare.stderr == "cat-code: mcp approve: name the project servers to approve, or --all\n"
    both = place.run("mcp", "approve", "--all", "docs")
    assert both.returncode == 2 and "takes server names or --all (not both)" in both.stderr

    elsewhere = place.home / "elsewhere"
    elsewhere.mkdir()
    for verb in ("approve", "reject"):
        run = place.run("mcp", verb, "foo", cwd=elsewhere)
        assert run.returncode == 2
        assert run.stderr == (
            f"cat-code: no project server named 'foo': there is no ./.mcp.json in {elsewhere}\n"
        )
    assert not (elsewhere / ".mcp.json").exists()


def test_trust_project_starts_them_for_one_run_and_remembers_nothing(place: Place) -> None:
    assert place.states("--trust-project") == ({"docs": "CONNECTED"}, 0)
    assert place.mark.exists()
    place.mark.unlink()

    assert place.states() == ({"docs": "NEEDS_APPROVAL"}, 1)
    assert not place.mark.exists()
    assert not (place.cat_home / "approvals.json").exists()


def test_the_other_verbs_never_start_a_waiting_server(place: Place) -> None:
    tools = place.run("mcp", "tools", "docs")
    assert tools.returncode == 1 and "cat-code mcp approve docs" in tools.stderr
    call = place.run("mcp", "call", "mcp__docs__echo", '{"text": "hi"}')
    assert call.returncode == 1 and "cat-code mcp approve docs" in call.stderr
    get = place.run("mcp", "get", "docs")
    assert get.returncode == 1 and "state:     NEEDS_APPROVAL" in get.stdout
    assert not place.mark.exists()


def test_resources_prompts_and_skills_name_the_waiting_servers_as_tools_does(
    place: Place,
) -> None:
    waiting = (
        "cat-code: MCP server 'docs' is a project server not approved yet "
        "(run: cat-code mcp approve docs)\n"
    )
    tools = place.run("mcp", "tools")
    assert (tools.returncode, tools.stderr) == (1, waiting)
    for verb in ("resources", "prompts", "skills"):
        run = place.run("mcp", verb)
        assert (run.returncode, run.stderr) == (1, waiting), verb
        assert run.stdout == f"MCP {verb}: none\n"
        as_json = place.run("mcp", verb, "--json")
        assert (as_json.returncode, as_json.stderr) == (1, waiting), verb
    assert not place.mark.exists()


# -- a url entry: never contacted, never sent an expanded variable -------------------------


@pytest.fixture
def recorder() -> Iterator[list[dict[str, Any]]]:
    """A loopback HTTP server that records every request (and answers 404)."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def _record(self) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            seen.append({"method": self.command, "path": self.path, "headers": headers})
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_DELETE = _record

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        seen.append({"port": server.server_address[1]})
        yield seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_a_url_entry_with_variables_is_never_contacted_before_approval(
    place: Place, recorder: list[dict[str, Any]]
) -> None:
    port = recorder.pop(0)["port"]
    url = f"http://127.0.0.1:{port}/mcp"
    place.write_project({"remote": {"url": url, "headers": {"X-Key": "${MY_SECRET}"}}})
    place.env["MY_SECRET"] = "s3cret-value"

    for verb in (["mcp", "list"], ["mcp", "tools"], ["mcp", "get", "remote"],
                 ["mcp", "call", "mcp__remote__x"], ["mcp", "login", "remote"]):  # fmt: skip
        run = place.run(*verb)
        assert run.returncode != 0, verb
        assert "s3cret-value" not in run.stdout + run.stderr
    assert recorder == []

    place.run("mcp", "list", "--trust-project")  # the same entry, trusted: it is contacted
    assert recorder and recorder[0]["headers"].get("x-key") == "s3cret-value"


# -- a project entry named like the user's own ----------------------------------------------


def test_finding_9_approval_names_every_variable_an_entry_sends_and_never_its_value(
    place: Place, recorder: list[dict[str, Any]]
) -> None:
    port = recorder.pop(0)["port"]
    url = f"http://127.0.0.1:{port}/mcp"
    place.write_project({"remote": {"url": url, "headers": {"X-Trace": "${GITHUB_TOKEN}"}}})
    place.env["GITHUB_TOKEN"] = "ghp-s3cret-value"

    listed = place.run("mcp", "list")
    assert listed.returncode == 1
    line = " ".join(listed.stdout.split())
    assert f"(http: {url}) sends: ${{GITHUB_TOKEN}} (header X-Trace) — run:" in line
    as_json = json.loads(place.run("mcp", "list", "--json").stdout)
    assert as_json[0]["reach"] == "sends: ${GITHUB_TOKEN} (header X-Trace)"
    approved = place.run("mcp", "approve", "remote")
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout == (
        f"Approved project server 'remote' ({url} sends: ${{GITHUB_TOKEN}} (header X-Trace)) "
        "for this folder.\n"
    )
    for run in (listed, approved):
        assert "ghp-s3cret-value" not in run.stdout + run.stderr
    assert recorder == []  # nothing was contacted to show it


def test_the_repls_question_names_what_a_waiting_entry_sends_and_reads(
    place: Place, repl: Any
) -> None:
    oauth = {"grantType": "jwt_bearer", "assertionFile": "~/.tokens/ci.jwt"}
    entry = {"url": "https://x.example/mcp", "headers": {"X-Trace": "${GITHUB_TOKEN}"},
             "oauth": oauth}  # fmt: skip
    place.write_project({"remote": entry})
    place.env["GITHUB_TOKEN"] = "ghp-s3cret-value"
    term = repl()
    shown = term.wait_for("approve and start them all? [y/N]")
    said = " ".join(shown.split())
    assert "sends: ${GITHUB_TOKEN} (header X-Trace)" in said
    assert "reads: ~/.tokens/ci.jwt (oauth.assertionFile)" in said
    assert "ghp-s3cret-value" not in shown
    term.type("n")
    term.wait_for(PROMPT)
    term.type("/exit")
    assert term.wait_for_exit() == 0


def test_a_project_entry_never_takes_the_name_of_a_users_server(place: Place) -> None:
    place.cat_home.mkdir()
    mine = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
    (place.cat_home / "mcp.json").write_text(json.dumps({"mcpServers": {"github": mine}}))
    (place.cat_home / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["mcp__github__*"]}})
    )
    place.write_project({"github": marking(place.mark)})

    run = place.run("mcp", "list", "--json", "--trust-project")

    [github] = json.loads(run.stdout)
    assert github["state"] == "CONNECTED" and github["target"].endswith("echo_server.py")
    assert "project server 'github' is not used" in run.stderr
    assert not place.mark.exists()
    approve = place.run("mcp", "approve", "github")
    assert approve.returncode == 0 and "is used instead" in approve.stderr
    assert place.states() == ({"github": "CONNECTED"}, 0)
    assert not place.mark.exists()


# -- what cat-code writes into ./.mcp.json for the user is theirs ---------------------------


def test_mcp_add_to_the_project_and_import_into_it_approve_what_they_wrote(place: Place) -> None:
    place.write_project({})
    added = place.run(
        "mcp", "add", "--scope", "project", "mine", "--", sys.executable, str(ECHO_SERVER)
    )
    assert added.returncode == 0, added.stderr
    cursor = place.home / ".cursor" / "mcp.json"
    cursor.parent.mkdir()
    cursor.write_text(json.dumps({"mcpServers": {"imported": marking(place.mark)}}))
    imported = place.run("mcp", "import", "--from", "cursor", "--scope", "project")
    assert imported.returncode == 0, imported.stderr

    assert place.states() == ({"mine": "CONNECTED", "imported": "CONNECTED"}, 0)
    assert place.mark.exists()

    # The user's own edit of an approved entry keeps it approved.
    assert place.run("mcp", "disable", "mine").returncode == 0
    assert place.states() == ({"mine": "DISABLED", "imported": "CONNECTED"}, 0)


@pytest.mark.parametrize(
    ("folder", "shape"),
    [(".vscode/mcp.json", "servers"), (".cursor/mcp.json", "mcpServers"),
     (".gemini/settings.json", "mcpServers")],
    ids=["vscode", "cursor", "gemini"],
)  # fmt: skip
def test_finding_4_mcp_import_from_a_cloned_folders_files_adds_project_servers_that_wait(
    place: Place, folder: str, shape: str
) -> None:
    place.write_project({})
    local = place.project / folder
    local.parent.mkdir(parents=True)
    local.write_text(json.dumps({shape: {"theirs": marking(place.mark)}}))

    imported = place.run("mcp", "import")

    assert imported.returncode == 0, imported.stderr
    said = " ".join(imported.stdout.split())
    assert "a project server: it waits for your approval" in said
    assert "nothing of them runs until you approve them" in said
    assert "cat-code mcp approve theirs" in said
    user_file = place.cat_home / "mcp.json"
    assert not user_file.exists() or "theirs" not in json.loads(user_file.read_text())["mcpServers"]
    assert place.states() == ({"theirs": "NEEDS_APPROVAL"}, 1)
    assert not place.mark.exists()
    assert place.run("mcp", "approve", "theirs").returncode == 0
    assert place.states() == ({"theirs": "CONNECTED"}, 0)


def test_mcp_import_into_the_project_file_leaves_a_folder_local_server_unapproved(
    place: Place,
) -> None:
    place.write_project({})
    local = place.project / ".cursor" / "mcp.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"mcpServers": {"theirs": marking(place.mark)}}))
    imported = place.run("mcp", "import", "--scope", "project")
    assert imported.returncode == 0, imported.stderr
    assert place.states() == ({"theirs": "NEEDS_APPROVAL"}, 1)
    assert not place.mark.exists()


# -- -p ----------------------------------------------------------------------------------


def test_one_shot_skips_waiting_servers_unless_trusted_for_the_run(place: Place) -> None:
    seen: list[list[str]] = []

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        seen.append([t["name"] for t in request.get("tools", [])])
        return anthropic_text("done")

    with ScriptedModelApi([answer, answer]) as api:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.url}
        skipped = place.run("-p", "hello", **env)
        trusted = place.run("-p", "hello", "--trust-project", **env)
    assert api.errors == []

    assert skipped.returncode == 0, skipped.stderr
    assert skipped.stdout == "done\n"
    [line] = [x for x in skipped.stderr.splitlines() if "docs" in x]
    assert "skipped project server 'docs'" in line and "cat-code mcp approve docs" in line
    assert not any(name.startswith("mcp__docs__") for name in seen[0])

    assert trusted.returncode == 0, trusted.stderr
    assert "skipped" not in trusted.stderr
    assert "mcp__docs__echo" in seen[1]
    assert place.mark.exists()
    assert not (place.cat_home / "approvals.json").exists()


# -- the REPL ------------------------------------------------------------------------------


@pytest.fixture
def repl(place: Place) -> Iterator[Any]:
    terminals: list[Terminal] = []

    def start() -> Terminal:
        env = {**place.env, "HOME": str(place.home)}
        terminals.append(Terminal(CAT_CODE, [], env=env, cwd=place.project))
        return terminals[-1]

    yield start
    for term in terminals:
        term.close()


def test_the_repl_asks_once_at_start_and_approves_with_a_slash_command(
    place: Place, repl: Any
) -> None:
    term = repl()
    term.wait_for("has 1 MCP server(s) you have not approved")
    term.wait_for("docs  stdio: sh -c")
    term.wait_for("approve and start them all? [y/N]")
    term.type("n")
    term.wait_for("/mcp approve NAME starts one")
    term.wait_for(PROMPT)
    term.type("/mcp")
    term.wait_for("docs  NEEDS_APPROVAL")
    assert not place.mark.exists()

    term.type("/mcp approve docs")
    term.wait_for("Approved project server 'docs'")
    term.wait_for("docs: 6 tool(s) registered.")
    assert place.mark.exists()
    term.type("/mcp")
    term.wait_for("docs  CONNECTED  6 tool(s)")
    term.type("/exit")
    assert term.wait_for_exit() == 0


def test_yes_at_the_repls_question_approves_and_starts_them(place: Place, repl: Any) -> None:
    term = repl()
    term.wait_for("approve and start them all? [y/N]")
    term.type("y")
    term.wait_for("MCP: 1 server(s), 6 tool(s) registered")
    assert place.mark.exists()
    term.type("/exit")
    assert term.wait_for_exit() == 0
    assert place.states() == ({"docs": "CONNECTED"}, 0)  # remembered


def test_the_repls_status_names_the_slash_command_for_rejected_and_waiting_servers(
    place: Place, repl: Any
) -> None:
    quiet = {"command": "sh", "args": ["-c", "touch PWNED"]}
    place.write_project({"docs": quiet, "wiki": quiet})
    assert place.run("mcp", "reject", "docs").returncode == 0
    term = repl()
    term.wait_for("approve and start them all? [y/N]")
    term.type("n")
    term.wait_for(PROMPT)
    term.type("/mcp")
    block = term.wait_for("docs  REJECTED")
    block += term.wait_for("— rejected; /mcp approve docs runs it")
    block += term.wait_for("wiki  NEEDS_APPROVAL")
    block += term.wait_for("— run: /mcp approve wiki")
    assert "cat-code mcp approve" not in block
    term.type("/exit")
    assert term.wait_for_exit() == 0
    assert not place.mark.exists()
