"""The MCP plugin: config → transports → client → adapter → pool, strictly downward.

Only `cat_code.host.pool.McpPool` and the config loader are needed by the host; the
transports are imported lazily by the pool so ``import cat_code.mcp`` stays cheap.
"""
