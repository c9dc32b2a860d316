"""The MCP endpoint of `session-tree serve` (streamable HTTP at /mcp), asked by the SDK's own
client: with the server's token it lists, searches, reads a branch and a context; without the
token it is refused; a read-only server offers no write tool."""

from __future__ import annotations

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.mcp_server.conftest import INVOICE, REGRESSION, session_with, text_of, tool_names
from tests.serve_process import start_serve

LEAF = "019cadda-3858-7e6e-899b-3953f3074e43"


@pytest.fixture
def served(samples, tmp_path):
    def start(*flags):
        server = start_serve([samples, "--db", tmp_path / "corpus.duckdb", *flags])
        started.append(server)
        return server

    started = []
    yield start
    for server in started:
        server.stop()


def with_token(server, token: str | None, statuses: list | None = None):
    """A transport to the server's /mcp that sends `token` (none: no Authorization header); the
    HTTP status of each answer is added to `statuses`."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = create_mcp_http_client(headers=headers)

    async def seen(response) -> None:
        if statuses is not None:
            statuses.append(response.status_code)

    http.event_hooks["response"].append(seen)
    return streamable_http_client(server.url + "mcp", http_client=http)


def test_an_agent_with_the_token_lists_searches_reads_and_gets_a_context(served):
    server = served()

    async def talk(client):
        return (await tool_names(client), await text_of(client, "list_sessions"),
                await text_of(client, "search", query="rounding"),
                await text_of(client, "read_branch", session=INVOICE, leaf=LEAF),
                await text_of(client, "get_context", session=INVOICE, leaf=LEAF),
                await text_of(client, "label_entry", session=INVOICE, entry=LEAF, label="one line"))

    names, listing, hits, branch, context, labelled = session_with(with_token(server, server.token), talk)
    assert {"list_sessions", "search", "read_branch", "get_context", "label_entry", "give_branch_verdict"} <= names
    assert "7 sessions" in listing and INVOICE in listing
    assert "«rounding»" in hits and f"{INVOICE} [" in hits
    assert branch.startswith(f"branch of {INVOICE} to {LEAF}: 12 entries ({REGRESSION})")
    assert context.startswith(f"leaf {LEAF}  model ")
    assert labelled.startswith(f"label 'one line' set on {LEAF}")
    page = httpx.get(server.url + "s/" + INVOICE, headers=server.headers())
    assert page.status_code == 200 and "one line" in page.text  # the web app sees the label written


def test_refused_without_the_token_or_with_another(served):
    server = served()
    for token in (None, "not-the-servers-token-at-all"):
        statuses: list[int] = []
        with pytest.raises(Exception, match="unhandled errors"):
            session_with(with_token(server, token, statuses), tool_names)
        assert statuses and set(statuses) == {401}
    answer = httpx.post(server.url + "mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                        headers={"Accept": "application/json, text/event-stream"})
    said = answer.json()["error"]  # what fits an MCP client, not the CLI's "commands" refusal
    assert answer.status_code == 401 and "send it in an Authorization header" in said
    assert "MCP endpoint" in said and "commands only" not in said


def test_a_read_only_server_offers_no_write_tool(served):
    server = served("--read-only")

    async def talk(client):
        return await tool_names(client), await text_of(client, "get_context", session=INVOICE, leaf=LEAF)

    names, context = session_with(with_token(server, server.token), talk)
    assert "label_entry" not in names and "give_branch_verdict" not in names
    assert context.startswith(f"leaf {LEAF}  model ")
