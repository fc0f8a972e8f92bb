"""`LoopbackAuthorizer`: the person's side of a sign-in, on this machine.

It listens on 127.0.0.1 only (never 0.0.0.0; port ``oauth.callbackPort``, else a free
one), gives ``http://127.0.0.1:PORT/callback`` as the redirect URI, prints the
authorization URL on stderr, opens a browser when there is one (``webbrowser``, never a
shell; ``http(s)`` URLs only; on a daemon thread, never awaited: a ``BROWSER`` command
may not exit until the browser does), and at once waits, bounded, for the one redirect to
``/callback`` that carries this sign-in's ``state``; it answers it with a neutral page
(the engine, after its ``iss`` check, says what happened) and ignores every other path.
With ``paste=True`` the person may instead paste the address the browser ended on (an SSH
session, where the browser cannot reach this machine): whichever comes first wins. Query
values (``code``, ``state``) are never logged or shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import os
import sys
import threading
import webbrowser
from collections.abc import Callable
from typing import Protocol, TextIO
from urllib.parse import parse_qsl, urlsplit

from cat_code.mcp.auth.types import AuthorizationResponse
from cat_code.mcp.errors import McpClientError

logger = logging.getLogger(__name__)

HOST = "127.0.0.1"
CALLBACK_PATH = "/callback"
#: How long a person has to finish signing in.
DEFAULT_TIMEOUT_S = 300.0
#: A browser (or anything else) that connects must send its request within this.
_REQUEST_READ_TIMEOUT_S = 10.0
_MAX_REQUEST_BYTES = 16 * 1024

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>cat-code</title>
<style>body{{font-family:system-ui,sans-serif;margin:4em auto;max-width:36em}}</style>
</head><body><h1>{title}</h1><p>{text}</p></body></html>
"""


class TextOut(Protocol):
    """Where the authorizer writes what the person must read (a text stream will do)."""

    def write(self, text: str, /) -> object: ...

    def flush(self) -> object: ...


class SignInError(McpClientError):
    """The sign-in could not happen here: no answer in time, or no port to listen on."""


