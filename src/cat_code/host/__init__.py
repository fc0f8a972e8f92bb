"""The host runtime between the MCP library and the agent."""
