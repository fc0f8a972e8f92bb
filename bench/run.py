"""cat-code's MCP client next to the official SDK's and the floor: ``python bench/run.py``.

Every workload runs the three clients interleaved, against the same kind of server
process: each repetition runs all three back to back in a rotated order, and workloads
on an open session (sequential, concurrent, 10 MB calls) time short slices with the
clients taking turns, so a noisy machine hurts all three alike and the per-repetition
ratios stay meaningful. An untimed round first warms everything up. ``--quick`` (under
two minutes) uses fewer calls and five repetitions; the full run more of both. The report
goes to stdout and to ``bench/results/latest.md`` and ``latest.json``. Exit status 1
when any client failed a workload (an error, a wrong answer): slow is never a failure
here, a crash is.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import datetime
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import agent_workloads
import context_workloads
import impls
import job_workloads
import lifecycle_workloads
import task_workloads
import workloads
from peer_workloads import PeerBench
from process_workloads import ProcessBench
from report import IMPLS, LABELS, PEER, Metric, Result, entry, markdown

BENCH = Path(__file__).resolve().parent
#: A single sample that takes longer than this is a hang, not a measurement.
SAMPLE_TIMEOUT_S = 180.0

_LIST_PEER = "bench/cli_peers.py {} (connect, tools/list, print, close)"
_CLAUDE_CODE = "Claude Code"
METRICS = [
    Metric("stdio.connect", "s", "spawn + initialize + tools/list, one server"),
    Metric("stdio.close", "s", "close one connected server (it exits on stdin EOF)"),
    Metric("stdio.seq", "s", "per sequential tools/call, small payload", target_vs_floor=1.25),
    Metric("stdio.concurrent", "s", "per call, 1000 in flight on one connection", 2.0),
    Metric("stdio.large", "s", "one 10 MB tools/call result", target_vs_floor=1.3),
    Metric(
        "stdio.seq.modern",
        "s",
        "per sequential tools/call, MCP 2026-07-28 (`_meta` on each request)",
        target_vs_floor=1.25,
    ),
    Metric(
        "stdio.concurrent.modern",
        "s",
        "per call, 1000 in flight, MCP 2026-07-28",
        target_vs_floor=2.0,
    ),
    Metric(
        "stdio.parallel_connect",
        "s",
        "connect 20 servers at once (until all listed their tools)",
        other_target=("slowest single connect", 1.5),
    ),
    Metric(
        "stdio.parallel_connect_slow",
        "s",
        "connect 20 servers at once that each idle 0.5 s before serving (npx-like start)",
        other_target=("slowest single connect", 1.5),
    ),
    Metric("http.json.seq", "s", "per sequential call, JSON answers", target_vs_floor=1.3),
    Metric(
        "http.json.seq.modern",
        "s",
        "per sequential call, JSON answers, MCP 2026-07-28 (`Mcp-*` headers, no session)",
        target_vs_floor=1.3,
    ),
    Metric("http.sse.seq", "s", "per sequential call, SSE answers", target_vs_floor=1.3),
    Metric("http.concurrent", "s", "per call, 200 in flight, JSON answers"),
    Metric("http.large", "s", "one 10 MB result, JSON answer", target_vs_floor=1.3),
    Metric("http.sse.large", "s", "one 10 MB result, SSE answer", target_vs_floor=1.3),
    Metric(
        "cli.help",
        "s",
        "`cat-code --help` wall time",
        target_vs_floor=2.0,
        floor_is='python -c "import asyncio, json"',
        sdk_is="",
    ),
    Metric(
        "cli.help.rss",
        "MB",
        "`cat-code --help` peak RSS",
        floor_is='python -c "import asyncio, json"',
        sdk_is="",
    ),
    Metric(
        "cli.mcp_list",
        "s",
        "`cat-code mcp list`, one example server (SDK/floor: same job as a script)",
        floor_is=_LIST_PEER.format("floor"),
        sdk_is=_LIST_PEER.format("sdk"),
    ),
    Metric(
        "cli.mcp_list.rss",
        "MB",
        "`cat-code mcp list` peak RSS",
        floor_is=_LIST_PEER.format("floor"),
        sdk_is=_LIST_PEER.format("sdk"),
    ),
    Metric(
        "import.cat_code",
        "s",
        "`import cat_code` (SDK: `mcp`; floor: asyncio, json)",
        floor_is="import asyncio, json",
        sdk_is="import mcp",
    ),
    Metric(
        "import.cat_code_mcp",
        "s",
        "import what `cat-code mcp` needs: host.pool, mcp.client, transports (SDK: its client)",
        floor_is="import asyncio, json",
        sdk_is="import mcp.client.stdio, mcp",
    ),
    Metric("memory.20_servers", "MB", "peak RSS of one process holding 20 stdio connections"),
    Metric(
        "jobs.start",
        "s",
        "`shell {run_in_background: true}` answering with the job id (record, spawn, group)",
        other_target=("50 ms", 1.0),
        floor_is="—",
        sdk_is="",
    ),
    Metric(
        "context.tool_tokens",
        "tokens",
        "tool definitions per model request, 20 servers × 25 tools, tool search auto "
        "(reference: off)",
        other_target=("tool search off", 0.15),
        floor_is="—",
        sdk_is="",
    ),
    Metric(
        "tasks.list_1000",
        "s",
        "`task_list` on a list of 1,000 tasks, on the session's store (its CPU time, and a "
        "fresh store's time, in the notes)",
        other_target=("100 ms", 1.0),
        floor_is="—",
        sdk_is="",
    ),
    Metric(
        "agent.spawn",
        "s",
        "from an `agent` tool call to the subagent's first model request (real session)",
        other_target=("20 ms", 1.0),
        floor_is="—",
        sdk_is="",
    ),
    Metric(
        "stdio.restart",
        "s",
        "from a crashed (SIGKILLed) stdio server to a successful call on it",
        floor_is="by hand: wait for the exit, spawn, initialize, list, call",
        sdk_is="",
    ),
    Metric(
        "oneshot.first_token",
        "s",
        "`cat-code -p` from spawn to the first answer byte on stdout (echo + server-everything, "
        "1 tool call)",
        floor_is="bench/bare_agent.py oneshot (asyncio + httpx2)",
        sdk_is="",
    ),
    Metric(
        "repl.ready",
        "s",
        "the REPL from spawn to its input prompt on a pty (echo + server-everything configured)",
        floor_is="bench/bare_agent.py repl (asyncio + httpx2)",
        sdk_is="",
    ),
    Metric(
        "peer.claude_code.oneshot",
        "s",
        "`-p 'use the echo tool'`: connect both servers, 2 model requests, 1 tool call, exit",
        peer=_CLAUDE_CODE,
        target_vs_peer=0.6,
    ),
    Metric(
        "peer.claude_code.oneshot.rss",
        "MB",
        "peak RSS of that `-p` (the program or the largest server it reaped)",
        peer=_CLAUDE_CODE,
        target_vs_peer=0.4,
    ),
    Metric(
        "peer.claude_code.mcp_list",
        "s",
        "`mcp list`, both servers (Claude Code connects each; cat-code also lists tools)",
        peer=_CLAUDE_CODE,
        target_vs_peer=0.5,
    ),
    Metric(
        "peer.claude_code.mcp_list.rss",
        "MB",
        "peak RSS of that `mcp list` (the program or the largest server it reaped)",
        peer=_CLAUDE_CODE,
        target_vs_peer=0.4,
    ),
]
QUICK = workloads.Sizes(
    seq_calls=500,
    concurrent_calls=1000,
    large_calls=1,
    parallel_servers=20,
    single_connects=3,
    http_seq_calls=300,
    http_concurrent_calls=200,
    concurrent_slices=2,
)
FULL = workloads.Sizes(
    seq_calls=3000,
    concurrent_calls=1000,
    large_calls=3,
    parallel_servers=20,
    single_connects=20,
    http_seq_calls=1500,
    http_concurrent_calls=200,
    concurrent_slices=3,
)


class Bench:
    def __init__(
        self, sizes: workloads.Sizes, repetitions: int, only: list[str], *, quick: bool
    ) -> None:
        self.sizes = sizes
        self.quick = quick
        self.repetitions = repetitions
        self.only = only
        self.results = {m.name: Result(m) for m in METRICS}
        self.failed = False

    def wanted(self, *names: str) -> bool:
        return not self.only or any(n.startswith(p) for n in names for p in self.only)

    def _record(self, impl: str, samples: dict[str, float]) -> None:
        for name, value in samples.items():
            if name.endswith(".slowest_single"):
                self.results[name.rpartition(".")[0]].reference[impl].append(value)
            elif name in self.results:
                self.results[name].samples[impl].append(value)
            else:  # a side measurement of the workload its name starts with
                main, _, extra = name.rpartition(".")
                extras = self.results[main].extras.setdefault(extra, {})
                extras.setdefault(impl, []).append(value)

    def _fail(self, names: list[str], impl: str, exc: BaseException) -> None:
        self.failed = True
        text = f"{type(exc).__name__}: {exc}".strip()
        sys.stderr.write(f"bench: {impl} failed {names[0]}:\n{traceback.format_exc()}\n")
        for name in names:
            self.results[name].errors[impl] = text[:300]
            self.results[name].samples[impl].clear()

    async def run_async(
        self,
        names: list[str],
        workload: Callable[[str, workloads.Sizes], Awaitable[dict[str, float]]],
        impls_to_run: tuple[str, ...] = IMPLS,
    ) -> None:
        """A warm-up round, then the timed repetitions, clients rotated each time."""
        if not self.wanted(*names):
            return
        _progress(names[0])
        active = list(impls_to_run)
        for rep in range(-1, self.repetitions):
            order = active[rep % len(active) :] + active[: rep % len(active)] if active else []
            samples: dict[str, dict[str, float]] = {}
            for impl in order:
                try:
                    async with asyncio.timeout(SAMPLE_TIMEOUT_S):
                        samples[impl] = await workload(impl, self.sizes)
                except Exception as exc:
                    self._fail(names, impl, exc)
                    active.remove(impl)
            if rep >= 0:
                for impl in active:
                    self._record(impl, samples[impl])

    async def run_sessions(
        self, workload: workloads.SessionWorkload, impls_to_run: tuple[str, ...] = IMPLS
    ) -> None:
        """Per repetition: every client's session open, a warm-up slice each, then the
        timed slices with the clients taking turns (the order rotates every slice)."""
        name = workload.name
        if not self.wanted(name):
            return
        _progress(name)
        active = list(impls_to_run)
        for rep in range(-1, self.repetitions):
            sessions: dict[str, impls.Session] = {}
            totals = {impl: [0.0, 0] for impl in active}
            try:
                for impl in list(active):
                    try:
                        async with asyncio.timeout(SAMPLE_TIMEOUT_S):
                            sessions[impl] = await workload.open(impl)
                            await workload.slice(impl, sessions[impl], self.sizes)
                    except Exception as exc:
                        self._fail([name], impl, exc)
                        active.remove(impl)
                for turn in range(workload.slices(self.sizes)):
                    shift = (rep + turn) % len(active) if active else 0
                    for impl in active[shift:] + active[:shift]:
                        try:
                            async with asyncio.timeout(SAMPLE_TIMEOUT_S):
                                seconds, count = await workload.slice(
                                    impl, sessions[impl], self.sizes
                                )
                        except Exception as exc:
                            self._fail([name], impl, exc)
                            active.remove(impl)
                            continue
                        totals[impl][0] += seconds
                        totals[impl][1] += count
            finally:
                # Last opened, first closed: the SDK's anyio scopes nest in this one task.
                for impl, session in reversed(sessions.items()):
                    try:
                        await session.close()
                    except Exception as exc:
                        self._fail([name], impl, exc)
                        if impl in active:
                            active.remove(impl)
            if rep >= 0:
                for impl in active:
                    seconds, count = totals[impl]
                    self.results[name].samples[impl].append(seconds / count)

    def run_process(
        self,
        names: list[str],
        workload: Callable[[str], dict[str, float]],
        impls_to_run: tuple[str, ...] = IMPLS,
    ) -> None:
        if not self.wanted(*names):
            return
        _progress(names[0])
        active = list(impls_to_run)
        # The in-process workloads already read every file these import: a warm-up round
        # only pays off in a full run.
        first = 0 if self.quick else -1
        for rep in range(first, self.repetitions):
            order = active[rep % len(active) :] + active[: rep % len(active)] if active else []
            samples: dict[str, dict[str, float]] = {}
            for impl in order:
                try:
                    samples[impl] = workload(impl)
                except Exception as exc:
                    self._fail(names, impl, exc)
                    active.remove(impl)
            if rep >= 0:
                for impl in active:
                    self._record(impl, samples[impl])


async def run_in_process(bench: Bench) -> None:
    w = workloads
    # Import every client up front, then move what the imports made out of the collector's
    # sight: each timed part starts with a gc.collect() (so one client's garbage is not
    # collected on another's clock), and with 60 MB of SDK objects that took 30 ms a time.
    impls.import_all()
    gc.collect()
    gc.freeze()
    await bench.run_async(["stdio.connect", "stdio.close"], w.stdio_connect)
    for workload in w.session_workloads(None):
        await bench.run_sessions(workload)
    await bench.run_async(["stdio.parallel_connect"], w.stdio_parallel_connect)
    await bench.run_async(["stdio.parallel_connect_slow"], w.stdio_parallel_connect_slow)
    await bench.run_async(
        ["stdio.restart"], lifecycle_workloads.stdio_restart, ("cat_code", "floor")
    )
    http_names = [m.name for m in METRICS if m.name.startswith("http.")]
    if not bench.wanted(*http_names):
        return
    servers = {mode: workloads.HttpServer(mode) for mode in ("json", "sse")}
    servers["modern"] = workloads.HttpServer("json", modern=True)
    try:
        for server in servers.values():
            await server.start()
        for workload in w.session_workloads(servers):
            if workload.name.startswith("http."):
                await bench.run_sessions(workload)
    finally:
        for server in servers.values():
            await server.stop()


def run_processes(bench: Bench) -> None:
    pb = ProcessBench()
    try:
        bench.run_process(["cli.help", "cli.help.rss"], pb.cli_help, ("cat_code", "floor"))
        bench.run_process(["cli.mcp_list", "cli.mcp_list.rss"], pb.cli_mcp_list)
        bench.run_process(["import.cat_code", "import.cat_code_mcp"], pb.imports)
        bench.run_process(
            ["memory.20_servers"], lambda impl: pb.memory(impl, bench.sizes.parallel_servers)
        )
        run_peers(bench, pb)
    finally:
        pb.close()


def run_peers(bench: Bench, pb: ProcessBench) -> None:
    """Whole commands against a scripted model: next to a bare agent and to Claude Code."""
    names = [m.name for m in METRICS if m.peer or m.name in ("oneshot.first_token", "repl.ready")]
    if not bench.wanted(*names):
        return
    peer_names = [m.name for m in METRICS if m.peer]
    peers = PeerBench(pb, with_claude_code=not bench.quick and bench.wanted(*peer_names))
    try:
        if peers.skip is not None:
            for name in names:
                bench.results[name].notes.append(f"skipped: {peers.skip}")
            return
        bench.run_process(["oneshot.first_token"], peers.first_token, ("cat_code", "floor"))
        bench.run_process(["repl.ready"], peers.repl_ready, ("cat_code", "floor"))
        if peers.claude is None:
            for name in peer_names:
                bench.results[name].notes.append(f"skipped: {peers.claude_skip}")
            return
        bench.results[peer_names[0]].notes.append(
            f"{peers.claude_version}, installed from npm for this run; each repetition runs "
            "both programs back to back (order alternating), ratios are medians of those pairs"
        )
        bench.run_process(
            ["peer.claude_code.oneshot", "peer.claude_code.oneshot.rss"],
            peers.claude_code_oneshot,
            ("cat_code", PEER),
        )
        bench.run_process(
            ["peer.claude_code.mcp_list", "peer.claude_code.mcp_list.rss"],
            peers.claude_code_mcp_list,
            ("cat_code", PEER),
        )
    finally:
        peers.close()


async def run_tasks(bench: Bench) -> None:
    """cat-code's own task list: no other client has one; the target is absolute."""
    await bench.run_async(["tasks.list_1000"], task_workloads.list_1000, ("cat_code",))
    result = bench.results["tasks.list_1000"]
    result.reference["cat_code"] = [task_workloads.TARGET_S] * len(result.samples["cat_code"])
    cpu, cold = (result.extras.get(k, {}).get("cat_code") for k in ("cpu", "cold"))
    if cpu and cold:
        result.notes.append(
            f"task_list on 1,000 tasks: {statistics.median(cpu) * 1e3:.1f} ms of CPU (the wall "
            f"time waits for the machine's other work too); a fresh store reading every file "
            f"(cat-code tasks): {statistics.median(cold) * 1e3:.0f} ms"
        )