class LoopbackAuthorizer:
    """An `Authorizer` with a loopback listener, a browser, and (optionally) a pasted URL."""

    def __init__(
        self,
        name: str,
        *,
        port: int | None = None,
        open_browser: bool = True,
        paste: bool = False,
        timeout: float = DEFAULT_TIMEOUT_S,
        out: TextOut | None = None,
        stdin: TextIO | None = None,
        browser: Callable[[str], bool] | None = None,
    ) -> None:
        self.name = name
        self.port = port
        self.open_browser = open_browser
        self.paste = paste
        self.timeout = timeout
        self._out = out
        self._stdin = stdin
        self._browser = browser or _open_in_browser
        self._server: asyncio.Server | None = None
        self._waiting: asyncio.Future[dict[str, str]] | None = None
        self._expected_state: str | None = None
        self._paste_thread: threading.Thread | None = None
        self._browser_thread: threading.Thread | None = None

    # -- the Authorizer protocol ---------------------------------------------------------

    async def redirect_uri(self, preferred: str | None = None) -> str:
        """Start listening (once) and return ``http://127.0.0.1:PORT/callback``: on
        ``oauth.callbackPort``, else on the port of ``preferred`` (the URI registered
        before, so the registration is reused) if it is free, else on a free one."""
        if self._server is None and self.port is None:
            again = _loopback_port(preferred)
            if again is not None:
                try:
                    self._server = await asyncio.start_server(self._serve, HOST, again)
                    self.port = again
                except OSError:
                    logger.debug("%s: port %s is taken; listening on another", self.name, again)
        if self._server is None:
            try:
                self._server = await asyncio.start_server(self._serve, HOST, self.port or 0)
            except OSError as exc:
                what = f"port {self.port} (oauth.callbackPort)" if self.port else "a free port"
                raise SignInError(
                    f"cannot listen on {HOST} {what} for the sign-in: {exc.strerror or exc}"
                ) from None
            self.port = self._server.sockets[0].getsockname()[1]
            logger.debug("%s: sign-in listener on %s:%s", self.name, HOST, self.port)
        return f"http://{HOST}:{self.port}{CALLBACK_PATH}"

    async def authorize(self, url: str) -> AuthorizationResponse:
        """Send the person to ``url``; the redirect's query parameters, or `SignInError`."""
        await self.redirect_uri()
        loop = asyncio.get_running_loop()
        waiting: asyncio.Future[dict[str, str]] = loop.create_future()
        self._waiting = waiting
        self._expected_state = dict(parse_qsl(urlsplit(url).query)).get("state")
        self._say(f"Open this URL to sign in to {self.name}:\n{url}")
        if self.open_browser and urlsplit(url).scheme in ("http", "https"):
            self._start_browser(url)
        if self.paste:
            self._say(
                "No browser here? Open the URL on any machine, sign in, then paste the "
                "address the browser ends on (it starts with "
                f"http://{HOST}:{self.port}{CALLBACK_PATH}) here and press Enter."
            )
            self._start_paste_reader(loop)
        try:
            async with asyncio.timeout(self.timeout):
                return await waiting
        except TimeoutError:
            raise SignInError(
                f"no sign-in within {self.timeout:g} s: the browser never came back to "
                f"{HOST}:{self.port}; run cat-code mcp login {self.name} again"
            ) from None
        finally:
            self._waiting = None

    async def aclose(self) -> None:
        """Stop listening. Idempotent."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await server.wait_closed()
        if self._waiting is not None and not self._waiting.done():
            self._waiting.cancel()

    # -- the listener --------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(_REQUEST_READ_TIMEOUT_S):
                head = await reader.readuntil(b"\r\n\r\n")
            if len(head) > _MAX_REQUEST_BYTES:
                raise ValueError("request too large")
            method, target, *_ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
            parts = urlsplit(target)
            if method not in ("GET", "HEAD") or parts.path != CALLBACK_PATH:
                logger.debug("%s: sign-in listener: ignoring %s %s", self.name, method, parts.path)
                await _answer(writer, 404, "Not found", "This is cat-code's sign-in listener.")
                return
            await self._callback(writer, dict(parse_qsl(parts.query, keep_blank_values=True)))
        except (TimeoutError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            logger.debug("%s: sign-in listener: a connection sent no usable request", self.name)
        except OSError as exc:
            logger.debug("%s: sign-in listener: connection failed: %s", self.name, exc)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _callback(self, writer: asyncio.StreamWriter, query: dict[str, str]) -> None:
        waiting = self._waiting
        if waiting is None or waiting.done():
            await _answer(writer, 409, "Nothing to finish", "No sign-in is waiting here now.")
            return
        if self._expected_state is not None and query.get("state") != self._expected_state:
            # Another sign-in's redirect (or an old tab): not ours to take.
            logger.debug("%s: sign-in listener: a redirect for another sign-in", self.name)
            await _answer(writer, 400, "Not this sign-in", "This link belongs to another sign-in.")
            return
        logger.debug("%s: sign-in redirect received", self.name)
        if "error" in query:
            # Nothing from the query: it is unchecked (iss) until the engine has seen it.
            await _answer(
                writer, 200, "Sign-in failed", "Return to the terminal: cat-code says why."
            )
        else:
            # Not "signed in" yet: the iss check and the token exchange come after this.
            await _answer(
                writer, 200, "Sign-in finished — you can close this tab",
                f"Return to the terminal: cat-code finishes signing in to {self.name}.",
            )  # fmt: skip
        if not waiting.done():
            waiting.set_result(query)

    # -- the browser ---------------------------------------------------------------------

    def _start_browser(self, url: str) -> None:
        """Open ``url`` on a daemon thread: a browser command may run until the browser
        is closed, and the sign-in must neither wait for it nor keep the process alive."""

        def run() -> None:
            try:
                opened = self._browser(url)
            except Exception:  # a thread's last resort: the URL on stderr still works
                logger.debug("%s: opening a browser failed", self.name, exc_info=True)
                return
            if not opened:
                logger.debug("%s: no browser opened; the URL above is the way in", self.name)

        self._browser_thread = threading.Thread(target=run, name="sign-in-browser", daemon=True)
        self._browser_thread.start()

    # -- the pasted URL ------------------------------------------------------------------

    def _start_paste_reader(self, loop: asyncio.AbstractEventLoop) -> None:
        """Read pasted lines on a daemon thread (stdin cannot be read without blocking,
        and a thread left reading must never keep the process from exiting)."""
        if self._paste_thread is not None:
            return
        stdin = self._stdin or sys.stdin

        def read() -> None:
            while True:
                try:
                    line = stdin.readline()
                except (OSError, ValueError):
                    return
                if not line:
                    return  # end of input: only the listener can finish now
                with contextlib.suppress(RuntimeError):  # the loop is gone
                    loop.call_soon_threadsafe(self._pasted, line.strip())

        self._paste_thread = threading.Thread(target=read, name="sign-in-paste", daemon=True)
        self._paste_thread.start()

    def _pasted(self, line: str) -> None:
        waiting = self._waiting
        if not line or waiting is None or waiting.done():
            return
        query = dict(parse_qsl(urlsplit(line).query, keep_blank_values=True))
        if "code" not in query and "error" not in query:
            self._say(
                "That is not the address to paste (it has no code); copy the whole address "
                "from the browser's address bar after signing in."
            )
            return
        if self._expected_state is not None and query.get("state") != self._expected_state:
            self._say("That address belongs to another sign-in; paste the one from this one.")
            return
        logger.debug("%s: sign-in redirect pasted", self.name)
        waiting.set_result(query)

    def _say(self, text: str) -> None:
        out = self._out or sys.stderr
        with contextlib.suppress(OSError, ValueError):
            out.write(text + "\n")
            out.flush()


async def _answer(writer: asyncio.StreamWriter, status: int, title: str, text: str) -> None:
    body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 409: "Conflict"}[status]
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n"
        "\r\n".encode()
        + body
    )
    await writer.drain()


def browser_available() -> bool:
    """Whether a graphical browser can be opened here (not over plain SSH, not headless
    Linux: `webbrowser` would start a text browser in this very terminal)."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_in_background(url: str) -> bool:
    """Open an http(s) ``url`` in a browser on a daemon thread (a browser command may run
    until the browser is closed, and must never keep the process alive); False, opening
    nothing, when there is no browser here."""
    if urlsplit(url).scheme not in ("http", "https") or not browser_available():
        return False
    threading.Thread(target=_open_in_browser, args=(url,), name="browser", daemon=True).start()
    return True


def _open_in_browser(url: str) -> bool:
    if not browser_available():
        return False
    try:
        return webbrowser.open(url, new=2)  # runs the browser directly, never a shell
    except webbrowser.Error:
        return False


def _loopback_port(uri: str | None) -> int | None:
    """The port of a redirect URI of ours (``http://127.0.0.1:PORT/callback``), else None."""
    if not uri:
        return None
    parts = urlsplit(uri)
    try:
        port = parts.port
    except ValueError:
        return None
    if parts.scheme == "http" and parts.hostname == HOST and parts.path == CALLBACK_PATH:
        return port
    return None
