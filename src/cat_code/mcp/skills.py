"""Skills (``io.modelcontextprotocol/skills``, SEP-2640): listed lazily, loaded verified.

A server that declares the extension lists its skills with ``skills/list``: each entry
names the skill's ``SKILL.md`` (``uri``, whose last path segment is the skill's name), its
``frontmatter`` (the file's YAML frontmatter as a JSON object) and its ``resources``: every
file of the skill as ``{uri, digest, size}`` (``sha256:<64 lowercase hex>`` of the raw
bytes, their length), or ``"dynamic"`` when the server publishes no manifest. Listing
fetches no file: a file is read (``resources/read``) only when a skill is loaded, and a
supporting file only when it is asked for (the extension: nothing ahead of need).

Every file read is verified before anything uses it: its byte length against the entry's
``size``, then its SHA-256 against the ``digest``; ``SKILL.md``'s frontmatter is then
parsed and compared field by field with the entry's (a field missing on one side equals
null on the other), and any difference refuses the skill. A failure raises `SkillRefused`
naming the server, the skill and the `SkillCheck` that failed; nothing of the refused
content is returned. Entries too malformed to show (no ``SKILL.md`` uri, no name or
description, a name that is not the uri's last segment) are left out of a listing with a
warning naming the server, as resources are.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import logging
import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from cat_code.base.frontmatter import parse_frontmatter
from cat_code.mcp.errors import ProtocolError
from cat_code.mcp.wire import ReadResourceResult

logger = logging.getLogger(__name__)

#: The extension's identifier, declared in ``capabilities.extensions`` by both sides.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"
#: ``resources`` of an entry whose server publishes no manifest of the skill's files.
DYNAMIC = "dynamic"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


class SkillCheck(enum.Enum):
    """The verification a loaded file failed (its value is how messages name it)."""

    #: The entry gives no usable ``{uri, digest, size}`` for the file.
    MANIFEST = "manifest"
    #: The read returned no contents for the file (or a blob that does not decode).
    CONTENTS = "contents"
    SIZE = "size"
    DIGEST = "digest"
    FRONTMATTER = "frontmatter"


class SkillRefused(ProtocolError):
    """A skill's file failed verification; nothing of it is used.

    ``server``, ``skill`` (its name), ``check`` (a `SkillCheck`), ``uri`` (the file) and
    ``detail`` (what differed) are kept for callers that word it themselves.
    """

    def __init__(self, server: str, skill: str, check: SkillCheck, uri: str, detail: str) -> None:
        super().__init__(
            f"skill '{skill}' of MCP server '{server}' refused: {check.value} check failed "
            f"for {uri}: {detail}"
        )
        self.server = server
        self.skill = skill
        self.check = check
        self.uri = uri
        self.detail = detail


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill's manifest: its uri, ``sha256:`` digest and size in bytes."""

    uri: str
    digest: Any
    size: Any


@dataclass(frozen=True, slots=True)
class Skill:
    """One ``skills/list`` entry, checked: what a host shows before loading anything."""

    uri: str
    name: str
    description: str
    #: The entry's frontmatter as sent (what ``SKILL.md``'s must equal).
    frontmatter: dict[str, Any]
    #: The manifest, or None for a ``dynamic`` skill (no manifest published).
    files: tuple[SkillFile, ...] | None
    #: The entry as sent, for ``--json``.
    entry: dict[str, Any]

    @property
    def directory(self) -> str:
        """The skill's directory uri (its ``SKILL.md`` uri without ``/SKILL.md``)."""
        return self.uri[: -len(SKILL_FILE) - 1]

    def relative(self, uri: str) -> str:
        """``uri`` as a path inside the skill (``references/FORMS.md``)."""
        prefix = self.directory + "/"
        return uri[len(prefix) :] if uri.startswith(prefix) else uri

    def supporting_files(self) -> list[SkillFile]:
        """The manifest's files other than ``SKILL.md`` ([] for a dynamic skill)."""
        return [f for f in self.files or () if f.uri != self.uri]

    def file_uri(self, path: str) -> str:
        """The uri of ``path`` (relative to the skill, or a full uri) inside the skill."""
        if "://" in path:  # a full uri: inside the skill or not, as it says
            return path
        return f"{self.directory}/{path.lstrip('/')}"


