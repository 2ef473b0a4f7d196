"""serve-mcp: a build served as MCP tools per identity, with proxied upstream servers."""
