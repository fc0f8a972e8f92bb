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

from cat_code.agent.hooks import HookCommand, HookEvent, HookScope, run_hook
from cat_code.agent.hooks import runner as runner_module


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
    real = str(tmp_path.resolve())
    dirs = run.stderr.strip().split("|")
    assert dirs[:2] == [str(tmp_path), str(tmp_path)] and Path(dirs[2]).resolve() == Path(real)
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
