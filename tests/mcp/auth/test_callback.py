"""`LoopbackAuthorizer`: a real listener on 127.0.0.1, a plain GET playing the browser."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import signal
import socket
import sys
import webbrowser
from pathlib import Path

import httpx2
import pytest

from cat_code.mcp.auth.callback import LoopbackAuthorizer, SignInError

AUTH_URL = "https://auth.example.com/authorize?client_id=c&state=st4te&code_challenge=x"


async def _get(url: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=5) as client:
        return await client.get(url)


async def _wait_for_prompt(out: io.StringIO) -> None:
    while "Open this URL" not in out.getvalue():
        await asyncio.sleep(0.005)


def _authorizer(**options: object) -> tuple[LoopbackAuthorizer, io.StringIO, list[str]]:
    out = io.StringIO()
    opened: list[str] = []

    def browser(url: str) -> bool:
        opened.append(url)
        return True

    options.setdefault("browser", browser)
    return LoopbackAuthorizer("linear", out=out, **options), out, opened  # type: ignore[arg-type]


async def test_the_redirect_uri_is_a_loopback_ip_callback_listened_on_only_there() -> None:
    authorizer, _, _ = _authorizer()
    try:
        uri = await authorizer.redirect_uri()
        assert uri == f"http://127.0.0.1:{authorizer.port}/callback"
        assert await authorizer.redirect_uri() == uri  # once
        server = authorizer._server
        assert server is not None
        assert {s.getsockname()[0] for s in server.sockets} == {"127.0.0.1"}
    finally:
        await authorizer.aclose()
        await authorizer.aclose()


async def test_the_redirect_is_answered_with_a_page_and_its_query_returned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    authorizer, out, opened = _authorizer()
    try:
        uri = await authorizer.redirect_uri()
        async with asyncio.timeout(5):
            waiting = asyncio.create_task(authorizer.authorize(AUTH_URL))
            await _wait_for_prompt(out)
            answer = await _get(f"{uri}?code=the-c0de&state=st4te&iss=https%3A%2F%2Fa")
            result = await waiting
        assert answer.status_code == 200
        assert "Sign-in finished — you can close this tab" in answer.text
        assert dict(result) == {"code": "the-c0de", "state": "st4te", "iss": "https://a"}
        assert out.getvalue().startswith(f"Open this URL to sign in to linear:\n{AUTH_URL}\n")
        assert authorizer._browser_thread is not None
        await asyncio.to_thread(authorizer._browser_thread.join, 5)
        assert opened == [AUTH_URL]
        ours = " ".join(r.getMessage() for r in caplog.records if r.name.startswith("cat_code"))
        assert "redirect received" in ours
        assert "the-c0de" not in ours and "st4te" not in ours
    finally:
        await authorizer.aclose()


async def test_other_paths_and_other_sign_ins_are_ignored_until_ours_comes() -> None:
    authorizer, out, _ = _authorizer()
    try:
        uri = await authorizer.redirect_uri()
        base = uri.removesuffix("/callback")
        async with asyncio.timeout(5):
            waiting = asyncio.create_task(authorizer.authorize(AUTH_URL))
            await _wait_for_prompt(out)
            assert (await _get(f"{base}/favicon.ico")).status_code == 404
            assert (await _get(f"{uri}?code=x&state=someone-else")).status_code == 400
            assert not waiting.done()
            assert (await _get(f"{uri}?code=ours&state=st4te")).status_code == 200
            assert (await waiting)["code"] == "ours"
            # One hit only: the sign-in is over.
            assert (await _get(f"{uri}?code=again&state=st4te")).status_code == 409
    finally:
        await authorizer.aclose()


async def test_an_error_redirect_gets_a_neutral_page_and_is_handed_back_unshown() -> None:
    authorizer, out, _ = _authorizer()
    try:
        uri = await authorizer.redirect_uri()
        async with asyncio.timeout(5):
            waiting = asyncio.create_task(authorizer.authorize(AUTH_URL))
            await _wait_for_prompt(out)
            page = await _get(
                f"{uri}?error=access_denied&error_description=Call%20evil.example%20now"
                "&state=st4te&iss=https%3A%2F%2Fmix-up.example"
            )
            result = await waiting
        # Its iss is not checked yet: nothing the redirect says reaches the page.
        assert "Sign-in failed" in page.text
        assert "Return to the terminal" in page.text
        assert "access_denied" not in page.text and "evil.example" not in page.text
        assert result["error"] == "access_denied"
        assert result["error_description"] == "Call evil.example now"
    finally:
        await authorizer.aclose()


async def test_no_answer_in_time_is_a_clear_error() -> None:
    authorizer, _, _ = _authorizer(timeout=0.1)
    try:
        with pytest.raises(
            SignInError, match=r"no sign-in within 0.1 s.*cat-code mcp login linear"
        ):
            async with asyncio.timeout(5):
                await authorizer.authorize(AUTH_URL)
    finally:
        await authorizer.aclose()


async def test_no_browser_is_opened_when_told_not_to() -> None:
    authorizer, _, opened = _authorizer(open_browser=False, timeout=0.05)
    try:
        with pytest.raises(SignInError):
            await authorizer.authorize(AUTH_URL)
        assert opened == []
    finally:
        await authorizer.aclose()


async def test_a_pasted_redirect_url_finishes_the_sign_in() -> None:
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd) as stdin, os.fdopen(write_fd, "w") as paste:
        authorizer, out, _ = _authorizer(open_browser=False, paste=True, stdin=stdin)
        try:
            async with asyncio.timeout(5):
                waiting = asyncio.create_task(authorizer.authorize(AUTH_URL))
                await _wait_for_prompt(out)
                paste.write("not a url\n")
                paste.write("http://127.0.0.1:1/callback?code=wrong&state=other\n")
                paste.write(
                    f"http://127.0.0.1:{authorizer.port}/callback?code=p4sted&state=st4te\n"
                )
                paste.flush()
                result = await waiting
            assert result["code"] == "p4sted"
            text = out.getvalue()
            assert "paste the address" in text
            assert "That is not the address to paste" in text
            assert "belongs to another sign-in" in text
        finally:
            await authorizer.aclose()


async def test_the_configured_callback_port_is_used_and_a_busy_one_is_named() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        authorizer, _, _ = _authorizer(port=port)
        with pytest.raises(SignInError, match=f"port {port} \\(oauth.callbackPort\\)"):
            await authorizer.redirect_uri()
    free = LoopbackAuthorizer("x", port=port)
    try:
        assert await free.redirect_uri() == f"http://127.0.0.1:{port}/callback"
    finally:
        await free.aclose()


_SLOW_BROWSER = """#!{python}
import os, signal, sys, time
from pathlib import Path

