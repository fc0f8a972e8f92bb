"""Workspace trust: which project servers (``./.mcp.json`` entries) the user approved.

A project file comes with the repository, so none of its entries is started, contacted
or even ``${VAR}``-expanded until the user approves it. A decision (approved or
rejected) is kept in ``$CAT_CODE_HOME/approvals.json`` — never in the project — keyed by
the project folder's real path, the server name and `entry_digest` of the entry as
written (before expansion): a changed entry, or the same file in another folder, has no
decision and asks again. The user's own files (``$CAT_CODE_HOME/mcp.json``,
``--mcp-config`` files) need no approval; entries cat-code writes into ``.mcp.json`` for
the user (``mcp add --scope project``, ``mcp import``) are recorded as approved.

Other trust-bearing project content (a `ContentKind`: the allow rules of
``.cat-code/settings.json``; project hooks join as another kind) is decided as a whole,
keyed by the project folder, the kind and the digest of what would widen cat-code's
reach (`TrustStore.content_decision`); its records sit beside the servers' in the same
file, under ``"content"``.
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cat_code.base.files import read_bounded
from cat_code.host.config.edit import ConfigFile
from cat_code.host.config.masking import written_target
from cat_code.host.config.reach import entry_reach
from cat_code.host.state.home import cat_code_home, edit_lock, write_private
from cat_code.mcp.errors import ConfigError

logger = logging.getLogger(__name__)

#: The approvals file's name in ``$CAT_CODE_HOME``.
APPROVALS_FILE = "approvals.json"
_VERSION = 1


class TrustDecision(enum.StrEnum):
    """What the user said about one project entry."""

    APPROVED = "approved"
    REJECTED = "rejected"


class ContentKind(enum.StrEnum):
    """Project content, other than servers, that widens what cat-code does once approved."""

    #: The ``permissions.allow`` rules of the project's ``.cat-code/settings.json``.
    RULES = "rules"


#: The project file's name in the folder cat-code runs in.
PROJECT_FILE = ".mcp.json"


class UnknownProjectServer(ConfigError):
    """A name given to approve or reject is not an entry of the project file."""

    def __init__(
        self,
        name: str,
        path: Path,
        known: Sequence[str],
        *,
        user_file: Path | None,
        missing: bool = False,
    ) -> None:
        self.name = name
        self.path = path
        self.known = list(known)
        #: The user's own file that defines ``name`` (None: no file does).
        self.user_file = user_file
        #: There is no project file at ``path`` at all.
        self.missing = missing
        # A missing file is said so, not named as if it held no such entry.
        project = f"there is no ./{PROJECT_FILE} in {path.parent}" if missing else str(path)
        if user_file is not None:
            of = f" ({project})" if missing else f" of {project}"
            text = (
                f"'{name}' is your own server (in {user_file}), not a project server{of}: "
                "it needs no approval"
            )
        elif missing:
            text = f"no project server named '{name}': {project}"
        else:
            listed = ", ".join(known) or "none"
            text = f"no project server named '{name}' in {path} (project servers: {listed})"
        super().__init__(text)


@dataclass(frozen=True, slots=True)
class Decided:
    """One project entry a decision was recorded for."""

    name: str
    #: Its command line or URL as written, secrets masked, and what it sends and reads
    #: (`cat_code.host.config.reach`).
    target: str
    #: The user's own file has a server of this name, which stays in use instead.
    shadowed_by: Path | None = None


def decide(
    names: Sequence[str],
    decision: TrustDecision,
    *,
    every: bool = False,
    cwd: Path | None = None,
    store: TrustStore | None = None,
) -> list[Decided]:
    """Record ``decision`` for the project servers ``names`` (``every``: all of them) of
    ``cwd``'s project file, as they are written now. Nothing is recorded when one name is
    unknown (`UnknownProjectServer`) or the file cannot be read (`ConfigError`)."""
    folder = cwd or Path.cwd()
    path = folder / PROJECT_FILE
    file = ConfigFile.read(path)
    servers = file.servers
    chosen = list(servers) if every else list(dict.fromkeys(names))
    user_file, user_names = _user_servers()
    for name in chosen:
        if name not in servers:
            raise UnknownProjectServer(
                name,
                path,
                list(servers),
                user_file=user_file if name in user_names else None,
                missing=not file.exists,
            )
    store = store or TrustStore()
    store.record(folder, {name: servers[name] for name in chosen}, decision)
    return [
        Decided(
            name,
            " ".join(filter(None, (written_target(servers[name]), entry_reach(servers[name])))),
            shadowed_by=user_file if name in user_names else None,
        )
        for name in chosen
    ]


def approve_written(
    folder: Path, entries: Mapping[str, Any], store: TrustStore | None = None
) -> None:
    """Entries cat-code just wrote into ``folder``'s project file for the user: theirs."""
    (store or TrustStore()).record(folder, entries, TrustDecision.APPROVED)


