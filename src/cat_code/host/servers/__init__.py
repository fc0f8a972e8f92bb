"""The MCP servers of a run: each `McpServer` with its state machine, the `McpPool` that
gathers them, how an entry becomes a connection (`connect`), starting early (`prestart`),
reloading, restarts, sign-in, the catalog of what they offer, and shutting down."""
