"""Starting the stdio servers before the pool exists, so their start-up overlaps ours.

A front end calls `prestart` as soon as it has its config, before it imports what talks
to the servers (the pool, the client, the tool adapter): a Node server's ~0.15 s boot
then runs on the other core while we import. `Prestarted` holds the spawned transports
(`StdioTransport.spawn`: what a child says is held until a client starts it); the pool's
`Connector` takes each once, for the first connect of the same entry (a restart spawns a
fresh one). Invariant: nothing spawned here outlives the command. `Prestarted` is the
front end's `Servers` (`cat_code.host.servers.shutdown`) from the moment anything is spawned:
closing it closes the pool it was handed to and every transport nobody took, so a
usage error or a signal between the spawn and the pool still ends every child. This
module imports only what spawning needs (config, the stdio transport, run records).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from cat_code.host.config.load import McpConfig, ServerConfig, StdioServerConfig
from cat_code.host.state.eof_memory import EOF_MEMORY
from cat_code.host.state.run_records import GROUP_RECORDS
from cat_code.mcp.transports.stdio import StdioTransport

if TYPE_CHECKING:
    from cat_code.host.servers.shutdown import Servers

logger = logging.getLogger(__name__)


def stdio_transport(config: StdioServerConfig) -> StdioTransport:
    """The transport of a stdio entry (not started), its groups recorded on disk, and
    whether it ignores stdin EOF remembered across runs (`cat_code.host.state.eof_memory`)."""
    return StdioTransport(
        config.command,
        config.args,
        env=config.env,
        cwd=config.cwd,
        name=config.name,
        shown=config.display_target,
        shown_command=config.display_command,
        shown_cwd=config.display_cwd,
        observer=GROUP_RECORDS,
        eof_memory=EOF_MEMORY,
    )


class Prestarted:
    """Spawned stdio transports waiting for their client; the `Servers` that closes them."""

    def __init__(self) -> None:
        #: Entry name → (the entry it was spawned for, its transport), until taken.
        self._waiting: dict[str, tuple[StdioServerConfig, StdioTransport]] = {}
        #: The pool the transports were handed to (`hand_over`): closed with us.
        self._owner: Servers | None = None
        #: A close finished: a second one has nothing left to do.
        self._closed = False

    @property
    def waiting(self) -> dict[str, StdioTransport]:
        """The spawned transports nobody has taken yet, by entry name."""
        return {name: transport for name, (_, transport) in self._waiting.items()}

    def add(self, config: StdioServerConfig, transport: StdioTransport) -> None:
        self._waiting[config.name] = (config, transport)

    def discard(self, name: str) -> None:
        """Forget a transport that never started a child (its connect will try anew)."""
        self._waiting.pop(name, None)

    def take(self, config: ServerConfig) -> StdioTransport | None:
        """The transport spawned for exactly this entry, once; None otherwise."""
        found = self._waiting.get(config.name)
        if found is None or found[0] != config:
            return None
        del self._waiting[config.name]
        return found[1]

    def hand_over(self, owner: Servers) -> None:
        """From now on, closing closes ``owner`` (the pool) too."""
        self._owner = owner

    async def close_all(self) -> None:
        """Close the pool handed over and every transport nobody took; like the pool's,
        a cancelled close hurries and still finishes, then re-raises. Idempotent."""
        if self._closed:
            return
        # Kept in `_waiting` until closed: a close cut short is done again by the next.
        closing: list[asyncio.Future[Any]] = [
            asyncio.ensure_future(transport.close()) for _, transport in self._waiting.values()
        ]
        if self._owner is not None:
            closing.append(asyncio.ensure_future(self._owner.close_all()))
        cancelled: asyncio.CancelledError | None = None
        pending = set(closing)
        while pending:
            try:
                _, pending = await asyncio.wait(pending)
            except asyncio.CancelledError as exc:
                cancelled = exc
                self.hurry()
        for future in closing:  # leave no error unretrieved; closes never raise but this
            if not future.cancelled() and future.exception() is not None:
                logger.debug("error while closing: %s", future.exception())
        self._waiting.clear()
        self._closed = True
        if cancelled is not None:
            raise cancelled

    def hurry(self) -> None:
        for _, transport in self._waiting.values():
            transport.hurry()
        if self._owner is not None:
            self._owner.hurry()

    def kill_now(self) -> None:
        for _, transport in self._waiting.values():
            transport.kill_now()
        if self._owner is not None:
            self._owner.kill_now()


async def prestart(config: McpConfig, prestarted: Prestarted) -> None:
    """Spawn every enabled stdio entry of ``config`` into ``prestarted``, side by side.

    One that cannot be spawned is left out: its connect spawns it again and fails with
    the same words, where the failure is reported today.
    """
    entries = [
        entry
        for entry in config.servers
        if isinstance(entry, StdioServerConfig) and not entry.disabled
    ]
    transports = [stdio_transport(entry) for entry in entries]
    # Owned before they are spawned: a spawn cut short by a signal still gets closed.
    for entry, transport in zip(entries, transports, strict=True):
        prestarted.add(entry, transport)
    results = await asyncio.gather(*(t.spawn() for t in transports), return_exceptions=True)
    for entry, transport, result in zip(entries, transports, results, strict=True):
        if isinstance(result, BaseException) and transport.pid is None:
            logger.debug("%s: not started early: %s", entry.name, result)
            prestarted.discard(entry.name)
