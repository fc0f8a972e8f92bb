"""Transports: JSON-RPC envelopes over stdio, Streamable HTTP and legacy HTTP+SSE."""