def run_context(bench: Bench) -> None:
    """Estimated tokens, not time: deterministic, so measured once, not per repetition."""
    if not bench.wanted("context.tool_tokens"):
        return
    _progress("context.tool_tokens")
    measured = context_workloads.tool_tokens()
    result = bench.results["context.tool_tokens"]
    result.samples["cat_code"].append(measured.auto)
    result.reference["cat_code"].append(measured.off)
    result.extras["off"] = {"cat_code": [measured.off]}
    result.extras["auto_after_search"] = {"cat_code": [measured.auto_after_search]}
    result.notes.append(
        f"{measured.tools} MCP tools: {measured.off:,} tokens of definitions per request with "
        f"tool search off, {measured.auto:,} on auto ({measured.auto / measured.off:.1%}; "
        f"built-ins + search_tools), {measured.auto_after_search:,} after one search found "
        f"5 tools ({measured.auto_after_search / measured.off:.1%}). Estimated as characters "
        "/ 4 of the definitions' JSON; measured once (deterministic)."
    )


def run_jobs(bench: Bench) -> None:
    """cat-code only: the bound is absolute (50 ms), held as the reference of each sample."""
    if not bench.wanted("jobs.start"):
        return
    _progress("jobs.start")
    result = bench.results["jobs.start"]
    times = job_workloads.job_start_times(20)
    result.samples["cat_code"].extend(times)
    result.reference["cat_code"].extend([job_workloads.JOB_START_TARGET_S] * len(times))
    result.notes.append(
        f"{len(times)} background starts of `sleep 60` (each ended after), slowest "
        f"{max(times) * 1000:.1f} ms; the target is the median against 50 ms."
    )