@dataclass(frozen=True, slots=True)
class LoadedSkill:
    """A skill whose ``SKILL.md`` passed verification: the file's text, as sent."""

    skill: Skill
    text: str


@dataclass(frozen=True, slots=True)
class VerifiedFile:
    """A supporting file read and checked (``verified`` is False only for a dynamic skill,
    whose server gives nothing to check it against)."""

    uri: str
    data: bytes
    mime_type: str | None
    verified: bool


def valid_skill(entry: Any, server: str) -> Skill | None:
    """One ``skills/list`` entry as a `Skill`, or None (logged) when it cannot be shown."""
    problem = _entry_problem(entry)
    if problem is not None:
        logger.warning("%s: skipping a skill entry (%s): %.200r", server, problem, entry)
        return None
    frontmatter = entry["frontmatter"]
    resources = entry["resources"]
    files = None
    if resources != DYNAMIC:
        files = tuple(_manifest_file(f) for f in resources)
    return Skill(
        uri=entry["uri"],
        name=frontmatter["name"],
        description=frontmatter["description"],
        frontmatter=frontmatter,
        files=files,
        entry=entry,
    )


def _manifest_file(entry: Any) -> SkillFile:
    """A manifest entry as sent; one without a string uri matches no file."""
    if not isinstance(entry, dict):
        return SkillFile("", None, None)
    uri = entry.get("uri")
    return SkillFile(uri if isinstance(uri, str) else "", entry.get("digest"), entry.get("size"))


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return "not an object"
    uri, frontmatter = entry.get("uri"), entry.get("frontmatter")
    if not isinstance(uri, str) or not uri.endswith("/" + SKILL_FILE):
        return f"its uri does not name a {SKILL_FILE}"
    if not isinstance(frontmatter, dict):
        return "no frontmatter object"
    for field in ("name", "description"):
        if not isinstance(frontmatter.get(field), str) or not frontmatter[field]:
            return f"frontmatter has no {field}"
    segment = uri[: -len(SKILL_FILE) - 1].rsplit("/", 1)[-1]
    if segment != frontmatter["name"]:
        return f"its uri's last segment {segment!r} is not its name {frontmatter['name']!r}"
    resources = entry.get("resources")
    if resources != DYNAMIC and not isinstance(resources, list):
        return f'resources is neither an array nor "{DYNAMIC}"'
    return None


# -- loading ----------------------------------------------------------------------------------

#: Reads one resource (the client's ``resources/read``).
Reader = Callable[[str], Awaitable[ReadResourceResult]]


