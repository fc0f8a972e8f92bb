"""Worktree names: what a NAME may be, what one is made of when none is given, and where
a name puts its folder and branch.

A NAME becomes a folder (``.cat-code/worktrees/NAME``) and a branch (``cat-code/NAME``),
so it must be safe as both: ``[A-Za-z0-9._-]{1,40}``, and none of what git refuses in a
ref component (a leading ``.``, ``..``, a trailing ``.`` or ``.lock``) nor a leading
``-`` (it would read as an option).
"""

from __future__ import annotations

import re
import secrets
import time

from cat_code.host.worktrees.errors import InvalidName

#: Where a repository's cat-code worktrees live, relative to its main work tree.
WORKTREES_DIR = ".cat-code/worktrees"
#: The branch of worktree NAME is ``cat-code/NAME``.
BRANCH_PREFIX = "cat-code/"
_NAME = re.compile(r"[A-Za-z0-9._-]{1,40}")


def check_name(name: str) -> str:
    """``name`` if it may name a worktree; `InvalidName` otherwise."""
    if (
        not _NAME.fullmatch(name)
        or ".." in name
        or name.startswith((".", "-"))
        or name.endswith((".", ".lock"))
    ):
        raise InvalidName(name)
    return name


def generated_name() -> str:
    """A fresh name: month, day, time of day and 4 random hex digits (``1202-0105-a3f9``)."""
    return f"{time.strftime('%m%d-%H%M')}-{secrets.token_hex(2)}"


def branch_of(name: str) -> str:
    return BRANCH_PREFIX + name