def run_agents(bench: Bench) -> None:
    """In process, once per repetition: the median of 20 spawns each time."""
    if not bench.wanted("agent.spawn"):
        return
    _progress("agent.spawn")
    result = bench.results["agent.spawn"]
    try:
        for _ in range(bench.repetitions):
            samples = agent_workloads.spawn_latency(20)
            result.samples["cat_code"].append(statistics.median(samples))
            result.reference["cat_code"].append(agent_workloads.SPAWN_TARGET_S)
    except Exception as exc:
        bench._fail(["agent.spawn"], "cat_code", exc)
        return
    result.notes.append(
        "A real Session (built-in tools, rules, the session file) with a model "
        "that answers at once; timed from the agent tool's execute to the subagent's first "
        "request; each sample is the median of 20 spawns after 3 warm-ups."
    )


def explain_parallel_connect(result: Result, servers: int) -> None:
    """A note on what bounds N parallel connects: the CPU it takes to start N servers."""
    machine = result.extras.get("machine_cpu", {})
    client = result.extras.get("client_cpu", {})
    cpus = os.cpu_count() or 1
    parts = []
    fits: list[float] = []
    assert result.metric.other_target is not None
    limit = result.metric.other_target[1]
    for impl in IMPLS:
        if not (machine.get(impl) and client.get(impl) and result.reference[impl]):
            continue
        busy = statistics.median(machine[impl])
        wall = statistics.median(result.samples[impl])
        single = statistics.median(result.reference[impl])
        # How many of these start-ups the CPUs could do within the target's wall time.
        fits.append(limit * single * cpus / (busy / servers))
        parts.append(
            f"{LABELS[impl]}: {busy * 1e3:.0f} ms of CPU in {wall * 1e3:.0f} ms "
            f"({busy / (wall * cpus):.0%} of {cpus} CPUs), its own process "
            f"{statistics.median(client[impl]) * 1e3:.0f} ms of it; slowest single connect "
            f"{single * 1e3:.1f} ms"
        )
    if parts:
        result.notes.append(
            "Machine CPU while connecting (all processes, kernel included; medians): "
            + "; ".join(parts)
            + f". The CPUs are saturated by the {servers} servers starting (fork, exec, "
            f"interpreter, imports), not by the client: in {limit}× a single connect they "
            f"have the CPU time for about {statistics.median(fits):.0f} of those start-ups."
        )


