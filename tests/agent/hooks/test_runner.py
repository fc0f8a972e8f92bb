"""Running hook processes for real: stdin, environment, exit codes, timeouts that end the
whole process group."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from scripted.processes import alive
from scripted.procs import kill_quietly, wait_until

from cat_code.agent.hooks import (
    HookCommand,
    HookEvent,
    HookScope,
    run_hook,
    runner as runner_module,
)


def hook(command: str, timeout: float = 20.0) -> HookCommand:
    return HookCommand(HookEvent.PRE_TOOL_USE, "", command, timeout, Path("s.json"), HookScope.USER)


async def test_the_hook_reads_the_event_on_stdin_and_the_project_dir_from_its_environment(
    tmp_path: Path,
) -> None:
    script = tmp_path / "hook.sh"
    script.write_text(
        '#!/bin/bash\nin=$(cat)\necho "$in"\n'
        'echo "$CAT_CODE_PROJECT_DIR|$CLAUDE_PROJECT_DIR|$PWD" >&2\n'
    )
    script.chmod(0o755)
    run = await run_hook(hook(str(script)), {"tool_name": "shell", "n": "你好"}, tmp_path)
    assert run.exit_code == 0 and not run.timed_out
    assert json.loads(run.stdout) == {"tool_name": "shell", "n": "你好"}
    dirs = run.stderr.strip().split("|")
    assert dirs == [str(tmp_path), str(tmp_path), os.getcwd()]  # it runs where cat-code runs
    assert run.ms > 0


async def test_the_exit_code_and_stderr_come_back_as_they_were(tmp_path: Path) -> None:
    run = await run_hook(hook("echo blocked >&2; exit 2"), {}, tmp_path)
    assert (run.exit_code, run.stderr) == (2, "blocked\n")


async def test_a_hook_past_its_timeout_is_ended_with_everything_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner_module, "TERMINATE_GRACE_S", 2.0)
    pids = tmp_path / "pids"
    # The hook starts a grandchild that ignores nothing, then waits forever.
    command = f"sleep 300 & echo $! > {pids}; echo $$ >> {pids}; wait"
    run = await run_hook(hook(command, timeout=1.0), {}, tmp_path)
    assert run.timed_out and run.exit_code is None
    found = [int(p) for p in pids.read_text().split()]
    try:
        await wait_until(lambda: not any(alive(pid) for pid in found))
    finally:
        kill_quietly(*found)


async def test_a_cancelled_hook_is_ended_before_the_cancel_goes_on(tmp_path: Path) -> None:
    started = tmp_path / "started"
    os.mkfifo(started)  # the hook's write waits for our read: no polling
    command = f"echo $$ > {started}; exec sleep 300"
    task = asyncio.create_task(run_hook(hook(command), {}, tmp_path))
    async with asyncio.timeout(10):
        pid = int(await asyncio.to_thread(started.read_text))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    try:
        await wait_until(lambda: not alive(pid))
    finally:
        kill_quietly(pid)


async def test_the_hook_runs_in_its_own_process_group(tmp_path: Path) -> None:
    run = await run_hook(hook("ps -o pgid= -p $$"), {}, tmp_path)
    assert int(run.stdout.strip()) != os.getpgrp()


async def test_a_large_event_is_written_whole_to_a_hook_that_reads_it(tmp_path: Path) -> None:
    big = "x" * 1_000_000  # far past a pipe's buffer: written as the hook reads
    run = await run_hook(hook("wc -c"), {"tool_input": {"content": big}}, tmp_path)
    assert int(run.stdout) > 1_000_000


async def test_a_hook_that_never_reads_its_stdin_still_ends_normally(tmp_path: Path) -> None:
    big = "x" * 1_000_000
    run = await run_hook(hook("echo done"), {"tool_input": {"content": big}}, tmp_path)
    assert (run.exit_code, run.stdout) == (0, "done\n")


async def test_a_command_that_is_not_found_is_a_failed_run_not_an_exception(
    tmp_path: Path,
) -> None:
    run = await run_hook(hook("/no/such/hook.sh"), {}, tmp_path)
    assert run.exit_code == 127 and "not found" in run.stderr


async def test_the_asyncio_path_gives_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner_module.process, "available", lambda: False)
    run = await run_hook(hook("cat; echo oops >&2; exit 3"), {"a": 1}, tmp_path)
    assert (run.exit_code, json.loads(run.stdout), run.stderr) == (3, {"a": 1}, "oops\n")
    timed = await run_hook(hook("exec sleep 300", timeout=0.5), {}, tmp_path)
    assert timed.timed_out
