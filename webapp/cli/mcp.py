"""`session-tree mcp [ROOT] [--allow-writes]`: the MCP server on stdio, as a coding agent starts it
(the server itself is `webapp/mcp`; over HTTP, `serve` answers it at /mcp behind its token)."""

from __future__ import annotations

from ..mcp.stdio import DESCRIPTION, add_arguments, run


def register(command) -> None:
    sp = command("mcp", run, file=False, description=DESCRIPTION)
    add_arguments(sp)
    sp.set_defaults(protocol_on_stdout=True)  # (JSON-RPC, written by the SDK to stdout's bytes)
