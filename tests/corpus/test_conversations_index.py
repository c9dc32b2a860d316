"""The corpus tables know each file's conversation across files (SPEC §5e): the link columns each
row holds, and the conversation and parent decided over the whole table after each build, kept
right as files come and go; the index page's listing pages over conversations."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import FIXTURES
from webapp.corpus.db import Index
from webapp.corpus.listing import list_sessions
from webapp.corpus.parquet import parquet_connection, session_files, write_embedded
from webapp.corpus.text import text_path

CONV = FIXTURES / "conversations"


def home_of_conversations(home: Path) -> Path:
    """The fixtures laid out in each agent's own folder under a home folder."""
    shutil.copytree(CONV / "pi", home / ".pi" / "agent" / "sessions")
    shutil.copytree(CONV / "claude-code", home / ".claude" / "projects")
    shutil.copytree(CONV / "codex", home / ".codex" / "sessions")
    return home


def joined(cur) -> dict[str, tuple]:
    """file name -> (its conversation's first file, its parent file, link kind), by file names."""
    name = lambda f: f.rsplit("/", 1)[-1] if f else None  # noqa: E731
    return {name(f): (name(c), name(p), k) for f, c, p, k in
            cur.execute("SELECT file, conversation, parent_file, link_kind FROM sessions").fetchall()}


def test_the_sessions_table_says_each_files_conversation_and_parent(tmp_path):
    home = home_of_conversations(tmp_path / "home")
    index = Index(tmp_path / "c.duckdb")
    index.build([home])
    got = joined(index.cursor())
    first_pi = "2026-05-01T10-00-00-000Z_0196a1c0-0000-7000-8000-00000000000a.jsonl"
    fork_pi = "2026-05-01T10-04-00-000Z_0196a1c4-0000-7000-8000-00000000000c.jsonl"
    assert got[fork_pi] == (first_pi, first_pi, "fork")
    assert got["2026-05-01T10-08-00-000Z_0196a1c8-0000-7000-8000-00000000000e.jsonl"] == (first_pi, fork_pi, "fork")
    a = "aaaaaaaa-0000-4000-8000-000000000001.jsonl"
    assert {k: got[k] for k in got if k[:8] in ("bbbbbbbb", "55555555", "eeeeeeee")} == {
        "bbbbbbbb-0000-4000-8000-000000000002.jsonl": (a, a, "fork"),
        "55555555-0000-4000-8000-000000000003.jsonl": (a, a, "fork"),
        "eeeeeeee-0000-4000-8000-000000000004.jsonl": (a, a, "resume")}
    p = "rollout-2026-05-06T10-00-00-0196b000-0000-7000-8000-000000000001.jsonl"
    assert got["rollout-2026-05-07T10-30-00-0196b800-0000-7000-8000-000000000003.jsonl"] == (p, p, "fork")
    assert got["rollout-2026-05-06T10-01-00-0196bc00-0000-7000-8000-000000000004.jsonl"] == (p, p, "subagent")
    lost = "rollout-2026-05-06T10-40-00-0196bf00-0000-7000-8000-000000000005.jsonl"
    assert got[lost] == (lost, None, "fork")  # its source is not here: alone, its link kept

    # A parent that goes: its children are a conversation of their own; it comes back: joined again.
    parent = next(home.rglob(p))
    kept = parent.read_bytes()
    parent.unlink()
    index.build([home])
    after = joined(index.cursor())
    assert after["rollout-2026-05-07T10-30-00-0196b800-0000-7000-8000-000000000003.jsonl"][1] is None
    parent.write_bytes(kept)
    index.build([home])
    assert joined(index.cursor()) == got


def test_the_index_listing_pages_over_conversations_each_with_its_other_files(tmp_path):
    home = home_of_conversations(tmp_path / "home")
    index = Index(tmp_path / "c.duckdb")
    index.build([home])
    listing = list_sessions(index.cursor(), text_path(index.path), home, per_page=3)
    assert (listing.conversations, listing.total, listing.pages) == (7, 15, 3)
    every = [row for page in range(1, 4) for row in
             list_sessions(index.cursor(), text_path(index.path), home, page=page, per_page=3).rows]
    sizes = sorted(1 + len(members) for _, _, _, members, _ in every)
    assert sizes == [1, 1, 1, 1, 3, 4, 4]
    missing = sorted(m.split(" ")[0] for _, _, _, _, m in every if m)
    assert missing == ["forkedFrom", "forked_from_id", "parentSession"]
    one = list_sessions(index.cursor(), text_path(index.path), home, query="pandas")  # a fork's own words
    assert [(r[1].title, len(r[3])) for r in one.rows] == [("Add a CSV export to the report command", 2)]


def test_parquet_tables_read_back_with_their_conversations(tmp_path):
    home = home_of_conversations(tmp_path / "home")
    out = tmp_path / "parquet"
    write_embedded(session_files([home]), out)
    cur = parquet_connection(out)
    index = Index(tmp_path / "c.duckdb")
    index.build([home])
    assert joined(cur) == joined(index.cursor())
