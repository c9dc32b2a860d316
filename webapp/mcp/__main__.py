"""`python -m webapp.mcp ROOT [--allow-writes] [--db PATH]`: the MCP server on stdio, as
`session-tree mcp` runs it."""

import sys

from .stdio import main

sys.exit(main())
