"""Run records: the stdio process groups cat-code started, on disk, so a later run can end
the ones a ``kill -9`` of their owner left behind.

Each group gets one small JSON file under ``$CAT_CODE_HOME/run/`` while it lives: its
owner (pid and start time), its pgid and leader pid, the leader's command line and start
time as /proc shows them, the group's members (pid and start time each), the boot and the
pid namespace. It is written when the child starts, rewritten once the child first speaks
(a ``sh -c 'exec ...'`` wrapper has then become the server, and a ``npx``-style wrapper has
started it as a member), and removed when the group is seen gone. `reap_orphans` (called
when a pool is created) ends the groups whose owner is gone — SIGTERM to the group, a
grace, SIGKILL — on a thread, off the event loop.

Invariant: a group is signalled only when it is provably the recorded one, so a pid reused
by an unrelated process is never touched (its stale record is just deleted). Either its
leader pid still runs the recorded command line with the recorded start time; or the
leader is gone (a wrapper that exited on EOF, leaving the server it started) and a live
member of the group is a recorded member, same pid and start time, and no live member
started before the recorded leader. The second proof holds because Linux does not hand out
a pid while a process group of that number has a member: a recorded member alive in the
group means the group never ceased to exist, so its number was never reused. (A survivor
started after the last rewrite, with every recorded member gone, is not proof enough: a
reused pid leading a daemon's session looks just like it. Such a group is left alone.)
Without /proc (macOS) nothing is recorded and nothing is reaped.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cat_code.base.files import PRIVATE_FILE_MODE, atomic_write, read_bounded
from cat_code.mcp.transports.process_group import (
    GroupPresence,
    group_presence,
    kill_after_grace,
    live_members,
    signal_group,
    stat_fields,
)

logger = logging.getLogger(__name__)

RUN_DIR = "run"
#: Bumped when the record's fields change meaning; other versions are left alone.
RECORD_VERSION = 1
#: After SIGTERM, time for an orphaned group to clean up (a ``docker run`` stops its
#: container on SIGTERM, not on SIGKILL) before SIGKILL.
REAP_TERM_GRACE_S = 1.0
_PROC = Path("/proc")


def run_dir() -> Path:
    """``$CAT_CODE_HOME/run``: where this user's live stdio groups are recorded."""
    from cat_code.host.state.home import cat_code_home

    return cat_code_home() / RUN_DIR


# -- /proc ---------------------------------------------------------------------------------


def start_time(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (None: no such process, or a zombie)."""
    fields = stat_fields(pid)
    if fields is None or len(fields) < 20 or fields[0] == b"Z":
        return None
    return int(fields[19])  # field 22 of stat(5); fields[0] is field 3


def _process_group(pid: int) -> int | None:
    fields = stat_fields(pid)
    return int(fields[2]) if fields is not None and len(fields) > 2 else None


def command_line(pid: int) -> list[str] | None:
    """``pid``'s argv as the kernel shows it (None: unreadable, or a zombie's empty one)."""
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    if not raw:
        return None
    return [part.decode(errors="surrogateescape") for part in raw.rstrip(b"\0").split(b"\0")]


@dataclass(frozen=True, slots=True)
class _Host:
    """What makes a record's pids meaningful here: the boot and the pid namespace."""

    boot: str
    pid_namespace: str
    pid: int
    start: int


_host_cache: list[_Host | None] = []


def _host() -> _Host | None:
    """This process's identity, read once (None: no /proc, so no records at all)."""
    if not _host_cache:
        host: _Host | None = None
        with contextlib.suppress(OSError, ValueError):
            boot = (_PROC / "sys/kernel/random/boot_id").read_text().strip()
            namespace = os.readlink(_PROC / "self/ns/pid")
            me = os.getpid()
            started = start_time(me)
            if started is not None:
                host = _Host(boot, namespace, me, started)
        _host_cache.append(host)
    host = _host_cache[0]
    if host is not None and host.pid != os.getpid():  # a forked child is another owner
        _host_cache.clear()
        return _host()
    return host


# -- recording -------------------------------------------------------------------------------


def _record_path(pgid: int, owner: int) -> Path:
    return run_dir() / f"stdio-{owner}-{pgid}.json"


