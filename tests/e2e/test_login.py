"""``cat-code mcp login`` end to end: the real command against a real OAuth-protected MCP
server on 127.0.0.1 (`tests/servers/oauth_server.py`, the official SDK's authorization
and resource server), with the browser replaced by a plain GET of the printed URL.

`test_sign_in_use_refresh_revoke_and_sign_out` needs the OAuth engine (``McpAuth``); the
others hold without it.
"""

from __future__ import annotations

import json
import os
import queue
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from conftest import REPO

SERVERS = Path(__file__).resolve().parent.parent / "servers"
from scripted.http_peers import free_port, running  # noqa: E402

NAME = "linear"


def cat_code(*args: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``cat-code ARGS`` to completion (bounded), never reading the terminal."""
    return subprocess.run(
        [sys.executable, "-m", "cat_code", *args],
        cwd=cwd,
        env={**os.environ, "CAT_CODE_HOME": str(home), "BROWSER": "false"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def oauth_server() -> Iterator[str]:
    """The server's origin; it is stopped when the test ends."""
    port = free_port()
    with running([sys.executable, str(SERVERS / "oauth_server.py"), str(port)], port):
        yield f"http://127.0.0.1:{port}"


def _config(tmp_path: Path, servers: dict[str, object]) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


def _lines(stream: object, into: queue.Queue[str | None]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)
    into.put(None)


def _login(config: str, home: Path, cwd: Path, *, verbose: bool) -> tuple[int, str, str]:
    """``mcp login NAME --no-browser``, the browser played by a GET of the printed URL."""
    argv = [sys.executable, "-m", "cat_code", "--mcp-config", config, "mcp", "login", NAME]
    argv += ["--no-browser", *(["-v"] if verbose else [])]
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, "CAT_CODE_HOME": str(home)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        errors: queue.Queue[str | None] = queue.Queue()
        reader = threading.Thread(target=_lines, args=(process.stderr, errors), daemon=True)
        reader.start()
        seen: list[str] = []
        url = None
        deadline = time.monotonic() + 30
        while url is None and time.monotonic() < deadline:
            try:
                line = errors.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            seen.append(line)
            if len(seen) >= 2 and seen[-2].startswith(f"Open this URL to sign in to {NAME}:"):
                url = line.strip()
        assert url is not None, "no sign-in URL printed:\n" + "".join(seen)
        # The browser: follow the authorization server's redirect to the loopback callback.
        page = httpx2.get(url, follow_redirects=True, timeout=30)
        assert page.status_code == 200
        assert "Sign-in finished — you can close this tab" in page.text
        out, _ = process.communicate(timeout=60)
        reader.join(10)
        while (line := errors.get_nowait() if not errors.empty() else None) is not None:
            seen.append(line)
        return process.returncode, out, "".join(seen)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def _stats(origin: str) -> dict[str, object]:
    return httpx2.get(f"{origin}/test/stats", timeout=10).json()  # type: ignore[no-any-return]


def test_sign_in_use_refresh_revoke_and_sign_out(
    tmp_path: Path, cat_code_home: Path, oauth_server: str
) -> None:
    url = f"{oauth_server}/mcp"
    config = _config(tmp_path, {NAME: {"type": "http", "url": url}})
    outputs: list[str] = []

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = cat_code("--mcp-config", config, *args, home=cat_code_home, cwd=tmp_path)
        outputs.extend([done.stdout, done.stderr])
        return done

    # Not signed in: NEEDS_LOGIN, exit 1, the command to run.
    listed = run("mcp", "list")
    assert listed.returncode == 1, listed.stderr
    assert f"  {NAME}  NEEDS_LOGIN  (http: {url}) — run: cat-code mcp login {NAME}" in listed.stdout
    as_json = run("mcp", "list", "--json")
    assert json.loads(as_json.stdout)[0]["state"] == "NEEDS_LOGIN"

    # Sign in, the browser being a plain GET.
    code, out, err = _login(config, cat_code_home, tmp_path, verbose=True)
    outputs += [out, err]
    assert code == 0, err
    assert out == f"Signed in to {NAME}.\n"
    credentials = cat_code_home / "credentials.json"
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    assert stat.S_IMODE(cat_code_home.stat().st_mode) == 0o700

    # Connected, and a tool call carries the stored token.
    listed = run("mcp", "list", "-v")
    assert listed.returncode == 0, listed.stderr
    assert f"{NAME}  CONNECTED  1 tool(s)" in listed.stdout
    called = run("mcp", "call", f"mcp__{NAME}__echo", '{"text": "hi"}')
    assert (called.returncode, called.stdout) == (0, "echo: hi\n"), called.stderr
    counts = _stats(oauth_server)["counts"]
    assert counts == {"authorize": 1, "code": 1, "refresh": 0, "register": 1}  # type: ignore[comparison-overlap]

    # An access token past its expiry is refreshed before use, silently.
    stored = json.loads(credentials.read_text())
    (key,) = stored["servers"]
    stored["servers"][key]["expires_at"] = time.time() - 10
    credentials.write_text(json.dumps(stored))
    called = run("mcp", "call", f"mcp__{NAME}__echo", '{"text": "again"}', "-v")
    assert (called.returncode, called.stdout) == (0, "echo: again\n"), called.stderr
    assert _stats(oauth_server)["counts"]["refresh"] == 1  # type: ignore[index]

    # One the server stopped taking (401) is refreshed once, silently.
    httpx2.post(f"{oauth_server}/test/expire-access", timeout=10)
    called = run("mcp", "call", f"mcp__{NAME}__echo", '{"text": "third"}')
    assert (called.returncode, called.stdout) == (0, "echo: third\n"), called.stderr
    assert _stats(oauth_server)["counts"]["refresh"] == 2  # type: ignore[index]

    # A revoked refresh token: the server needs a sign-in again.
    httpx2.post(f"{oauth_server}/test/revoke", timeout=10)
    listed = run("mcp", "list", "-v")
    assert listed.returncode == 1
    assert f"{NAME}  NEEDS_LOGIN" in listed.stdout

    # Signed in again (no -v this time), then out: the tokens are gone from the file.
    code, out, err = _login(config, cat_code_home, tmp_path, verbose=False)
    outputs += [out, err]
    assert code == 0, err
    # Registered once per authorization server: the second sign-in reused the client
    # (its callback port was free again).
    assert _stats(oauth_server)["counts"]["register"] == 1  # type: ignore[index]
    assert run("mcp", "list").returncode == 0
    out_run = run("mcp", "logout", NAME)
    assert (out_run.returncode, out_run.stdout) == (0, f"Signed out of {NAME}.\n")
    assert json.loads(credentials.read_text())["servers"] == {}
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600

    # No secret the server handed out was ever printed or logged.
    secrets = _stats(oauth_server)["issued"]
    assert isinstance(secrets, list) and len(secrets) >= 5
    everything = "\n".join(outputs)
    leaked = [s for s in secrets if s in everything]
    assert leaked == []


def test_login_and_logout_name_what_cannot_sign_in(tmp_path: Path, cat_code_home: Path) -> None:
    config = _config(
        tmp_path,
        {
            "local": {"command": sys.executable, "args": ["-c", "pass"]},
            "mine": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
            "remote": {"url": "http://127.0.0.1:9/mcp"},
        },
    )
    cases = {
        ("login", "nope"): "cat-code: no MCP server named 'nope' (configured: local, mine, remote)",
        ("login", "local"): "only http and sse servers sign in",
        ("logout", "mine"): "sends its own Authorization header",
    }
    for (command, name), message in cases.items():
        done = cat_code("--mcp-config", config, "mcp", command, name, home=cat_code_home, cwd=REPO)
        assert done.returncode == 2, done
        assert message in done.stderr
    done = cat_code("--mcp-config", config, "mcp", "logout", "remote", home=cat_code_home, cwd=REPO)
    assert (done.returncode, done.stdout) == (
        0,
        "No sign-in was stored for 'remote'; nothing to do.\n",
    )


def test_login_and_logout_have_help_in_the_style_of_the_others(
    tmp_path: Path, cat_code_home: Path
) -> None:
    done = cat_code("mcp", "--help", home=cat_code_home, cwd=tmp_path)
    assert "login" in done.stdout and "logout" in done.stdout
    login = cat_code("mcp", "login", "--help", home=cat_code_home, cwd=tmp_path)
    assert "--no-browser" in login.stdout and "credentials.json" in login.stdout
