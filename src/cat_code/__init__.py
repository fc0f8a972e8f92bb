"""cat-code: a terminal coding agent whose tool surface plugs in through MCP.

The package is layered strictly downward: ``mcp.config`` → transports (``mcp.stdio``,
``mcp.http``, ``mcp.sse``, on ``mcp.transport``'s contract) → ``mcp.session`` →
``mcp.client`` → ``mcp.adapter`` → ``mcp.pool`` → host (``tools``, ``agent``, ``repl``,
``cli``). Importing this package imports nothing heavy, so
``cat-code --help`` and ``cat-code mcp ...`` stay fast.
"""

__version__ = "0.1.0"