async def load_skill(server: str, skill: Skill, read: Reader) -> LoadedSkill:
    """Read ``SKILL.md`` and verify it (manifest entry, size, digest, frontmatter); only
    that file is read: supporting files wait until they are asked for."""
    entry = manifest_entry(server, skill, skill.uri)  # before the read: no manifest, no read
    result = await read(skill.uri)
    data = contents_bytes(server, skill, skill.uri, result)
    if entry is not None:
        verify_file(server, skill, entry, data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        detail = f"{SKILL_FILE} is not UTF-8 text"
        raise SkillRefused(server, skill.name, SkillCheck.CONTENTS, skill.uri, detail) from None
    verify_frontmatter(server, skill, text)
    return LoadedSkill(skill, text)


async def read_skill_file(server: str, skill: Skill, path: str, read: Reader) -> VerifiedFile:
    """One file of ``skill`` (a path inside it, or its uri), read and verified against the
    manifest; a dynamic skill's file must lie inside the skill's directory."""
    uri = skill.file_uri(path)
    if uri == skill.uri:
        loaded = await load_skill(server, skill, read)
        return VerifiedFile(uri, loaded.text.encode(), "text/markdown", skill.files is not None)
    if not uri.startswith(skill.directory + "/") or "/../" in uri or uri.endswith("/.."):
        detail = "not inside the skill's directory"
        raise SkillRefused(server, skill.name, SkillCheck.MANIFEST, uri, detail)
    entry = manifest_entry(server, skill, uri)
    result = await read(uri)
    data = contents_bytes(server, skill, uri, result)
    if entry is not None:
        verify_file(server, skill, entry, data)
    mime = next(
        (c.get("mimeType") for c in result.get("contents", []) if c.get("uri") == uri), None
    )
    return VerifiedFile(uri, data, mime if isinstance(mime, str) else None, entry is not None)


# -- verification ---------------------------------------------------------------------------


def manifest_entry(server: str, skill: Skill, uri: str) -> SkillFile | None:
    """The manifest's entry for ``uri`` (None for a dynamic skill); `SkillRefused`
    (MANIFEST) when the manifest lacks it or gives it no well-formed digest and size."""
    if skill.files is None:
        return None
    found = [f for f in skill.files if f.uri == uri]
    if not found:
        raise SkillRefused(server, skill.name, SkillCheck.MANIFEST, uri, "not in the manifest")
    entry = found[0]
    if not isinstance(entry.digest, str) or not _DIGEST.fullmatch(entry.digest):
        detail = f"digest {entry.digest!r:.80} is not sha256:<64 lowercase hex>"
        raise SkillRefused(server, skill.name, SkillCheck.MANIFEST, uri, detail)
    size = entry.size
    if isinstance(size, bool) or not isinstance(size, int | float) or not _whole(size):
        detail = f"size {size!r:.40} is not a whole number of bytes"
        raise SkillRefused(server, skill.name, SkillCheck.MANIFEST, uri, detail)
    return entry


def _whole(size: float) -> bool:
    return math.isfinite(size) and size >= 0 and size == int(size)


def contents_bytes(server: str, skill: Skill, uri: str, result: ReadResourceResult) -> bytes:
    """The raw bytes a read gave for ``uri``: text as UTF-8, a blob decoded; `SkillRefused`
    (CONTENTS) when there are none."""
    contents = result.get("contents", [])
    chosen = [c for c in contents if c.get("uri") == uri]
    if not chosen and len(contents) == 1:
        chosen = contents  # one item under another uri (a server's alias): still the file
    if not chosen:
        detail = f"the read returned {len(contents)} contents, none for this uri"
        raise SkillRefused(server, skill.name, SkillCheck.CONTENTS, uri, detail)
    item = chosen[0]
    text = item.get("text")
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    blob = item.get("blob")
    try:
        return base64.b64decode(blob if isinstance(blob, str) else "", validate=True)
    except (binascii.Error, ValueError):
        detail = "its blob is not valid base64"
        raise SkillRefused(server, skill.name, SkillCheck.CONTENTS, uri, detail) from None


def verify_file(server: str, skill: Skill, entry: SkillFile, data: bytes) -> None:
    """`SkillRefused` unless ``data`` has the entry's size (checked first) and digest."""
    if len(data) != entry.size:
        detail = f"read {len(data)} bytes, the manifest says {int(entry.size)}"
        raise SkillRefused(server, skill.name, SkillCheck.SIZE, entry.uri, detail)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != entry.digest:
        detail = f"the content hashes to {digest}, the manifest says {entry.digest}"
        raise SkillRefused(server, skill.name, SkillCheck.DIGEST, entry.uri, detail)


def verify_frontmatter(server: str, skill: Skill, text: str) -> None:
    """`SkillRefused` (FRONTMATTER) unless ``SKILL.md``'s frontmatter is the entry's, field
    by field."""

    def refuse(detail: str) -> SkillRefused:
        return SkillRefused(server, skill.name, SkillCheck.FRONTMATTER, skill.uri, detail)

    try:
        found = parse_frontmatter(text)
    except ValueError as exc:
        raise refuse(str(exc)) from None
    differences = [
        f"{key}: the file has {_short(found.get(key))}, "
        f"the listing {_short(skill.frontmatter.get(key))}"
        for key in dict.fromkeys([*found, *skill.frontmatter])
        if not same_json(found.get(key), skill.frontmatter.get(key))
    ]
    if differences:
        raise refuse("; ".join(differences))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: a missing value is null, ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return all(same_json(a.get(k), b.get(k)) for k in dict.fromkeys([*a, *b]))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, str | None) and isinstance(b, str | None):
        return a == b
    return False


__all__ = [
    "DYNAMIC",
    "SKILLS_EXTENSION",
    "SKILL_FILE",
    "LoadedSkill",
    "Reader",
    "Skill",
    "SkillCheck",
    "SkillFile",
    "SkillRefused",
    "VerifiedFile",
    "contents_bytes",
    "load_skill",
    "manifest_entry",
    "parse_frontmatter",
    "read_skill_file",
    "same_json",
    "valid_skill",
    "verify_file",
    "verify_frontmatter",
]