here = Path(__file__).parent
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # ended by the test: "opened"
(here / "browser-url").write_text(sys.argv[1])
(here / "browser-pid.tmp").write_text(str(os.getpid()))
os.replace(here / "browser-pid.tmp", here / "browser-pid")
time.sleep(60)  # a browser command that returns only when the browser is closed
"""


async def _browser_pid(folder: Path) -> int:
    while not (folder / "browser-pid").exists():
        await asyncio.sleep(0.01)
    return int((folder / "browser-pid").read_text())


async def test_a_browser_command_that_does_not_exit_never_holds_up_the_sign_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "slow-browser"
    script.write_text(_SLOW_BROWSER.format(python=sys.executable))
    script.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(script))
    # webbrowser reads BROWSER once per process: start its registry afresh, and put it back.
    monkeypatch.setattr(webbrowser, "_tryorder", None)
    monkeypatch.setattr(webbrowser, "_browsers", {})
    out = io.StringIO()
    authorizer = LoopbackAuthorizer("linear", out=out)  # the real browser launcher
    pid: int | None = None
    try:
        uri = await authorizer.redirect_uri()
        async with asyncio.timeout(10):
            waiting = asyncio.create_task(authorizer.authorize(AUTH_URL))
            pid = await _browser_pid(tmp_path)
            assert (tmp_path / "browser-url").read_text() == AUTH_URL
            answer = await _get(f"{uri}?code=the-c0de&state=st4te")
            result = await waiting  # while the browser command is still running
        assert answer.status_code == 200
        assert result["code"] == "the-c0de"
        os.kill(pid, 0)  # still running: the sign-in did not wait for it
    finally:
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        await authorizer.aclose()
        if authorizer._browser_thread is not None:  # it reaps the browser command
            await asyncio.to_thread(authorizer._browser_thread.join, 10)
            assert not authorizer._browser_thread.is_alive()


async def test_the_port_registered_before_is_used_again_when_free_else_another() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    before = f"http://127.0.0.1:{port}/callback"
    authorizer, _, _ = _authorizer(open_browser=False)
    try:
        assert await authorizer.redirect_uri(before) == before  # the registration stays usable
    finally:
        await authorizer.aclose()

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        other, _, _ = _authorizer(open_browser=False)
        try:
            uri = await other.redirect_uri(before)
            assert uri != before and uri.startswith("http://127.0.0.1:")
        finally:
            await other.aclose()
