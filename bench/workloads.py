"""In-process workloads: connection workloads, and timed slices on open sessions.

A connection workload (`stdio_connect`, `stdio_parallel_connect`) takes the client's
name and the run's `Sizes` and returns ``{metric name: seconds}`` for one repetition.
A `SessionWorkload` is run by ``run.py`` with every client's session open at once and
its timed slices interleaved client by client (a burst of load from elsewhere then hits
all three alike); a slice returns its seconds and how many operations it did. Every
answer is checked after the clock stops, so a client that answers wrongly fails the run
instead of looking fast.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import impls

BENCH = Path(__file__).resolve().parent
STDIO_SERVER = [sys.executable, "-I", "-S", str(BENCH / "servers" / "stdio_server.py")]
HTTP_SERVER = [sys.executable, "-I", str(BENCH / "servers" / "http_server.py")]
LARGE_BYTES = 10 * 1000 * 1000
#: How long each server of the slow-start parallel connect idles before serving.
SLOW_START_S = 0.5
SMALL_TEXT = "hello, this is a small payload of a typical tool call"


@dataclass(frozen=True)
class Sizes:
    seq_calls: int
    concurrent_calls: int
    large_calls: int
    parallel_servers: int
    single_connects: int
    http_seq_calls: int
    http_concurrent_calls: int
    #: Batches of concurrent calls timed per repetition, clients taking turns.
    concurrent_slices: int


Workload = Callable[[str, Sizes], Awaitable[dict[str, float]]]


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def _clock() -> float:
    gc.collect()
    return time.perf_counter()


# -- stdio ------------------------------------------------------------------------------


async def stdio_connect(impl: str, sizes: Sizes) -> dict[str, float]:
    """Spawn + initialize + tools/list of one server; then its close, timed apart."""
    command, *args = STDIO_SERVER
    start = _clock()
    session = await impls.open_stdio(impl, command, args)
    connected = time.perf_counter()
    await session.close()
    closed = time.perf_counter()
    return {"stdio.connect": connected - start, "stdio.close": closed - connected}


async def stdio_parallel_connect(impl: str, sizes: Sizes) -> dict[str, float]:
    """The slowest of N single connects (one at a time), then N servers connected at once.

    Each single connect includes its close (so no server idles during the next one) but
    only the connect is timed; the parallel wall time runs until the last is connected.
    """
    command, *args = STDIO_SERVER
    slowest = 0.0
    for _ in range(sizes.single_connects):
        start = _clock()
        session = await impls.open_stdio(impl, command, args)
        slowest = max(slowest, time.perf_counter() - start)
        await session.close()
    start = _clock()
    cpu_before = time.process_time()
    machine_before = _machine_busy()
    release = await hold_stdio_servers(impl, sizes.parallel_servers)
    elapsed = time.perf_counter() - start
    # Where the time went: all CPUs' busy time (every process, the kernel included) and
    # our own share of it.
    machine_cpu = _machine_busy() - machine_before
    client_cpu = time.process_time() - cpu_before
    await release()
    return {
        "stdio.parallel_connect": elapsed,
        "stdio.parallel_connect.slowest_single": slowest,
        "stdio.parallel_connect.client_cpu": client_cpu,
        "stdio.parallel_connect.machine_cpu": machine_cpu,
    }


def _machine_busy() -> float:
    """CPU seconds all CPUs have spent not idle since boot (Linux /proc/stat; else 0)."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return 0.0
    idle = ticks[3] + ticks[4]  # idle, iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")  # guest time is in user


