"""What a project's own files may widen, and whether the user approved it.

A repository can only narrow what cat-code does until the user approves it. Its servers
(``./.mcp.json``) are approved one by one (`cat_code.host.config.trust`); the rest of its
trust-bearing content is approved as a whole per `ContentKind`, keyed by the project
folder and the digest of exactly what would widen cat-code's reach: for `ContentKind.RULES`
the ``permissions.allow`` list of the project's ``.cat-code/settings.json`` as written (its
deny rules always apply and need nothing). A changed list, or the same file in another
folder, asks again. ``--trust-project`` trusts it for one run and records nothing.
A kind that joins later (project hooks) adds a reader to `_READERS`; the verbs
(``cat-code project``) and the REPL's question then cover it too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cat_code.base.safe_text import safe_line
from cat_code.host.config.trust import ContentKind, TrustDecision, TrustStore, entry_digest
from cat_code.host.state.settings import (
    PROJECT_SETTINGS,
    SettingsError,
    project_settings_path,
    read_settings,
)


@dataclass(frozen=True, slots=True)
class ProjectContent:
    """One kind of a project's trust-bearing content, as written now."""

    kind: ContentKind
    #: The project folder approvals are keyed by (the one holding ``.cat-code``).
    folder: Path
    #: The file it comes from.
    file: Path
    #: What would widen cat-code's reach, as written: what the digest is of.
    raw: Any
    #: What the user is shown, one item each (e.g. the allow rules).
    items: tuple[str, ...]
    #: The user's decision about it as written now (None: not asked yet, or changed since).
    decision: TrustDecision | None = None

    @property
    def digest(self) -> str:
        return entry_digest(self.raw)

    @property
    def approved(self) -> bool:
        return self.decision is TrustDecision.APPROVED

    def describe(self) -> str:
        """One line: what it is, where, and its items (escaped: they are the repository's)."""
        shown = ", ".join(safe_line(item) for item in self.items)
        if self.kind is ContentKind.RULES:
            return f"allow rules of {self.file}: {shown}"
        return f"{self.kind} of {self.file}: {shown}"


def _rules(settings_file: Path) -> tuple[Any, tuple[str, ...]] | None:
    """The allow list of a project settings file (raw, items), or None when it has none."""
    try:
        settings = read_settings(settings_file)
    except SettingsError:
        return None  # named by the rule book's warning; nothing of it applies
    block = settings.get("permissions")
    allow = block.get("allow") if isinstance(block, dict) else None
    if not isinstance(allow, list) or not allow:
        return None
    return allow, tuple(str(entry) for entry in allow)


#: How each kind is read from a project's settings file (a kind that joins adds one).
_READERS: dict[ContentKind, Callable[[Path], tuple[Any, tuple[str, ...]] | None]] = {
    ContentKind.RULES: _rules,
}


def project_folder(settings_file: Path) -> Path:
    """The project folder a settings file belongs to (``<folder>/.cat-code/settings.json``)."""
    return settings_file.parents[len(PROJECT_SETTINGS.parts) - 1]


def read_content(
    kind: ContentKind, settings_file: Path, store: TrustStore | None = None
) -> ProjectContent | None:
    """``kind``'s content of ``settings_file`` with the user's decision; None when the
    file brings none of it."""
    found = _READERS[kind](settings_file)
    if found is None:
        return None
    raw, items = found
    folder = project_folder(settings_file)
    content = ProjectContent(kind, folder, settings_file, raw, items)
    decision = (store or TrustStore()).content_decision(folder, kind, content.digest)
    return ProjectContent(kind, folder, settings_file, raw, items, decision)


def project_content(
    cwd: Path | None = None, store: TrustStore | None = None
) -> list[ProjectContent]:
    """Every kind of trust-bearing content the project of ``cwd`` brings, decided or not."""
    settings_file = project_settings_path(cwd)
    store = store or TrustStore()
    found = (read_content(kind, settings_file, store) for kind in ContentKind)
    return [content for content in found if content is not None]


def decide_content(
    decision: TrustDecision,
    kinds: tuple[ContentKind, ...] = tuple(ContentKind),
    *,
    cwd: Path | None = None,
    store: TrustStore | None = None,
) -> list[ProjectContent]:
    """Record ``decision`` for the project's content of ``kinds`` as written now; what was
    decided (empty: the project brings none of it)."""
    store = store or TrustStore()
    decided = [c for c in project_content(cwd, store) if c.kind in kinds]
    for content in decided:
        record(content, decision, store)
    return decided


def record(
    content: ProjectContent, decision: TrustDecision, store: TrustStore | None = None
) -> None:
    """Record ``decision`` for ``content`` as it was read (and shown), not as it is now."""
    (store or TrustStore()).record_content(content.folder, content.kind, content.digest, decision)
