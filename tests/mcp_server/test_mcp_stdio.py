"""`session-tree mcp ROOT` as an agent starts it: a process spoken to on stdio by the SDK's own
client, which lists, searches, reads a branch and gets a context (the same text as `session-tree
context`), and finds the write tools only with --allow-writes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp import StdioServerParameters

from tests.cli_process import CLI_PROCESS
from tests.mcp_server.conftest import INVOICE, REPO, session_with, text_of, tool_names

LEAF = "019cadeb-7687-7768-9902-114ae4cc7698"


def stdio(*argv) -> StdioServerParameters:
    """`session-tree mcp ARGV...` as an agent's configuration starts it (the console command)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = Path(sys.executable).with_name("session-tree")
    return StdioServerParameters(command=str(command), args=["mcp", *map(str, argv)], env=env, cwd=str(REPO))


def test_an_agent_lists_searches_reads_and_gets_a_context_over_stdio(samples, tmp_path):
    async def talk(client):
        return (await tool_names(client), await text_of(client, "list_sessions"),
                await text_of(client, "search", query="rates.toml"),
                await text_of(client, "read_branch", session=INVOICE, leaf=LEAF),
                await text_of(client, "get_context", session=INVOICE, leaf=LEAF))

    names, listing, hits, branch, context = session_with(stdio(samples, "--db", tmp_path / "none.duckdb"), talk)
    assert "label_entry" not in names and "give_branch_verdict" not in names
    assert {"list_sessions", "search", "read_branch", "get_context", "compare_branches", "corpus_figures"} <= names
    assert "7 sessions" in listing and INVOICE in listing
    assert f"{INVOICE} [" in hits and "«rates.toml»" in hits
    assert branch.startswith(f"branch of {INVOICE} to {LEAF}: ")
    printed = CLI_PROCESS.run(["context", samples / INVOICE, "--leaf", LEAF])
    assert printed.returncode == 0
    assert context == printed.stdout.decode().rstrip("\n")  # what `session-tree context` prints


def test_write_tools_only_with_allow_writes_and_they_write(samples):
    async def talk(client):
        return await tool_names(client), await text_of(client, "label_entry", session=INVOICE, entry=LEAF,
                                                       label="every currency")

    names, said = session_with(stdio(samples, "--allow-writes"), talk)
    assert {"label_entry", "give_branch_verdict"} <= names
    assert said.startswith(f"label 'every currency' set on {LEAF}")
    assert b'"type":"label"' in (samples / INVOICE).read_bytes().splitlines()[-1]
