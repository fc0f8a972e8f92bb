"""Era detection: which session a server gets (spec notes §4, "Era detection").

In order: an entry's pinned ``protocolVersion`` decides without a word on the wire; a
verdict remembered in ``$CAT_CODE_HOME/eras.json`` sends a handshake server straight to
``initialize``; otherwise ``server/discover`` at our modern version is the probe, bounded
by `PROBE_TIMEOUT_S` over stdio. A DiscoverResult, or one of the modern errors
(-32020/-32021/-32022, over HTTP in a 400's body), means modern; any other error, an HTTP
status, or silence means handshake — never keyed on one error code. A remembered verdict
is only a first guess, never a reason to wait longer: the same command may speak the other
era next run, so a remembered handshake that is refused is forgotten and probed again, and
a server remembered as modern gets the same bounded probe as a new one (a modern server
that answers it late refuses ``initialize``, and is asked again, patiently). The handshake
session keeps its own legacy HTTP+SSE fallback after that.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cat_code.base.files import PRIVATE_FILE_MODE, atomic_write, read_bounded
from cat_code.mcp.errors import (
    AuthenticationRequired,
    ConnectError,
    HttpStatusError,
    McpError,
    ProtocolError,
    TransportError,
)
from cat_code.mcp.session.base import Link, ProtocolSession
from cat_code.mcp.session.handshake import HandshakeSession
from cat_code.mcp.session.stateless import (
    MODERN_ERRORS,
    UNSUPPORTED_VERSION,
    StatelessSession,
)
from cat_code.mcp.transports.base import Transport
from cat_code.mcp.versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS, PROTOCOL_VERSIONS

logger = logging.getLogger(__name__)

#: How long a ``server/discover`` probe may go unanswered before the server is taken for a
#: handshake server (a legacy stdio server may ignore unknown methods altogether).
PROBE_TIMEOUT_S = 3.0
ERAS_FILE = "eras.json"


class EraMemory:
    """Verdicts remembered across runs, keyed by `era_key` (a digest of the target); the
    file is written 0600, and one an old version left readable by others is tightened."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._verdicts: dict[str, str] | None = None

    def _load(self) -> dict[str, str]:
        if self._verdicts is None:
            self._verdicts = {}
            if self.path is not None:
                with contextlib.suppress(OSError, ValueError):
                    if os.lstat(self.path).st_mode & 0o777 & ~PRIVATE_FILE_MODE:
                        os.chmod(self.path, PRIVATE_FILE_MODE)  # a link's 0777 included
                    data = json.loads(read_bounded(self.path))
                    if isinstance(data, dict):
                        self._verdicts = {
                            k: v for k, v in data.items() if v in ("handshake", "modern")
                        }
        return self._verdicts

    def get(self, key: str) -> str | None:
        return self._load().get(key)

    def remember(self, key: str, era: str) -> None:
        verdicts = self._load()
        if verdicts.get(key) == era:
            return
        verdicts[key] = era
        self._save(verdicts)

    def forget(self, key: str) -> None:
        verdicts = self._load()
        if verdicts.pop(key, None) is not None:
            self._save(verdicts)

    def _save(self, verdicts: dict[str, str]) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            text = json.dumps(verdicts, indent=1, sort_keys=True)
            atomic_write(self.path, text, mode=PRIVATE_FILE_MODE)
        except OSError as exc:
            logger.debug("could not remember protocol eras in %s: %s", self.path, exc)


async def open_session(
    link: Link,
    capabilities: dict[str, Any],
    *,
    pinned: str | None = None,
    memory: EraMemory | None = None,
    fallback: Callable[[], Transport] | None = None,
    adopt: Callable[[ProtocolSession], None] = lambda session: None,
) -> ProtocolSession:
    """Pick the era for the server behind ``link`` and open its session; ``adopt`` is
    given each session before it opens, so a failed opening is still closed by its owner."""
    http = link.transport.kind == "http"
    key = era_key(link.transport)
    if pinned is not None:
        logger.debug("%s: protocol version %s pinned in the config", link.name, pinned)
        if pinned in MODERN_VERSIONS:
            session: ProtocolSession = StatelessSession(http=http, version=pinned)
        else:
            session = HandshakeSession(fallback=fallback, offer=pinned)
        adopt(session)
        await session.open(link, capabilities)
        return session
    remembered = memory.get(key) if memory is not None else None
    if link.transport.kind == "sse" or remembered == "handshake":
        handshake = HandshakeSession(fallback=fallback)
        adopt(handshake)
        try:
            await handshake.open(link, capabilities)
            return handshake
        except (ProtocolError, HttpStatusError) as exc:
            if link.transport.kind == "sse" or isinstance(exc, AuthenticationRequired):
                raise
            logger.debug("%s: the remembered handshake failed (%s); probing again", link.name, exc)
            if memory is not None:
                memory.forget(key)
    # Over HTTP the probe is an ordinary request (bounded by the startup timeout), and may
    # carry a whole browser sign-in. Over stdio it is bounded even for a server remembered
    # as modern: waiting on that verdict would hang a server that now speaks the handshake
    # era and ignores unknown methods until the startup timeout, run after run.
    modern = await _probe(link, capabilities, http, timeout=None if http else PROBE_TIMEOUT_S)
    if modern is None:
        handshake = HandshakeSession(fallback=fallback)
        adopt(handshake)
        try:
            await handshake.open(link, capabilities)
        except McpError as exc:
            if exc.code not in MODERN_ERRORS:
                raise
            # A modern server that answered the probe too late (it started slowly) now
            # refuses initialize: ask it again, and wait for the answer this time.
            logger.debug("%s: initialize refused with %s; probing again", link.name, exc.code)
            modern = await _probe(link, capabilities, http, timeout=None)
            if modern is None:
                raise
        else:
            if memory is not None:
                memory.remember(key, "handshake")
            return handshake
    if memory is not None:
        memory.remember(key, "modern")
    adopt(modern)
    await modern.open(link, capabilities)
    return modern


