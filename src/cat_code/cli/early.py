"""``cat-code -p``: its stdio servers spawned before the agent is imported.

Importing the agent (providers, loop, tools) takes longer than most servers take to
boot, and on two cores the two can overlap: `run_oneshot_early` loads the config, reaps
what a killed run left and spawns every enabled stdio entry (`cat_code.host.servers.prestart`)
on an event loop it keeps, and only then imports `cat_code.cli.oneshot`, whose run goes
on on the same loop and whose pool takes the spawned transports. Invariant: nothing
spawned outlives the command. The `Prestarted` is the run's `Servers` from the spawn
on: ``oneshot`` closes it (and with it the pool) on every path of its run, and what
happens before, a usage error or an exception, closes it here. SIGINT, SIGTERM and
SIGHUP between the spawn and the run's own handlers (`cat_code.host.servers.shutdown`) close the
servers and exit 128 + N, as they do later.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from types import FrameType

from cat_code.cli.options import Options
from cat_code.host.config.load import load_run_config
from cat_code.host.servers.prestart import Prestarted, prestart
from cat_code.host.servers.shutdown import SIGNALS
from cat_code.host.state.run_records import reap_orphans


class _Interrupted(KeyboardInterrupt):
    """A signal came before the run's own handlers were in place. (A KeyboardInterrupt,
    so that asyncio lets it out of a callback instead of logging it.)"""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise _Interrupted(signum)


def run_oneshot_early(args: Options) -> int:
    """``cat-code -p``: spawn the stdio servers, then import and run the one-shot agent."""
    previous = {sig: signal.signal(sig, _interrupt) for sig in SIGNALS}
    prestarted = Prestarted()
    with asyncio.Runner() as runner:
        try:
            try:
                config = load_run_config(args.config_paths, trust_project=args.trust_project)
                reap_orphans()  # once, before any server starts
                runner.run(prestart(config, prestarted))
                from cat_code.cli.oneshot import run_oneshot

                return run_oneshot(args, runner=runner, config=config, prestarted=prestarted)
            finally:
                # Closed already when the run got as far as its own close; else closed now.
                runner.run(prestarted.close_all())
        except _Interrupted as exc:
            for sig in SIGNALS:  # a second signal hurries the close, as it does later
                signal.signal(sig, lambda signum, frame: prestarted.hurry())
            name = signal.Signals(exc.signum).name
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(f"cat-code: interrupted by {name}; closing the MCP servers\n")
            runner.run(prestarted.close_all())
            return 128 + exc.signum
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
