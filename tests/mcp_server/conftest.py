"""The MCP tests' helpers: a copy of the bundled sample sessions to serve, and a run of a client
session of the SDK's own (`mcp.Client`) against a server, in-process or over a transport."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import pytest
from mcp import Client

REPO = Path(__file__).resolve().parents[2]
INVOICE = "--home-ana-projects-invoice-api--/2026-03-02T09-14-05-221Z_019cadd3-8025-7970-85d9-5954058b4714.jsonl"
# The name of INVOICE's branch to 019cadda (labelled "regression"): its own prompt, which tells it
# from the others (core/branch_names.py)
REGRESSION = "Run the tests and fix whatever fails in `invoice_api/totals.py`. Keep…"
PIPELINE = "--home-ana-projects-data-pipeline--/2026-02-16T08-02-41-507Z_019c6579-1ae3-78f7-9da1-494c73cf256d.jsonl"


@pytest.fixture
def samples(tmp_path) -> Path:
    """A copy of the sample sessions (the tests may write to theirs)."""
    return Path(shutil.copytree(REPO / "sample_sessions", tmp_path / "sessions"))


def session_with(server, talk):
    """`talk(client)` run in a client session with `server` (an MCPServer, a URL, a transport or
    stdio parameters); its result."""
    async def run():
        async with Client(server) as client:
            return await talk(client)

    # In a thread of its own: a worker that ran a browser test holds Playwright's event loop
    # running on its main thread for the rest of the session, where anyio.run refuses to start.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, run).result()


async def text_of(client, tool: str, **arguments) -> str:
    """A tool's answer, which must not be an error."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.content[0].text


async def tool_names(client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}
