"""`Tool` and `ToolResult`: the one shape every tool has, built-in or remote.

A tool has a name the model calls it by, a description, a JSON schema for its input, a
read-only flag (read-only tools run without asking the user), an ``owner`` naming where
it comes from (a `ToolOwner`: built in, or the MCP server it calls; shown as ``builtin``
or ``mcp:<server>``), and an async ``execute``. ``execute``
must not raise for failures the model should read; it returns an error `ToolResult`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cat_code.base.surrogates import without_surrogates

#: Called with (progress, total, message) while a tool runs, when the tool can report it.
ProgressCallback = Callable[[float, float | None, str | None], None]


@dataclass(frozen=True, slots=True)
class Media:
    """An image or audio clip a tool returned, base64-encoded, for models that take it."""

    kind: Literal["image", "audio"]
    mime_type: str
    #: Base64 (standard alphabet, checked by whoever made this object).
    data: str


@dataclass(slots=True)
class ToolResult:
    """What a tool hands back to the model: text content and an error flag.

    ``tool_call_id`` is left empty by tools; the agent loop fills it in.
    ``raw`` keeps the tool's native result (for MCP: the wire ``CallToolResult``) for
    callers that want it, such as ``cat-code mcp call --json``. ``media`` holds images
    and audio for providers that accept them; ``content`` still describes each one in a
    placeholder line, which is what every other provider and the transcript show.
    """

    content: str
    is_error: bool = False
    tool_call_id: str = ""
    raw: Any = None
    media: list[Media] = field(default_factory=list)

    def __post_init__(self) -> None:
        # The one place every tool's text passes: a file name that is not UTF-8 must not
        # break the request that carries it or the session file (`cat_code.base.surrogates`).
        self.content = without_surrogates(self.content)

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(content=message, is_error=True)


@dataclass(frozen=True, slots=True)
class FileChange:
    """What a call would do to a file, for the user to see before approving it:
    ``before`` is None for a new file."""

    path: Path
    shown: str
    before: str | None
    after: str


@dataclass(frozen=True, slots=True)
class ToolOwner:
    """Where a tool comes from: built in (``server`` None) or the MCP server named."""

    server: str | None = None

    def __str__(self) -> str:
        return "builtin" if self.server is None else f"mcp:{self.server}"


BUILTIN = ToolOwner()


class Tool(ABC):
    """A tool the agent can call."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False
    owner: ToolOwner = BUILTIN
    #: Sent on every model request even when tool search defers the other tools of its
    #: owner (an MCP server entry's ``"alwaysLoad": true``); built-in tools always are.
    always_load: bool = False

    def permission_subjects(self, arguments: dict[str, Any]) -> list[str]:
        """Names besides its own that the permission rules check for this call: a deny
        rule covering any of them refuses it (a resource tool names the server it reads)."""
        return []

    def file_paths(self, arguments: dict[str, Any]) -> list[Path]:
        """The files or folders this call reads or writes, absolute (file tools say; other
        tools touch none). A read-only call runs without asking only when each is inside
        the working directory or an added folder."""
        return []

    def refusal(self, arguments: dict[str, Any]) -> str | None:
        """Why this call can never run, known before anyone is asked (a NUL byte in a path,
        one of cat-code's own files), as the error the model reads; None: nothing is."""
        return None

    async def preview(self, arguments: dict[str, Any]) -> FileChange | None:
        """The change this call would make to a file, for the approval question (None:
        it changes no file, or the change cannot be worked out — the call will say why)."""
        return None

    @abstractmethod
    async def execute(
        self, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> ToolResult:
        """Run the tool. Failures the model should see come back as error results."""
