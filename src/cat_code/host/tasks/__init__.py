"""The task list the model keeps: `TaskStore` (one JSON file per task, shared safely
between processes), the `Task` data and its errors, and the ways it is shown (`render`).

Runtime state of the host floor: the task tools (`cat_code.agent.task_tools`), the REPL's
panel and ``/tasks``, ``cat-code tasks`` and ``-p``'s stream-json all read one store.
"""

from cat_code.host.tasks.model import (
    OPEN_STATUSES,
    BadStatus,
    BadTaskInput,
    CorruptTask,
    DependencyCycle,
    SelfDependency,
    Task,
    TaskError,
    TaskStatus,
    TaskStoreUnavailable,
    UnknownTask,
    is_ready,
    open_blockers,
)
from cat_code.host.tasks.store import (
    TASK_LIST_ENV,
    TASKS_DIR,
    Listener,
    TaskStore,
    TaskUpdate,
    UnblockedHook,
    list_from_env,
    tasks_root,
    valid_list_name,
)

__all__ = [
    "OPEN_STATUSES",
    "TASKS_DIR",
    "TASK_LIST_ENV",
    "BadStatus",
    "BadTaskInput",
    "CorruptTask",
    "DependencyCycle",
    "Listener",
    "SelfDependency",
    "Task",
    "TaskError",
    "TaskStatus",
    "TaskStore",
    "TaskStoreUnavailable",
    "TaskUpdate",
    "UnblockedHook",
    "UnknownTask",
    "is_ready",
    "list_from_env",
    "open_blockers",
    "tasks_root",
    "valid_list_name",
]
