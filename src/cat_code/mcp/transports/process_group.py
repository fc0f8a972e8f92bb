"""Process groups: signal one, tell whether it is still there, wait for it to be gone.

The one copy of these helpers: the stdio transport ends the groups it started with them,
and a host that reaps groups a killed run left behind (cat-code's run records) uses the
same ones. ``killpg(pgid, 0)`` is the cheap look, but it also finds zombies nobody has
reaped yet (a container init may not reap); only /proc tells the living apart, so a
group the cheap look still finds is scanned there, on a thread when on the event loop.
Signals to a group that is gone, or not ours, are no error: the caller looks again.
Without /proc (macOS) every group the cheap look finds counts as alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import os
import signal
import time
from collections.abc import Callable, Collection

#: Waiting for a group to die: the first look again after this, then twice as long each
#: time up to the cap (a group that dies at once is seen at once, a slow one costs little).
GROUP_POLL_FIRST_S = 0.01
GROUP_POLL_MAX_S = 0.2
#: A group killpg still finds after this much waiting is scanned in /proc (on a thread):
#: by then its members have had time to be reaped, so what remains may be zombies only.
GROUP_SCAN_AFTER_S = 0.05
#: After SIGKILL, how long `kill_after_grace` waits for the kernel to finish the group (a
#: loaded machine may not schedule the dying processes at once).
KILL_WAIT_S = 1.0
_PROC = "/proc"


class GroupPresence(enum.Enum):
    """What ``killpg(pgid, 0)`` says of a group (zombies count as members)."""

    GONE = "gone"
    #: It exists and we may signal it.
    OURS = "ours"
    #: It exists but belongs to someone else (a reused number): not ours to signal.
    FOREIGN = "foreign"


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to every process in group ``pgid``; a group gone or not ours is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def group_presence(pgid: int) -> GroupPresence:
    """Whether the kernel still knows the group, and whether it is ours: cheap, no /proc."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return GroupPresence.GONE
    except PermissionError:
        return GroupPresence.FOREIGN
    return GroupPresence.OURS


def group_listed(pgid: int) -> bool:
    """Whether the kernel still knows the group (zombies count as members)."""
    return group_presence(pgid) is not GroupPresence.GONE


def stat_fields(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state is [0]), or None."""
    # os.open/os.read, not pathlib: `live_members` reads every process's stat, at each
    # server's start, and pathlib's object churn was most of that scan's cost.
    try:
        fd = os.open(f"{_PROC}/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        stat = os.read(fd, 4096)  # a stat line is well under 1 KB
    except OSError:
        return None
    finally:
        os.close(fd)
    # The command name is in parentheses and may itself hold spaces or parentheses.
    return stat[stat.rfind(b")") + 2 :].split()


def live_members(pgids: Collection[int]) -> dict[int, list[tuple[int, int]]] | None:
    """The non-zombie processes of each group in ``pgids`` as (pid, start time in clock
    ticks) pairs, from one pass over /proc; None if /proc cannot be listed. A group with
    no live member is absent from the answer."""
    try:
        entries = os.listdir(_PROC)
    except OSError:
        return None
    members: dict[int, list[tuple[int, int]]] = {}
    for entry in entries:
        if entry.isdigit():
            fields = stat_fields(int(entry))
            # Fields after the command name: state ppid pgrp ... starttime is [19].
            if fields and len(fields) > 19 and fields[0] != b"Z":
                group = int(fields[2])
                if group in pgids:
                    members.setdefault(group, []).append((int(entry), int(fields[19])))
    return members


def has_live_member(pgid: int) -> bool:
    """Whether any live (non-zombie) process is in the group; True when /proc cannot tell.
    Reads all of /proc: call it on a thread from the event loop."""
    found = live_members((pgid,))
    return found is None or bool(found.get(pgid))


def kill_after_grace(
    pgids: Collection[int], grace: float, lives: Callable[[int], bool] = has_live_member
) -> list[int]:
    """Blocking, for groups already sent SIGTERM: wait up to ``grace`` seconds for each to
    be gone (``lives`` says whether it still is), then SIGKILL those that are not and wait
    (up to `KILL_WAIT_S`) for the kernel to finish them; which were killed. For threads,
    never the event loop."""
    waiting = _wait_gone(list(pgids), grace, lives)
    killed = [pgid for pgid in waiting if lives(pgid)]
    for pgid in killed:
        signal_group(pgid, signal.SIGKILL)
    _wait_gone(killed, KILL_WAIT_S, lives)
    return killed


def _wait_gone(pgids: list[int], seconds: float, lives: Callable[[int], bool]) -> list[int]:
    """Poll until every group in ``pgids`` is gone or ``seconds`` pass; those still there."""
    deadline = time.monotonic() + seconds
    delay = GROUP_POLL_FIRST_S
    waiting = pgids
    while waiting and time.monotonic() < deadline:
        waiting = [pgid for pgid in waiting if lives(pgid)]
        if waiting:
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, GROUP_POLL_MAX_S)
    return waiting


async def group_gone(pgid: int) -> bool:
    """Whether no live process is left in the group (a look, no waiting)."""
    if not group_listed(pgid):
        return True
    return not await asyncio.to_thread(has_live_member, pgid)


async def wait_group_gone(pgid: int) -> None:
    """Return once no live process is left in the group; the caller bounds the wait."""
    delay = GROUP_POLL_FIRST_S
    waited = 0.0
    while group_listed(pgid):
        if waited >= GROUP_SCAN_AFTER_S and not await asyncio.to_thread(has_live_member, pgid):
            return  # zombies only, which nobody may ever reap
        await asyncio.sleep(delay)
        waited += delay
        delay = min(delay * 2, GROUP_POLL_MAX_S)


__all__ = [
    "GroupPresence",
    "group_gone",
    "group_listed",
    "group_presence",
    "has_live_member",
    "kill_after_grace",
    "live_members",
    "signal_group",
    "stat_fields",
    "wait_group_gone",
]