def _user_servers() -> tuple[Path, set[str]]:
    """The user's own config file and the server names in it (read once per question)."""
    user = cat_code_home() / "mcp.json"
    try:
        return user, set(ConfigFile.read(user).servers)
    except ConfigError:
        return user, set()


def entry_digest(raw: Any) -> str:
    """``sha256:`` of the entry's canonical JSON (sorted keys, no spaces), as written."""
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def project_key(folder: Path) -> str:
    """The folder as approvals name it: its real path (symlinks resolved)."""
    return os.path.realpath(folder)


def _decision_in(recorded: Mapping[str, Any], name: str, raw: Any) -> TrustDecision | None:
    """The decision ``recorded`` (one folder's approvals) holds for this entry as written."""
    found = recorded.get(name)
    if not isinstance(found, dict) or found.get("digest") != entry_digest(raw):
        return None
    try:
        return TrustDecision(str(found.get("decision")))
    except ValueError:
        return None


class TrustStore:
    """The approvals file: read on every question (another cat-code may have written it)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else cat_code_home() / APPROVALS_FILE

    def decision(self, folder: Path, name: str, raw: Any) -> TrustDecision | None:
        """The decision recorded for this entry as written in ``folder``; None: none yet."""
        return self.decisions(folder)(name, raw)

    def decisions(self, folder: Path) -> Callable[[str, Any], TrustDecision | None]:
        """`decision` for many entries of one folder, from one read of the file."""
        recorded = self._projects().get(project_key(folder), {})
        return lambda name, raw: _decision_in(recorded, name, raw)

    def record(self, folder: Path, entries: Mapping[str, Any], decision: TrustDecision) -> None:
        """Remember ``decision`` for each (name → raw entry) of ``folder``'s project file."""
        if not entries:
            return
        # Held across read-modify-write: two cat-code approving at once both land.
        with edit_lock(self.path):
            data = self._data()
            projects = _folders(data, "projects")
            mine = projects.setdefault(project_key(folder), {})
            for name, raw in entries.items():
                mine[name] = {"digest": entry_digest(raw), "decision": str(decision)}
            self._write({**data, "version": _VERSION, "projects": projects})

    def content_decision(
        self, folder: Path, kind: ContentKind, digest: str
    ) -> TrustDecision | None:
        """The decision recorded for ``folder``'s content of ``kind`` as it is now (its
        ``digest``); None: none yet, or the content changed since."""
        found = _folders(self._data(), "content").get(project_key(folder), {}).get(str(kind))
        if not isinstance(found, dict) or found.get("digest") != digest:
            return None
        try:
            return TrustDecision(str(found.get("decision")))
        except ValueError:
            return None

    def record_content(
        self, folder: Path, kind: ContentKind, digest: str, decision: TrustDecision
    ) -> None:
        """Remember ``decision`` for ``folder``'s content of ``kind`` with ``digest``."""
        with edit_lock(self.path):
            data = self._data()
            content = _folders(data, "content")
            mine = content.setdefault(project_key(folder), {})
            mine[str(kind)] = {"digest": digest, "decision": str(decision)}
            self._write({**data, "version": _VERSION, "content": content})

    def _projects(self) -> dict[str, dict[str, Any]]:
        return _folders(self._data(), "projects")

    def _data(self) -> dict[str, Any]:
        try:
            text = read_bounded(self.path).decode("utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            logger.warning(
                "%s: cannot read approvals (%s); every project server asks", self.path, exc
            )
            return {}
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            logger.warning("%s: not valid JSON (%s); every project server asks", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        write_private(self.path, text)


def _folders(data: Mapping[str, Any], key: str) -> dict[str, dict[str, Any]]:
    """``data[key]``: the records of each project folder (malformed parts left out)."""
    found = data.get(key)
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(v, dict)}
