"""cat-code: a terminal coding agent whose tool surface plugs in through MCP.

Floors, each importing only those below it (an import-linter contract in CI keeps them):
``mcp`` (the MCP protocol client library) and ``tools`` (the tool registry and built-ins),
then ``host`` (config, servers, the pool), ``agent`` (loop, providers, permissions),
``repl`` and ``cli``. Importing this package imports nothing heavy, so ``cat-code --help``
and ``cat-code mcp ...`` stay fast.
"""

from cat_code.mcp.versions import CLIENT_VERSION as __version__

__all__ = ["__version__"]
