"""Helpers of the MCP tests: a small upstream MCP server and the served tools and hooks."""