def era_key(transport: Transport) -> str:
    """What a verdict is remembered under: a digest (the command line may hold a secret a
    ``${VAR}`` put there), of the target and, for stdio, the directory cat-code runs in
    (``python server.py`` in two projects is two servers)."""
    target = transport.describe()
    if transport.kind == "stdio":
        target += "\0" + os.getcwd()
    return hashlib.sha256(target.encode()).hexdigest()[:32]


async def _probe(
    link: Link, capabilities: dict[str, Any], http: bool, *, timeout: float | None
) -> StatelessSession | None:
    """``server/discover``: the modern session it proves, or None for the handshake era."""
    session = StatelessSession(http=http)
    session.set_capabilities(capabilities)
    for _ in range(2):  # a second round only after -32022 names a version we speak
        params, context = session.prepare("server/discover", None)
        logger.debug("%s: probing with server/discover at %s", link.name, session.version)
        try:
            async with asyncio.timeout(timeout) as waited:
                result = await link.exchange("server/discover", params or {}, context)
        except TimeoutError:
            if not waited.expired():
                raise
            return _verdict(link, None, f"no answer within {timeout:g} s")
        except AuthenticationRequired:
            raise
        except HttpStatusError as exc:
            error = exc.rpc_error
            if error is None or error.get("code") not in MODERN_ERRORS:
                return _verdict(link, None, f"HTTP {exc.status_code}")
            code, data = error.get("code"), error.get("data")
        except McpError as exc:
            if exc.code not in MODERN_ERRORS:
                return _verdict(link, None, f"error {exc.code}")
            code, data = exc.code, exc.data
        except ProtocolError as exc:
            return _verdict(link, None, str(exc))
        except TransportError:
            if http:
                raise  # unreachable is not an era
            return _verdict(link, None, "the probe failed")
        else:
            supported = result.get("supportedVersions") if isinstance(result, dict) else None
            mutual = session.mutual_version({"supported": supported})
            if mutual is None:
                if isinstance(supported, list) and not any(
                    v in HANDSHAKE_VERSIONS for v in supported
                ):
                    raise ConnectError(
                        f"the server speaks protocol versions {supported}; cat-code speaks "
                        f"{', '.join(PROTOCOL_VERSIONS)}"
                    )
                return _verdict(link, None, "server/discover names no modern version we speak")
            session.use_version(mutual)
            session.accept_discover(result)
            return _verdict(link, session, "server/discover answered")
        if code != UNSUPPORTED_VERSION:
            return _verdict(link, session, f"modern error {code}")
        mutual = session.mutual_version(data)
        if mutual is None:
            supported = data.get("supported") if isinstance(data, dict) else None
            if isinstance(supported, list) and any(v in HANDSHAKE_VERSIONS for v in supported):
                return _verdict(link, None, "-32022 names only handshake versions")
            raise ConnectError(
                f"the server supports protocol versions {supported!r:.200}; cat-code speaks "
                f"{', '.join(MODERN_VERSIONS)} (modern) and {', '.join(HANDSHAKE_VERSIONS)}"
            )
        session.use_version(mutual)
    return _verdict(link, session, "-32022 twice; going on at the version it named")


def _verdict(link: Link, session: StatelessSession | None, why: str) -> StatelessSession | None:
    era = "modern" if session is not None else "handshake"
    logger.debug("%s: era %s (%s)", link.name, era, why)
    return session


__all__ = ["ERAS_FILE", "PROBE_TIMEOUT_S", "EraMemory", "open_session"]
