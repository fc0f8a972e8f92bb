"""The servers of one ``mcp`` verb: spawned first, then the pool, then the verb's work.

`with_pool` is the one start-up every verb that talks to servers shares: the stdio
servers are spawned (`cat_code.host.servers.prestart`) before the pool, client and status modules
are imported, so their boot overlaps ours; the pool takes the spawned transports; the
verb's ``work`` runs under `run_until_signal`, which closes every server (spawned or
connected) on every path, signals included.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from cat_code.host.config.load import McpConfig
from cat_code.host.servers.prestart import Prestarted, prestart
from cat_code.host.servers.shutdown import run_until_signal
from cat_code.mcp.roots import Roots

if TYPE_CHECKING:
    from cat_code.host.servers.pool import McpPool


async def with_pool(
    config: McpConfig,
    roots: Roots,
    work: Callable[[McpPool], Awaitable[int]],
    **pool_options: Any,
) -> int:
    """Spawn ``config``'s stdio servers, build the pool on them, run ``work(pool)`` (not
    connected yet: the verb decides), and close everything; ``work``'s exit code."""
    servers = Prestarted()

    async def run() -> int:
        await prestart(config, servers)
        from cat_code.host.servers.pool import McpPool

        pool = McpPool(config, roots=roots, prestarted=servers, **pool_options)
        return await work(pool)

    return await run_until_signal(servers, run)


__all__ = ["with_pool"]
