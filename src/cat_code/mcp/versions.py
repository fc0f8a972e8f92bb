"""Who this client is, on the wire, and which protocol versions it speaks.

The library's own identity (its name and version in ``clientInfo`` and ``User-Agent``); a
program built on `cat_code.mcp` may pass its own ``client_info`` to `McpClient` instead.
The one list of protocol versions: the stateless era's and the handshake era's, each
best first. Everything that names a version (sessions, era detection, discovery's probe
header, the config's ``protocolVersion`` check) reads it from here.
"""

from __future__ import annotations

#: The cat-code release (the package's ``__version__`` is this).
CLIENT_VERSION = "0.1.0"
CLIENT_NAME = "cat-code"

#: The stateless versions cat-code speaks (no handshake), best first.
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
#: The modern version a ``server/discover`` probe asks with.
MODERN_VERSION = MODERN_VERSIONS[0]
#: The handshake-era versions (``initialize``) cat-code speaks, best first.
HANDSHAKE_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
#: What ``initialize`` offers unless an entry pins another.
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[0]
#: Every version, the stateless era first: what an entry's ``protocolVersion`` may pin.
PROTOCOL_VERSIONS: tuple[str, ...] = MODERN_VERSIONS + HANDSHAKE_VERSIONS
