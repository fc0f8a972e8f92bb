"""Sessions: what one protocol era keeps for a connection, on the client's side.

Two eras sit side by side on the same era-neutral transports: `HandshakeSession`
(``handshake``: 2024-11-05 … 2025-11-25, ``initialize`` and, over HTTP, a session id) and
`StatelessSession` (``modern``: 2026-07-28, no handshake, every request self-describing).
`detect` picks one per server — a pinned ``protocolVersion``, a remembered verdict, or a
bounded ``server/discover`` probe. The client asks its session only to decorate the next
request (`ProtocolSession.prepare`), which tools it can call, and whether an error means the
session is gone; the retries a modern error asks for are the client's. The protocols
both sides agree on (`Link`, `ProtocolSession`, `Era`) live in ``base``, below the era modules.
"""

from __future__ import annotations

from cat_code.mcp.session.base import Era, Link, ProtocolSession
from cat_code.mcp.session.handshake import CLIENT_INFO, HandshakeSession
from cat_code.mcp.session.stateless import StatelessSession

__all__ = [
    "CLIENT_INFO",
    "Era",
    "HandshakeSession",
    "Link",
    "ProtocolSession",
    "StatelessSession",
]
