"""The MCP error tree. Every failure below the adapter is one of these::

    McpClientError                 anything the MCP layers raise
    ├── ConfigError                a config file or entry the user must fix (names file/field)
    ├── TransportError             the connection itself failed
    │   ├── ConnectError           could not start or reach the server (command not found, refused)
    │   ├── TransportClosed        the connection is gone: we closed it, or the peer did
    │   │   └── ProcessExited      the stdio child exited (exit code and stderr tail in the text)
    │   ├── MessageTooLarge        one message above the transport's size cap (names the size)
    │   ├── HttpStatusError        an HTTP answer with an unexpected status or content type
    │   │   └── AuthenticationRequired  HTTP 401 (keeps WWW-Authenticate for sign-in)
    │   └── SessionExpired         the server forgot our session (told by the session layer)
    ├── RequestTimeout             no answer within the request timeout (a local error, no code)
    └── ProtocolError              the server broke the protocol (bad version, malformed answer)
        └── McpError               the server answered with a JSON-RPC error (code, message, data)

Lower-layer exceptions (OSError, httpx errors) are translated at the transport boundary
with ``raise ... from exc``; the adapter turns all of these into error tool results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class McpClientError(Exception):
    """Base of every error the MCP layers raise."""


class ConfigError(McpClientError):
    """A config file or server entry is wrong.

    ``message`` says what to fix (naming the field as written, e.g. ``'url' must ...``);
    ``file``, ``server`` and ``field`` say where, when known, so a caller can word it as it
    needs. ``str()`` is the whole of it: ``FILE: server 'NAME': MESSAGE``.
    """

    def __init__(
        self,
        message: str,
        *,
        file: Path | None = None,
        server: str | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.server = server
        self.field = field
        where = [] if file is None else [str(file)]
        if server is not None:
            where.append(f"server '{server}'")
        super().__init__(": ".join([*where, message]))


class TransportError(McpClientError):
    """The connection to a server failed."""


class ConnectError(TransportError):
    """The server could not be started or reached."""


class TransportClosed(TransportError):
    """The connection is closed: by us (``close()``) or by the peer."""


class ProcessExited(TransportClosed):
    """The stdio server process exited; the message names its exit code and stderr tail."""

    def __init__(self, message: str, returncode: int | None) -> None:
        super().__init__(message)
        self.returncode = returncode


class MessageTooLarge(TransportError):
    """A single message was larger than the transport takes; the text names both sizes."""


class HttpStatusError(TransportError):
    """An HTTP answer had a status or content type the protocol does not allow here.

    ``detail`` is the start of the body (a JSON-RPC error's message when it is one), so a
    layer above can tell answers apart without the transport knowing what they mean;
    ``rpc_error`` is the JSON-RPC error object the body held, if it held one (a 2026-07-28
    server answers its protocol errors with HTTP 400 and such a body).
    """

    def __init__(
        self,
        message: str,
        status_code: int,
        detail: str = "",
        rpc_error: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.detail = detail
        self.rpc_error = rpc_error


class AuthenticationRequired(HttpStatusError):
    """HTTP 401: the server wants credentials. ``www_authenticate`` is the challenge as sent."""

    def __init__(self, message: str, www_authenticate: str | None, detail: str = "") -> None:
        super().__init__(message, 401, detail)
        self.www_authenticate = www_authenticate


class SessionExpired(TransportError):
    """The server no longer knows our session (HTTP 404, or a 400 naming the session)."""


class RequestTimeout(McpClientError):
    """A request got no answer within its timeout. Locally generated: it has no JSON-RPC code."""


class ProtocolError(McpClientError):
    """The server's answer breaks the protocol."""


class McpError(ProtocolError):
    """The server answered a request with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data


def describe_error(exc: BaseException) -> str:
    """An exception as one line for status and messages: our own errors by their text
    (written for people), anything else with its type in front; its type when it is mute."""
    text = str(exc).strip()
    if isinstance(exc, McpClientError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
