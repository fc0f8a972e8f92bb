"""What the MCP servers' offerings become for the model: the tool adapter (a remote tool as
a local `Tool`), tool filters, the output policy, and the resource, prompt and skill tools."""
