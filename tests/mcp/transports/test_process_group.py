"""The process-group helpers, against real process groups (a shell and its child)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys

import pytest

from cat_code.mcp.transports.process_group import (
    GroupPresence,
    group_gone,
    group_presence,
    live_members,
    signal_group,
    wait_group_gone,
)

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")


async def test_a_group_is_seen_with_its_members_until_one_signal_ends_them_all() -> None:
    # A shell leading its own group, with a child of its own: two live members.
    leader = subprocess.Popen(
        ["sh", "-c", "sleep 60 & echo $!; wait"],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert leader.stdout is not None
        child = int(leader.stdout.readline())
        assert group_presence(leader.pid) is GroupPresence.OURS
        assert not await group_gone(leader.pid)
        found = live_members({leader.pid})
        assert found is not None
        assert {pid for pid, _ in found[leader.pid]} == {leader.pid, child}
        signal_group(leader.pid, signal.SIGKILL)
        leader.wait(timeout=5)  # reaped here; the child is orphaned to init, which reaps it
        async with asyncio.timeout(5):
            await wait_group_gone(leader.pid)
        assert await group_gone(leader.pid)
        assert (live_members({leader.pid}) or {}).get(leader.pid) is None
    finally:
        signal_group(leader.pid, signal.SIGKILL)
        leader.wait(timeout=5)
        assert leader.stdout is not None
        leader.stdout.close()


def test_signalling_a_group_that_is_gone_is_no_error() -> None:
    done = subprocess.Popen(["true"], start_new_session=True)
    done.wait(timeout=5)
    assert group_presence(done.pid) is GroupPresence.GONE
    signal_group(done.pid, signal.SIGTERM)
