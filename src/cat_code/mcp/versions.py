"""Who this client is, on the wire: its name and version in ``clientInfo`` and ``User-Agent``.

The library's own identity; a program built on `cat_code.mcp` may pass its own
``client_info`` to `McpClient` instead.
"""

from __future__ import annotations

#: The cat-code release (the package's ``__version__`` is this).
CLIENT_VERSION = "0.1.0"
CLIENT_NAME = "cat-code"
