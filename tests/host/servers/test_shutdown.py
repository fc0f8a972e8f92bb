"""`run_until_signal` with real signals sent to this process and a recording fake pool."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from cat_code.host.servers.shutdown import run_until_signal


class FakeServers:
    """Records what shutting down asked of it; ``close_all`` can be held open."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.closing = asyncio.Event()
        self.release = asyncio.Event()
        self.release.set()

    async def close_all(self) -> None:
        self.calls.append("close_all")
        self.closing.set()
        await self.release.wait()

    def hurry(self) -> None:
        self.calls.append("hurry")
        self.release.set()

    def kill_now(self) -> None:
        self.calls.append("kill_now")


def send(sig: signal.Signals) -> None:
    os.kill(os.getpid(), sig)


async def test_work_that_ends_by_itself_keeps_its_exit_code_and_closes_the_servers() -> None:
    servers = FakeServers()

    async def work() -> int:
        return 3

    assert await run_until_signal(servers, work, announce=False) == 3
    assert servers.calls == ["close_all", "kill_now"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_cancels_the_work_closes_the_servers_and_exits_128_plus_n(
    sig: signal.Signals,
) -> None:
    servers = FakeServers()
    started = asyncio.Event()
    cancelled = []

    async def work() -> int:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return 0

    async def signal_when_started() -> None:
        await started.wait()
        send(sig)

    sender = asyncio.create_task(signal_when_started())
    async with asyncio.timeout(10):
        code = await run_until_signal(servers, work, announce=False)
    await sender

    assert code == 128 + sig
    assert cancelled == [True]
    assert servers.calls == ["close_all", "kill_now"]
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_a_signal_while_the_servers_close_hurries_the_close_and_sets_the_exit_code() -> None:
    servers = FakeServers()
    servers.release.clear()  # the close waits until hurried

    async def work() -> int:
        return 0

    async def signal_while_closing() -> None:
        await servers.closing.wait()
        send(signal.SIGINT)

    sender = asyncio.create_task(signal_while_closing())
    async with asyncio.timeout(10):
        code = await run_until_signal(servers, work, announce=False)
    await sender

    assert code == 130
    assert servers.calls == ["close_all", "hurry", "kill_now"]


async def test_a_signal_the_program_takes_does_not_end_the_work() -> None:
    servers = FakeServers()
    taken: list[signal.Signals] = []
    done = asyncio.Event()

    async def work() -> int:
        send(signal.SIGINT)
        async with asyncio.timeout(10):
            await done.wait()
        return 0

    def take(sig: signal.Signals) -> bool:
        taken.append(sig)
        done.set()
        return True

    assert await run_until_signal(servers, work, take=take, announce=False) == 0
    assert taken == [signal.SIGINT]
    assert servers.calls == ["close_all", "kill_now"]


async def test_a_cancellation_that_is_not_ours_still_closes_the_servers_and_goes_on() -> None:
    servers = FakeServers()
    started = asyncio.Event()

    async def work() -> int:
        started.set()
        await asyncio.Event().wait()
        return 0

    running = asyncio.create_task(run_until_signal(servers, work, announce=False))
    await started.wait()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert servers.calls == ["close_all", "kill_now"]
