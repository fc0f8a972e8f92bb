"""Saved sessions: every conversation written as it goes (`SessionLog`), listed, loaded
and resumed (`store`); messages as JSON (`codec`)."""

from cat_code.agent.history.store import (
    LoadedSession,
    SessionLog,
    SessionNotFound,
    find,
    folder_key,
    list_sessions,
    load,
    resolve,
    session_line,
    sessions_folder,
)

__all__ = [
    "LoadedSession",
    "SessionLog",
    "SessionNotFound",
    "find",
    "folder_key",
    "list_sessions",
    "load",
    "resolve",
    "session_line",
    "sessions_folder",
]
