"""The configuration's types: one server entry (stdio or HTTP), a broken one, one waiting
for the user's approval, and the whole `McpConfig` a run goes by.

An entry keeps what the user wrote (`target` masks it for display) apart from what it
expands to (``${VAR}`` values are used, never shown); `Scope` says whose an entry is.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from cat_code.host.config.masking import (
    shown_command,
)

if TYPE_CHECKING:  # imported when an entry has an ``oauth`` block: stdio runs never load it
    from cat_code.mcp.auth.types import OAuthSettings

TRANSPORT_TYPES: tuple[str, ...] = ("stdio", "http", "sse")
DEFAULT_REQUEST_TIMEOUT_MS = 30_000
DEFAULT_STARTUP_TIMEOUT_MS = 30_000

_KNOWN_FIELDS = frozenset(
    {
        "type",
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "requestTimeoutMs",
        "startupTimeoutMs",
        "disabled",
        "oauth",
        "protocolVersion",
        "includeTools",
        "excludeTools",
        "toolTimeoutMs",
        "maxOutputTokens",
        "alwaysLoad",
        # Accepted for compatibility with other hosts' files; not used by cat-code.
        "description",
        "alwaysAllow",
        "autoApprove",
        "timeout",
    }
)


class Scope(enum.StrEnum):
    """Whose an entry is: the user's own files, or the project's ``./.mcp.json``."""

    USER = "user"
    PROJECT = "project"


@dataclass(frozen=True, slots=True, kw_only=True)
class _ServerEntry:
    """What every valid server entry has, whatever its transport; variables expanded."""

    name: str
    source: Path
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_MS / 1000
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_MS / 1000
    disabled: bool = False
    #: A protocol version the server is known to speak: no era probe (None: detect).
    protocol_version: str | None = None
    #: Names or globs of the server's own tool names to register (None: all of them).
    include_tools: tuple[str, ...] | None = None
    #: Names or globs of the server's own tool names never to register.
    exclude_tools: tuple[str, ...] = ()
    #: Time limit of a ``tools/call`` (None: ``request_timeout_s``).
    tool_timeout_s: float | None = None
    #: A tool result longer than this many tokens (≈ characters / 4) is saved to a file
    #: and shortened for the model (None: ``CAT_CODE_MAX_MCP_OUTPUT_TOKENS`` or the default).
    max_output_tokens: int | None = None
    #: The server's tool definitions are always sent to the model, even under tool search.
    always_load: bool = False
    #: The command line or URL as written, before ``${VAR}`` expansion: what status shows,
    #: so a secret passed through a variable never reaches a terminal or a log.
    display_target: str = ""
    #: USER for the user's own files; PROJECT for an approved ``./.mcp.json`` entry.
    scope: Scope = Scope.USER

    @property
    def target(self) -> str:
        """Where the server is, as the user wrote it (never header values or expanded secrets)."""
        return self.display_target or self._expanded_target()

    def _expanded_target(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, slots=True, kw_only=True)
class StdioServerConfig(_ServerEntry):
    """A server cat-code starts as a child process and talks to over stdin and stdout."""

    type: Literal["stdio"] = "stdio"
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    #: The program and the working directory as written, for errors (like ``display_target``).
    display_command: str = ""
    display_cwd: str = ""

    def _expanded_target(self) -> str:
        return shown_command([self.command, *self.args])


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpServerConfig(_ServerEntry):
    """A server at a URL: Streamable HTTP (``http``) or the legacy HTTP+SSE transport."""

    type: Literal["http", "sse"] = "http"
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    #: No ``type`` was given, so Streamable HTTP may fall back to legacy SSE (``http`` only).
    legacy_fallback: bool = False
    #: The entry's ``oauth`` block (None: none given; sign-in still works with defaults).
    oauth: OAuthSettings | None = None

    @property
    def has_own_authorization(self) -> bool:
        """The entry sends its own credentials — an ``Authorization`` header, or a
        ``user:password@`` in its URL (sent as Basic): cat-code never starts OAuth."""
        if any(key.lower() == "authorization" for key in self.headers):
            return True
        netloc = urlsplit(self.url).netloc
        return "@" in netloc

    def _expanded_target(self) -> str:
        return self.url


#: One valid server entry; the class says which transport, and carries only its fields.
ServerConfig = StdioServerConfig | HttpServerConfig


@dataclass(frozen=True, slots=True)
class BrokenServer:
    """An entry that could not be understood; it fails with ``error`` and nothing else."""

    name: str
    source: Path
    error: str
    type: str = "?"
    target: str = ""


def approval_hint(name: str, *, rejected: bool = False, in_repl: bool = False) -> str:
    """What a NEEDS_APPROVAL (or ``rejected``: REJECTED) server's status says to do; ``in_repl``
    names the slash command, not the shell's."""
    command = f"/mcp approve {name}" if in_repl else f"cat-code mcp approve {name}"
    return f"rejected; {command} runs it" if rejected else f"run: {command}"


@dataclass(frozen=True, slots=True)
class WaitingServer:
    """A project entry without the user's approval: never parsed, expanded or started.

    ``target`` is the command line or URL as written, masked; ``rejected``: the user said
    no (`cat-code mcp reject`), rather than not yet."""

    name: str
    source: Path
    type: str
    target: str
    rejected: bool = False
    #: The variables it would expand and the files it would read, by name (`entry_reach`).
    reach: str = ""

    @property
    def hint(self) -> str:
        """What status shows after the target."""
        return approval_hint(self.name, rejected=self.rejected)


@dataclass(slots=True)
class McpConfig:
    """Everything the config files said: good servers, broken ones, and file-level warnings."""

    servers: list[ServerConfig] = field(default_factory=list)
    broken: list[BrokenServer] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The files read (or looked for), lowest precedence first: where to add servers.
    files: list[Path] = field(default_factory=list)
    #: Every server name, good or broken, in the order the files give them.
    order: list[str] = field(default_factory=list)
    #: The files that exist but gave no servers because they could not be used (each has
    #: its warning): "none configured" would be untrue while one of them is broken.
    unreadable: list[Path] = field(default_factory=list)
    #: Project entries put aside until the user approves them, in file order.
    waiting: list[WaitingServer] = field(default_factory=list)
    #: Project entries refused for sharing a name with one of the user's (one line each).
    notices: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return (
            [s.name for s in self.servers]
            + [b.name for b in self.broken]
            + [w.name for w in self.waiting]
        )

    @property
    def needs_approval(self) -> list[WaitingServer]:
        """The project entries waiting for a yes or no (not the rejected ones)."""
        return [w for w in self.waiting if not w.rejected]
