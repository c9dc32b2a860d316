"""Real session files written by real tools (tests/fixtures, copied with their licence notes)."""

import os

import orjson
import pytest

from tests.conftest import OTHER_FIXTURES, PI_FIXTURES
from webapp.core.context import build_context
from webapp.core.reader import first_kept_id
from webapp.core.session import Session
from webapp.core.tokens import context_tokens
from webapp.core.tree import WARNING_KINDS


def line_count(data: bytes) -> int:
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def test_the_fixtures_are_there():
    names = {p.name for p in PI_FIXTURES}
    assert {"pi-mono_before-compaction.jsonl", "pi-mono_large-session.jsonl", "agent-sessions_pi_small.jsonl"} <= names
    assert len(OTHER_FIXTURES) == 6


@pytest.mark.parametrize("path", PI_FIXTURES, ids=lambda p: p.name)
def test_pi_sessions_open_cleanly_with_every_line_accounted_for(path):
    data = path.read_bytes()
    s = Session.open(path)
    log, tree = s.log, s.tree
    assert log.header is not None and log.header["type"] == "session"
    assert tree.bad_lines == []
    assert 1 + len(tree.entries) + len(tree.bad_lines) + log.blank_lines == line_count(data)
    assert [p for p in tree.problems if p.kind not in WARNING_KINDS] == []  # warnings: test_request.py
    assert tree.orphans == [] and tree.cycle_cuts == []
    assert tree.active_leaf == tree.entries[-1].id


@pytest.mark.parametrize("path", PI_FIXTURES, ids=lambda p: p.name)
def test_pi_context_starts_with_the_latest_compaction_summary(path):
    tree = Session.open(path).tree
    ctx = build_context(tree, tree.active_leaf)
    assert ctx.problems == []
    compactions = tree.compactions()
    if not compactions:
        assert ctx.compaction is None
        assert ctx.messages[0]["role"] == "user"
        assert len(ctx.messages) > 100
        return
    latest = compactions[-1]
    first = ctx.messages[0]
    assert ctx.compaction is latest
    assert first["role"] == "user" and first["entryId"] == latest.id
    assert latest.get("summary") in first["content"]
    # Then the path from the kept entry: nothing from before it.
    kept = tree.entry(first_kept_id(latest))
    first_kept_msg = next(m for m in ctx.messages[1:] if m["entryId"] != latest.id)
    path_ids = [e.id for e in ctx.path]
    assert path_ids.index(first_kept_msg["entryId"]) >= path_ids.index(kept.id)
    before = set(path_ids[: path_ids.index(kept.id)])
    assert before.isdisjoint(ctx.entry_ids)


def test_v1_first_kept_entry_index_resolves_to_the_entry_on_that_line():
    path = next(p for p in PI_FIXTURES if p.name == "pi-mono_before-compaction.jsonl")
    lines = path.read_bytes().split(b"\n")
    s = Session.open(path)
    tree = s.tree
    assert s.log.version == 1
    compactions = tree.compactions()
    assert len(compactions) == 2
    for c in compactions:
        index = c.source["firstKeptEntryIndex"]  # as written; migrated to an id when read
        assert "firstKeptEntryIndex" not in c.raw
        kept = tree.entry(first_kept_id(c))
        assert kept.line == index + 1  # the header is index 0 and line 1
        assert kept.source == orjson.loads(lines[index])
        assert kept.raw == {**kept.source, "id": kept.id, "parentId": kept.parent_id}
        assert tree.is_ancestor(kept.id, c.id)
        assert kept.role == "user"
    ctx = build_context(tree, tree.active_leaf)
    latest = compactions[-1]
    assert ctx.messages[1]["entryId"] == tree.entry(first_kept_id(latest)).id
    assert ctx.settings.model is not None and ctx.settings.thinking_level is not None
    assert context_tokens(ctx).context > 0


def test_v1_ids_are_stable_across_opens():
    path = next(p for p in PI_FIXTURES if p.name == "pi-mono_large-session.jsonl")
    a, b = Session.open(path).tree, Session.open(path).tree
    assert [(e.id, e.parent_id) for e in a.entries] == [(e.id, e.parent_id) for e in b.entries]
    assert len(a.roots) == 1


@pytest.mark.parametrize("path", OTHER_FIXTURES, ids=lambda p: p.name)
def test_other_formats_open_with_a_normalised_header_and_lose_nothing(path):
    data = path.read_bytes()
    s = Session.open(path)
    log, tree = s.log, s.tree
    assert log.format == path.parent.name and log.version is None
    assert log.header["type"] == "session" and log.header["source"] == path.parent.name
    assert "no-header" not in [p.kind for p in tree.problems]
    # Every line is the source of an entry (several lines for a merged one), a metadata line,
    # or a bad line: nothing read is dropped.
    sources = {id(o): o for e in tree.entries
               for o in (e.source if isinstance(e.source, list) else [e.source if e.source is not None else e.raw])}
    assert len(sources) + len(log.metadata) + len(tree.bad_lines) + log.blank_lines == line_count(data)
    assert len(tree.entries) > 0
    build_context(tree, tree.active_leaf)
    tree.all_problems()


@pytest.mark.parametrize("path", PI_FIXTURES + OTHER_FIXTURES, ids=lambda p: p.name)
def test_opening_a_fixture_never_writes_to_it(path):
    st = os.stat(path)
    data = path.read_bytes()
    tree = Session.open(path).tree
    build_context(tree, tree.active_leaf)
    assert path.read_bytes() == data
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns
