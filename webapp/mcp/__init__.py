"""session-tree as an MCP server: the tools (`server`), their answers (`reading`, `corpus`), what
they read (`sources`), and the stdio entry (`stdio`); the HTTP endpoint is the web app's
(`web/mcp_http.py`)."""