def record_group(pgid: int, *, members: list[tuple[int, int]] | None = None) -> None:
    """Record a process group just started (its leader is ``pgid``). Never raises.

    ``members``: the group's members as a scan of /proc found them (`refresh_groups`);
    without them the leader is taken as the only one.
    """
    host = _host()
    if host is None:
        return
    leader_start = start_time(pgid)
    if leader_start is None:
        return  # already gone: nothing to reap later
    # Without a scan (or if it found nothing), the leader is the one member known.
    found = members or [(pgid, leader_start)]
    record = {
        "version": RECORD_VERSION,
        "ownerPid": host.pid,
        "ownerStart": host.start,
        "pgid": pgid,
        "pid": pgid,
        "cmdline": command_line(pgid) or [],
        "start": leader_start,
        "members": [list(member) for member in found],
        "boot": host.boot,
        "pidNamespace": host.pid_namespace,
    }
    from cat_code.host.state.home import ensure_home

    path = _record_path(pgid, host.pid)
    try:
        # Private (0700 folder, 0600 file): a command line may carry a token in its
        # arguments. Atomic: a cat-code starting right now never reads half a record. Not
        # fsync'd: a record is worthless after a reboot (its boot id no longer matches).
        ensure_home(RUN_DIR)
        atomic_write(path, json.dumps(record), mode=PRIVATE_FILE_MODE, durable=False)
    except OSError as exc:
        logger.debug("cannot record process group %s in %s: %s", pgid, path.parent, exc)


def refresh_group(pgid: int) -> None:
    """Record the group again: its leader may have exec'd the real server, or started it."""
    refresh_groups([pgid])


def refresh_groups(pgids: Iterable[int]) -> None:
    """`refresh_group` for several groups with one scan of /proc (a few milliseconds)."""
    host = _host()
    if host is None:
        return
    wanted = [pgid for pgid in pgids if _record_path(pgid, host.pid).exists()]
    if not wanted:
        return
    found = live_members(set(wanted))
    for pgid in wanted:
        record_group(pgid, members=found.get(pgid) if found is not None else None)


def forget_group(pgid: int) -> None:
    """Remove a group's record (it was closed, or is gone). Never raises."""
    host = _host()
    if host is None:
        return
    with contextlib.suppress(OSError):
        _record_path(pgid, host.pid).unlink()


# -- reaping ---------------------------------------------------------------------------------


@dataclass(slots=True)
class ReapReport:
    """What one pass over the records did (for logs and tests)."""

    #: Groups signalled: their owner was gone and the group was provably the recorded one.
    ended: list[int] = field(default_factory=list)
    #: Stale records deleted without signalling anything (group gone, or its pid reused).
    stale: list[int] = field(default_factory=list)
    #: Records of live owners, or of another boot's or namespace's, left as they were.
    kept: list[int] = field(default_factory=list)


_reaping = threading.Lock()


class GroupRecords:
    """The `ProcessGroupObserver` a stdio transport is given: one record per group."""

    def started(self, pgid: int) -> None:
        record_group(pgid)

    def settled(self, pgid: int) -> None:
        refresh_group(pgid)

    def ended(self, pgid: int) -> None:
        forget_group(pgid)


#: The one observer every stdio server of this process shares (it holds no state).
GROUP_RECORDS = GroupRecords()


def reap_orphans() -> threading.Thread | None:
    """End the orphaned groups other (dead) cat-code runs recorded, on a thread.

    Costs one directory listing on the caller's thread; the reading, checking and
    signalling run on a non-daemon thread, so the interpreter waits for it (at most
    `REAP_TERM_GRACE_S` and a little) before it exits. Returns that thread, if any.
    """
    host = _host()
    if host is None:
        return None
    try:
        names = os.listdir(run_dir())
    except OSError:
        return None
    mine = f"stdio-{host.pid}-"
    if not any(n.endswith(".json") and not n.startswith(mine) for n in names):
        return None
    thread = threading.Thread(target=_reap_quietly, name="cat-code-reaper")
    thread.start()
    return thread


def _reap_quietly() -> None:
    try:
        report = reap()
    except Exception:  # a thread's boundary: reaping must never take cat-code down
        logger.debug("reaping orphaned MCP servers failed", exc_info=True)
        return
    if report.ended:
        logger.info(
            "ended %d MCP server process group(s) left by a cat-code that was killed: %s",
            len(report.ended),
            ", ".join(map(str, report.ended)),
        )