async def stdio_parallel_connect_slow(impl: str, sizes: Sizes) -> dict[str, float]:
    """Like `stdio_parallel_connect`, with servers that idle a while before serving.

    The CPU-bound start-up of 20 Python servers saturates 2 cores whatever the client
    does; servers that mostly wait (as a first ``npx`` download does) show whether the
    client connects them in parallel: the wall time should stay near one server's.
    """
    command, *args = STDIO_SERVER
    args = [*args, "--startup-delay", str(SLOW_START_S)]
    slowest = 0.0
    # One or two single connects suffice: the idle start dominates and barely varies.
    for _ in range(max(1, sizes.single_connects // 10)):
        start = _clock()
        session = await impls.open_stdio(impl, command, args)
        slowest = max(slowest, time.perf_counter() - start)
        await session.close()
    start = _clock()
    release = await hold_stdio_servers(impl, sizes.parallel_servers, args)
    elapsed = time.perf_counter() - start
    await release()
    return {
        "stdio.parallel_connect_slow": elapsed,
        "stdio.parallel_connect_slow.slowest_single": slowest,
    }


async def hold_stdio_servers(
    impl: str, count: int, server_args: list[str] | None = None
) -> Callable[[], Awaitable[None]]:
    """Connect ``count`` stdio servers at once; returns once all are connected.

    cat-code goes through `McpPool`, the path ``cat-code mcp`` and the REPL take; the SDK
    and the floor get one owner task per connection, as their anyio scopes require.
    The returned function closes everything.
    """
    command, *args = STDIO_SERVER
    if server_args is not None:
        args = server_args
    if impl == "cat_code":
        from cat_code.host.config.load import McpConfig, ServerConfig, StdioServerConfig
        from cat_code.host.servers.pool import McpPool

        entries: list[ServerConfig] = [
            StdioServerConfig(name=f"s{i}", source=BENCH, command=command, args=tuple(args))
            for i in range(count)
        ]
        pool = McpPool(McpConfig(servers=entries))
        await pool.connect_all()
        failed = [s for s in pool.status() if s.state != "CONNECTED"]
        if failed:
            await pool.close_all()
            raise AssertionError(f"cat-code pool: {failed[0].name}: {failed[0].error}")
        return pool.close_all

    stop = asyncio.Event()
    ready: list[asyncio.Future[None]] = []
    loop = asyncio.get_running_loop()

    async def owner(connected: asyncio.Future[None]) -> None:
        try:
            session = await impls.open_stdio(impl, command, args)
        except BaseException as exc:
            connected.set_exception(exc)
            raise
        connected.set_result(None)
        try:
            await stop.wait()
        finally:
            await session.close()

    tasks = []
    for _ in range(count):
        connected = loop.create_future()
        ready.append(connected)
        tasks.append(asyncio.create_task(owner(connected)))
    try:
        await asyncio.gather(*ready)
    except BaseException:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise

    async def release() -> None:
        stop.set()
        await asyncio.gather(*tasks)

    return release


# -- Streamable HTTP --------------------------------------------------------------------


class HttpServer:
    """One bench HTTP server process on 127.0.0.1; its stdin closing ends it."""

    def __init__(self, mode: str, *, modern: bool = False) -> None:
        self.mode = mode
        self.modern = modern
        self.process: asyncio.subprocess.Process | None = None
        self.url = ""

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *HTTP_SERVER,
            *(["--modern"] if self.modern else []),
            "--mode",
            self.mode,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), 10)
        _check(line.startswith(b"PORT "), f"http server said {line!r}")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"

    async def stop(self) -> None:
        process = self.process
        if process is None or process.returncode is not None:
            return
        assert process.stdin is not None
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            process.kill()
            await process.wait()


# -- timed slices on open sessions -------------------------------------------------------

Slice = Callable[[str, impls.Session, Sizes], Awaitable[tuple[float, int]]]


@dataclass(frozen=True)
class SessionWorkload:
    """Open a session, then time ``slices(sizes)`` slices on it; the metric is per operation."""

    name: str
    open: Callable[[str], Awaitable[impls.Session]]
    slice: Slice
    slices: Callable[[Sizes], int]


async def _open_stdio(impl: str) -> impls.Session:
    command, *args = STDIO_SERVER
    return await impls.open_stdio(impl, command, args)


async def _open_stdio_modern(impl: str) -> impls.Session:
    command, *args = STDIO_SERVER
    return await impls.open_stdio(impl, command, [*args, "--modern"], modern=True)


