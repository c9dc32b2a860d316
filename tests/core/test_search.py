"""Full-text search: what is indexed, case, one hit per entry, growth, snippets."""

from __future__ import annotations

from tests.conftest import Builder
from webapp.core.search import FileIndex, SessionIndex, TextIndex, snippet
from webapp.core.session import Session
from webapp.core.storage import JsonlStorage


def test_every_text_of_an_entry_is_found_and_structure_is_not():
    b = Builder()
    u = b.user("Fix the Currency rounding")
    a = b.assistant("", calls=[{"id": "c1", "name": "bash", "arguments": {"command": "pip show bleach"}}])
    r = b.tool_result("c1", "WARNING: not found: zanzibar", name="bash")
    c = b.add("compaction", summary="We talked about VAT", firstKeptEntryId=u, tokensBefore=10)
    b.add("label", targetId=u, label="milestone-one")
    index = SessionIndex()
    index.update(Session.in_memory(b.data()).tree.entries)
    assert index.find("currency", 10) == ([u], 1)
    assert index.find("BLEACH", 10) == ([a], 1)  # a tool argument
    assert index.find("zanzibar", 10) == ([r], 1)  # a tool result
    assert index.find("vat", 10) == ([c], 1)  # a summary
    assert index.find("milestone", 10) == ([u], 1)  # a label finds what it labels
    assert index.find("assistant", 10) == ([], 0)  # a role is not text
    assert index.find(u, 10) == ([], 0)  # nor an id


def test_a_label_that_names_no_entry_is_a_hit_of_its_own_and_every_hit_opens():
    """A label whose target is no entry (dangling, or an object a fuzzed file held) was indexed
    under that target, and `session_hits` failed on it with a KeyError."""
    from webapp.core.search import session_hits

    b = Builder()
    b.user("hello")
    dangling = b.add("label", targetId="nowhere", label="orphan-label")
    odd = b.add("label", targetId={"x": []}, label="odd-label")
    tree = Session.in_memory(b.data()).tree
    index = SessionIndex()
    index.update(tree.entries)
    assert index.find("orphan", 10) == ([dangling], 1)
    assert index.find("odd", 10) == ([odd], 1)
    hits, total = session_hits(tree, index, "label", 10)
    assert total == 2 and [h.entry.id for h in hits] == [dangling, odd]


def test_one_hit_per_entry_a_limit_and_the_total():
    index = TextIndex()
    for i in range(5):
        index.add(i, "word word word")
    assert index.find("word", 2) == ([0, 1], 5)
    assert index.find("", 2) == ([], 0)


def test_the_session_index_grows_with_the_file_and_starts_over_when_it_is_rewritten(tmp_path):
    b = Builder()
    b.user("alpha")
    path = b.write(tmp_path / "s.jsonl")
    session = Session.open(path)
    index = SessionIndex()
    index.update(session.tree.entries)
    assert index.find("beta", 5)[1] == 0
    with open(path, "ab") as f:
        f.write(Builder().lines[0][:0] + b'{"type":"message","id":"x2","parentId":"e1","timestamp":"2026-01-02T03:04:07.000Z","message":{"role":"user","content":"beta"}}\n')
    index.update(session.tree.entries)
    assert index.find("beta", 5) == (["x2"], 1) and index.find("alpha", 5)[1] == 1
    path.write_bytes(Builder().data())
    index.update(Session.open(path).tree.entries)
    assert index.find("alpha", 5)[1] == 0


def test_the_file_index_reads_from_where_it_stopped(tmp_path):
    b = Builder()
    b.user("alpha")
    path = b.write(tmp_path / "s.jsonl")
    index = FileIndex()
    index.update(JsonlStorage(path))
    first = index.offset
    assert first == path.stat().st_size and index.matches("ALPHA") and not index.matches("gamma")
    with open(path, "ab") as f:
        f.write(b'{"type":"message","id":"x","parentId":null,"message":{"role":"user","content":"gamma"}}\n{"torn')
    index.update(JsonlStorage(path))
    assert index.matches("gamma") and index.offset < path.stat().st_size  # the torn line waits
    assert len(index.index) == 3  # the header, alpha, gamma: nothing read twice


def test_snippet_keeps_the_match_as_written():
    s = snippet("one two Three four", "three")
    assert (s.before, s.match, s.after) == ("one two ", "Three", " four")
    assert snippet("x" * 500 + " needle", "needle").before.startswith("…")
    assert snippet("abc", "zzz") is None
