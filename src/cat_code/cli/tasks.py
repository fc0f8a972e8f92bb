"""``cat-code tasks [--list NAME] [--json]``: a task list, printed from the shell.

Which list: ``--list NAME``, else ``$CAT_CODE_TASK_LIST``, else the list of the
conversation of this folder used last (the one ``--continue`` would bring back). Text: a
summary line and one line per task (deleted ones left out) through `safe_line`; a note on
stderr when the list is empty. ``--json``: an array of the tasks' objects, each with its
``ready`` flag. Exit 0; 2 for a name that cannot be a list; 1 when the list cannot be read.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cat_code.base.safe_text import safe_json
from cat_code.cli.options import Options
from cat_code.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE


def run_tasks_command(args: Options) -> int:
    from cat_code.host.tasks import BadTaskInput, TaskError, TaskStore, is_ready, list_from_env
    from cat_code.host.tasks.render import list_lines

    try:
        name = args.task_list or list_from_env() or _latest_session_list()
        store = TaskStore(name) if name is not None else None
    except BadTaskInput as exc:  # a name that cannot be a list's
        sys.stderr.write(f"cat-code tasks: {exc}\n")
        return EXIT_USAGE
    if store is None or name is None:
        sys.stderr.write("no task list: no saved conversation in this folder (use --list NAME)\n")
        return EXIT_OK if not args.json else _print_json([])
    try:
        tasks = store.read()
    except TaskError as exc:
        sys.stderr.write(f"cat-code tasks: {exc}\n")
        return EXIT_FAILED
    if args.json:
        by_id = {t.id: t for t in tasks}
        return _print_json([{**t.to_json(), "ready": is_ready(t, by_id)} for t in tasks])
    for line in list_lines(tasks, name):
        (sys.stdout if tasks else sys.stderr).write(line + "\n")
    return EXIT_OK


def _print_json(records: list[dict[str, object]]) -> int:
    sys.stdout.write(safe_json(records) + "\n")
    return EXIT_OK


def _latest_session_list() -> str | None:
    from cat_code.agent.history import list_sessions

    sessions = list_sessions(Path.cwd())
    if not sessions:
        return None
    latest = sessions[0]
    return latest.task_list or latest.id


__all__ = ["run_tasks_command"]