def session_workloads(servers: dict[str, HttpServer] | None) -> list[SessionWorkload]:
    """The stdio session workloads, and the HTTP ones when ``servers`` (JSON, SSE, and
    ``modern``: JSON answers, 2026-07-28) run. ``*.modern`` rows are their twins with
    every client speaking MCP 2026-07-28 (``_meta`` on each request, no handshake)."""
    stdio = [
        SessionWorkload("stdio.seq", _open_stdio, _seq_slice, lambda z: SEQ_SLICES),
        SessionWorkload(
            "stdio.concurrent", _open_stdio, _concurrent_slice, lambda z: z.concurrent_slices
        ),
        SessionWorkload("stdio.large", _open_stdio, _large_slice, lambda z: z.large_calls),
        SessionWorkload("stdio.seq.modern", _open_stdio_modern, _seq_slice, lambda z: SEQ_SLICES),
        SessionWorkload(
            "stdio.concurrent.modern",
            _open_stdio_modern,
            _concurrent_slice,
            lambda z: z.concurrent_slices,
        ),
    ]
    if servers is None:
        return stdio

    def opener(mode: str, *, large: bool = False) -> Callable[[str], Awaitable[impls.Session]]:
        async def open_http(impl: str) -> impls.Session:
            server = servers[mode]
            return await impls.open_http(impl, server.url, large_events=large, modern=server.modern)

        return open_http

    return [
        *stdio,
        SessionWorkload("http.json.seq", opener("json"), _http_seq_slice, lambda z: SEQ_SLICES),
        SessionWorkload(
            "http.json.seq.modern", opener("modern"), _http_seq_slice, lambda z: SEQ_SLICES
        ),
        SessionWorkload("http.sse.seq", opener("sse"), _http_seq_slice, lambda z: SEQ_SLICES),
        SessionWorkload(
            "http.concurrent", opener("json"), _http_concurrent_slice, lambda z: z.concurrent_slices
        ),
        SessionWorkload("http.large", opener("json"), _large_slice, lambda z: z.large_calls),
        SessionWorkload(
            "http.sse.large", opener("sse", large=True), _large_slice, lambda z: z.large_calls
        ),
    ]


#: Sequential calls are timed in this many slices per repetition, clients taking turns.
SEQ_SLICES = 10


async def _seq_slice(impl: str, session: impls.Session, sizes: Sizes) -> tuple[float, int]:
    return await _seq(impl, session, max(1, sizes.seq_calls // SEQ_SLICES))


async def _http_seq_slice(impl: str, session: impls.Session, sizes: Sizes) -> tuple[float, int]:
    return await _seq(impl, session, max(1, sizes.http_seq_calls // SEQ_SLICES))


async def _concurrent_slice(impl: str, session: impls.Session, sizes: Sizes) -> tuple[float, int]:
    return await _concurrent(impl, session, sizes.concurrent_calls)


async def _http_concurrent_slice(
    impl: str, session: impls.Session, sizes: Sizes
) -> tuple[float, int]:
    return await _concurrent(impl, session, sizes.http_concurrent_calls)


async def _large_slice(impl: str, session: impls.Session, sizes: Sizes) -> tuple[float, int]:
    start = _clock()
    result = await session.call("blob", {"size": LARGE_BYTES})
    elapsed = time.perf_counter() - start
    _check(len(impls.text_of(impl, result)) == LARGE_BYTES, f"{impl}: wrong blob size")
    return elapsed, 1


async def _seq(impl: str, session: impls.Session, calls: int) -> tuple[float, int]:
    call = session.call
    args = {"text": SMALL_TEXT}
    start = _clock()
    for _ in range(calls):
        result = await call("echo", args)
    elapsed = time.perf_counter() - start
    _check(impls.text_of(impl, result) == SMALL_TEXT, f"{impl}: wrong echo answer")
    return elapsed, calls


async def _concurrent(impl: str, session: impls.Session, calls: int) -> tuple[float, int]:
    arguments = [{"text": f"{SMALL_TEXT} #{i}"} for i in range(calls)]
    start = _clock()
    results = await session.call_many("echo", arguments)
    elapsed = time.perf_counter() - start
    texts = [impls.text_of(impl, r) for r in results]
    _check(texts == [a["text"] for a in arguments], f"{impl}: wrong concurrent answers")
    return elapsed, calls