def reap(directory: Path | None = None) -> ReapReport:
    """One pass over the records (synchronous; waits out the grace of groups it ends)."""
    report = ReapReport()
    host = _host()
    if host is None:
        return report
    folder = directory or run_dir()
    with _reaping:
        try:
            paths = sorted(folder.glob("*.json"))
        except OSError:
            return report
        ending: list[tuple[int, int, Path]] = []
        for path in paths:
            verdict, record = _judge(path, host)
            pgid = int(record.get("pgid", 0)) if record else 0
            if verdict == "gone":
                continue
            if verdict == "keep":
                report.kept.append(pgid)
            elif verdict == "stale":
                report.stale.append(pgid)
                _unlink(path)
            else:
                signal_group(pgid, signal.SIGTERM)
                ending.append((pgid, int(record["start"]), path))
                report.ended.append(pgid)
        _finish(ending)
    return report


def _judge(path: Path, host: _Host) -> tuple[str, dict[str, Any]]:
    """``keep``, ``stale``, ``end`` (or ``gone``: deleted meanwhile), and the record read."""
    try:
        record = json.loads(read_bounded(path).decode("utf-8"))
        if not isinstance(record, dict):
            raise ValueError("not a JSON object")
        if record.get("version") != RECORD_VERSION and isinstance(record.get("version"), int):
            return "keep", {}  # another cat-code version's: not ours to judge
        owner, owner_start = int(record["ownerPid"]), int(record["ownerStart"])
        pgid, pid, started = int(record["pgid"]), int(record["pid"]), int(record["start"])
        cmdline = list(record["cmdline"])
        boot, namespace = str(record["boot"]), str(record["pidNamespace"])
    except FileNotFoundError:
        return "gone", {}  # its owner closed the group meanwhile
    except (OSError, ValueError, KeyError, TypeError) as exc:
        logger.debug("%s: unreadable run record (%s); deleting it", path, exc)
        return "stale", {}
    if namespace != host.pid_namespace:
        return "keep", record  # its pids mean other processes here: not ours to judge
    if boot != host.boot:
        return "stale", record  # every process of an earlier boot is gone
    if start_time(owner) == owner_start:
        return "keep", record  # the owner runs: it closes its own servers
    if pid <= 1 or pgid <= 1:
        return "stale", record
    if _runs(pid, cmdline, started) and _process_group(pid) == pgid:
        return "end", record
    if start_time(pid) is None and _survivors_recorded(pgid, started, record.get("members")):
        return "end", record  # the wrapper exited; what it started lives on
    logger.debug("%s: pid %s no longer runs the recorded server; left alone", path, pid)
    return "stale", record


def _survivors_recorded(pgid: int, leader_start: int, members: object) -> bool:
    """Whether the live members of ``pgid`` prove it is the recorded group (module docstring)."""
    recorded: set[tuple[int, int]] = set()
    if isinstance(members, list):
        for member in members:
            with contextlib.suppress(TypeError, ValueError):
                pid, started = member
                recorded.add((int(pid), int(started)))
    live = group_members(pgid) or []
    if any(started < leader_start for _, started in live):
        return False  # not started by the recorded leader or its descendants
    return any(member in recorded for member in live)


def _runs(pid: int, cmdline: list[str], started: int) -> bool:
    """Whether ``pid`` is still the recorded process: same start time, same command line."""
    return start_time(pid) == started and command_line(pid) == cmdline


def _finish(ending: list[tuple[int, int, Path]]) -> None:
    """Wait out the grace of the groups sent SIGTERM, SIGKILL what is left, drop the records."""
    starts = {pgid: started for pgid, started, _ in ending}
    for pgid in kill_after_grace(starts, REAP_TERM_GRACE_S, lambda g: _group_lives(g, starts[g])):
        logger.debug("process group %s outlived SIGTERM; sent SIGKILL", pgid)
    for _, _, path in ending:
        _unlink(path)


def _group_lives(pgid: int, leader_start: int) -> bool:
    """Whether the group we signalled still has a live member.

    While any member lives the kernel keeps the number from being reused, so a group
    still found is the one we signalled — unless its leader pid now shows another start.
    """
    leader = start_time(pgid)
    if leader is not None:
        return leader == leader_start
    if group_presence(pgid) is not GroupPresence.OURS:
        return False  # gone, or not ours to signal anyway
    members = group_members(pgid)
    return members is None or bool(members)  # cannot tell: assume it lives, SIGKILL follows


def group_members(pgid: int) -> list[tuple[int, int]] | None:
    """The non-zombie processes in group ``pgid`` (zombies wait for a reaper, not us), as
    (pid, start time) pairs; None if /proc cannot be listed."""
    found = live_members({pgid})
    return None if found is None else found.get(pgid, [])


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
