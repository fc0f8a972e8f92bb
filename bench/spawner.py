"""A small process that starts the measured commands, so their peak RSS is their own.

Linux keeps a process's peak RSS across ``fork`` and ``exec``: a command started by
the benchmark (60+ MB of Python with the SDK loaded) would report at least that much.
Started from this interpreter (``-I -S``, nothing but ``os``, ``sys``, ``json`` and
``time`` loaded, under 10 MB), a command's ``wait4`` peak is its own. One JSON request
per stdin line — ``{"argv", "env", "cwd", "stdout", "stderr"}`` — one JSON answer per
line: ``{"seconds", "peak_rss_kib", "status"}``, timed from spawn to exit. Exits on EOF.
"""

import json
import os
import sys
import time


def run(request: dict) -> dict:
    os.chdir(request["cwd"])
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
        (os.POSIX_SPAWN_OPEN, 2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
    ]
    argv = request["argv"]
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, request["env"], file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "peak_rss_kib": usage.ru_maxrss,
        "status": os.waitstatus_to_exitcode(status),
    }


def main() -> None:
    for line in sys.stdin:
        try:
            answer = run(json.loads(line))
        except OSError as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