_last_progress: list[float] = []


def _progress(name: str) -> None:
    """Name the workload starting now, with the time the previous one took."""
    now = time.perf_counter()
    took = f" (previous: {now - _last_progress[-1]:.1f} s)" if _last_progress else ""
    _last_progress.append(now)
    sys.stderr.write(f"bench: {name} …{took}\n")
    sys.stderr.flush()


def _load() -> str:
    with contextlib.suppress(OSError):
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    return "?"


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=BENCH.parent,
            capture_output=True,
            text=True,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"],
            cwd=BENCH.parent,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return out.stdout.strip() + (" (src modified)" if dirty.stdout.strip() else "")


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    found = {}
    for package in ("cat-code", "mcp", "httpx2"):
        with contextlib.suppress(Exception):
            found[package] = version(package)
    return found


def main(argv: list[str] | None = None) -> int:
    # cat-code remembers things under $CAT_CODE_HOME (protocol eras, tokens): a benchmark
    # must neither read a user's nor write into it.
    home = os.environ["CAT_CODE_HOME"] = tempfile.mkdtemp(prefix="cat-code-bench-home-")
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls, 5 repetitions")
    parser.add_argument("--repetitions", type=int, help="override the repetition count (≥5)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PREFIX",
        help="run only workloads whose name starts with PREFIX (repeatable); a partial "
        "run writes its report to a temporary folder unless --out is given",
    )
    parser.add_argument("--out", type=Path, help="report folder (default: bench/results)")
    args = parser.parse_args(argv)
    if args.repetitions is not None and args.repetitions < 5:
        parser.error("--repetitions: medians need at least 5")
    try:
        import mcp  # noqa: F401

        import cat_code  # noqa: F401
    except ImportError as exc:
        sys.stderr.write(f"bench: {exc}; run from the dev venv: pip install -e '.[dev]'\n")
        return 2
    repetitions = args.repetitions or (5 if args.quick else 7)
    bench = Bench(QUICK if args.quick else FULL, repetitions, args.only, quick=args.quick)
    load_before = _load()
    started = time.perf_counter()
    asyncio.run(run_in_process(bench))
    run_processes(bench)
    asyncio.run(run_tasks(bench))
    run_context(bench)
    run_jobs(bench)
    run_agents(bench)
    explain_parallel_connect(bench.results["stdio.parallel_connect"], bench.sizes.parallel_servers)
    results = [r for r in bench.results.values() if bench.wanted(r.metric.name)]
    meta = {
        "command": "python bench/run.py" + (" --quick" if args.quick else ""),
        "when": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_before": load_before,
        "load_after": _load(),
        "commit": _commit(),
        "versions": _versions(),
        "repetitions": repetitions,
        "sizes": vars(bench.sizes),
        "seconds": round(time.perf_counter() - started, 1),
    }
    table = markdown(results, meta)
    sys.stdout.write(table)
    out = args.out or (
        Path(tempfile.gettempdir()) / "cat-code-bench" if args.only else BENCH / "results"
    )
    out.mkdir(parents=True, exist_ok=True)
    stem = "latest-partial" if args.only else "latest"
    (out / f"{stem}.md").write_text(table, encoding="utf-8")
    document = {"workloads": [entry(r) for r in results], "meta": meta}
    (out / f"{stem}.json").write_text(json.dumps(document, indent=2) + "\n", "utf-8")
    sys.stderr.write(f"bench: {meta['seconds']} s; wrote {out / stem}.md and .json\n")
    return 1 if bench.failed else 0


if __name__ == "__main__":
    sys.exit(main())
