"""``python bench/mem_probe.py IMPL N``: peak RSS of one process holding N stdio connections.

Connects N bench servers at once with IMPL (cat-code through `McpPool`, the SDK, or
the floor), each initialized with its tools listed, closes them, and prints
``{"peak_rss_mb": ...}``: the process's own high-water mark (children not included),
interpreter and imports included, because that is what a user's terminal pays. Only
IMPL's modules are imported.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys

import workloads


def peak_rss_kib() -> int:
    """This process's high-water RSS since its exec (``ru_maxrss`` also counts before it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def _run(impl: str, count: int) -> None:
    release = await workloads.hold_stdio_servers(impl, count)
    await release()


def main() -> int:
    impl, count = sys.argv[1], int(sys.argv[2])
    asyncio.run(_run(impl, count))
    sys.stdout.write(json.dumps({"peak_rss_mb": peak_rss_kib() / 1024}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
