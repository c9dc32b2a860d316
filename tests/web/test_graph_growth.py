"""The drawn tree grows with its file: after appends, the chains, the per-chain figures
and every layout made from the grown drawn tree equal those of a fresh open of the same file,
whatever was appended (a tip that grows, a new branch, a chain cut at a new branch point, a
label set or cleared, a `leaf` marker and entries hung below it, a compaction, a new root)."""

from __future__ import annotations

import re
from html import unescape
from unittest.mock import patch

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import count_dot_runs, header, turn_under_way
from webapp.core.reader import parse_bytes
from webapp.core.session import Session
from webapp.core.tree import SessionTree
from webapp.web import graph
from webapp.web.graph import drawn
from webapp.web.app import create_app
from webapp.web.views import _tree_order, session_counts

KINDS = ["user", "assistant", "tool", "assistant", "tool", "branch", "label", "unlabel", "leaf", "compaction",
         "summary", "root"]
OP = st.tuples(st.sampled_from(KINDS), st.integers(0, 10**6))
MARKERS = {"label", "unlabel", "leaf"}


def make_lines(ops) -> list[bytes]:
    """One line per op: messages continue the latest line (markers too, so that entries hang
    below them), a branch starts below an earlier entry, labels and `leaf` markers name one."""
    lines: list[bytes] = []
    drawn: list[str] = []
    last = None
    for i, (kind, k) in enumerate(ops):
        pick = drawn[k % len(drawn)] if drawn else None
        e: dict = {"id": f"n{i}", "parentId": last, "timestamp": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000Z"}
        if kind in ("user", "assistant", "branch", "root"):
            e.update(type="message", message={"role": "assistant" if kind == "assistant" else "user", "content": f"m{i}"})
            if kind == "branch":
                e["parentId"] = pick
            elif kind == "root":
                e["parentId"] = None
        elif kind == "tool":
            e.update(type="message", message={"role": "toolResult", "toolCallId": "c", "toolName": "read",
                                              "content": [{"type": "text", "text": "r"}]})
        elif kind in ("label", "unlabel"):
            if pick is None:
                continue
            e.update(type="label", targetId=pick, label="L" if kind == "label" else "")
        elif kind == "leaf":
            if pick is None:
                continue
            e.update(type="leaf", targetId=pick, parentId=pick)
        elif kind == "compaction":
            e.update(type="compaction", summary="s", firstKeptEntryId=pick or "n0", tokensBefore=10)
        else:  # a branch summary, below an earlier entry
            e.update(type="branch_summary", fromId=last or "n0", summary="s", parentId=pick)
        lines.append(orjson.dumps(e))
        if kind not in MARKERS:
            drawn.append(e["id"])
        last = e["id"]
    return lines


def drawn_state(d, tree: SessionTree) -> dict:
    return {
        **{name: getattr(d, name) for name in (
            "roots", "chains", "marks", "count", "up", "forks", "users_at", "unfoldable", "maxline", "size", "leaves",
            "last", "label_at", "labelled_below")},
        "places": {e.id: d.place(e.id) for e in tree.entries},  # (None for markers: not drawn)
    }


def layout_state(layout: graph.GraphLayout, tree: SessionTree) -> dict:
    ids = [e.id for e in tree.entries]
    return {
        "nodes": [e.id for e in layout.nodes],
        "segments": [(s.ids, s.user_turns()) for s in layout.segments],
        "more": [(m.id, m.anchors, m.branches, m.entries) for m in layout.more],
        "edges": sorted(layout.edges),
        "capped": layout.capped,
        "dom_for": {x: layout.dom_for(x) for x in ids},
        "path": {x: layout.path_doms(x) for x in ids[-3:] if layout.drawn.place(x) is not None},
    }


def check_tree_order(tree: SessionTree) -> None:
    """The `b`/`B` order found from chains is the depth-first order of the drawn entries."""
    order, stack = [], list(reversed(graph.drawn_tree(tree).roots))
    while stack:
        x = stack.pop()
        order.append(x)
        stack.extend(reversed(tree.conversation_children(x)))
    found = _tree_order(tree)
    assert [found.position(x) for x in order] == list(range(len(order)))
    assert found.branch_points == [x for x in order if len(tree.conversation_children(x)) > 1]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(OP, min_size=1, max_size=50), cuts=st.lists(st.integers(0, 50), max_size=6),
       every=st.sampled_from([2, 3, drawn.PLACE_EVERY]))
def test_a_drawn_tree_grown_by_appends_equals_a_fresh_one(tmp_path_factory, ops, cuts, every):
    with patch.object(drawn, "PLACE_EVERY", every):  # (places kept often: chains here are short)
        check_growth(tmp_path_factory, ops, cuts)


def check_growth(tmp_path_factory, ops, cuts) -> None:
    lines = make_lines(ops)
    path = tmp_path_factory.mktemp("grow") / "s.jsonl"
    path.write_bytes(orjson.dumps(header()) + b"\n")
    session = Session.open(path)
    graph.drawn_tree(session.tree)
    done = 0
    for step in sorted({c % (len(lines) + 1) for c in cuts}) + [len(lines)]:
        with open(path, "ab") as f:
            f.write(b"".join(line + b"\n" for line in lines[done:step]))
        done = step
        tree = session.tree
        fresh = SessionTree(parse_bytes(path.read_bytes()))
        assert drawn_state(graph.drawn_tree(tree), tree) == drawn_state(drawn._drawn_anew(fresh), fresh)
        assert session_counts(tree) == {"branches": len(fresh.leaves()), "compactions": len(fresh.compactions())}
        check_tree_order(tree)
        for collapse, cap in (("on", 1000), ("on", 9), ("off", 1000), ("off", 7)):
            grown_layout = graph.build_layout(tree, collapse, cap=cap)
            assert layout_state(grown_layout, tree) == layout_state(graph.build_layout(fresh, collapse, cap=cap), fresh)


@pytest.mark.parametrize("kind", ["assistant", "branch", "label", "leaf", "compaction"])
def test_an_append_grows_the_drawn_tree_instead_of_making_it_again(tmp_path, monkeypatch, kind):
    ops = [("user", 0), ("assistant", 0), ("tool", 0), ("assistant", 0), ("user", 0), ("assistant", 0)]
    lines = make_lines(ops + [(kind, 2)])
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(x + b"\n" for x in [orjson.dumps(header()), *lines[:-1]]))
    session = Session.open(path)
    before = graph.drawn_tree(session.tree)
    with open(path, "ab") as f:
        f.write(lines[-1] + b"\n")

    def made_anew(tree):
        raise AssertionError("the drawn tree was made again instead of grown")

    monkeypatch.setattr(drawn, "_drawn_anew", made_anew)
    after = graph.drawn_tree(session.tree)
    assert after is not before and after.units is before.units  # counted folds carried over
    assert all(after.place(x) is not None for chain in before.chains.values() for x in chain)  # still drawn


NODE = re.compile(r'<g id="([^"]*)" class="node ([^"]*)">(.*?)</g>\n</g>', re.S)


def drawn_nodes(html: str) -> dict[str, tuple[str, list[str], str]]:
    """Every node of the page's drawing: id -> (classes, its lines of text, its link)."""
    svg = re.search(r"<svg.*?</svg>", html, re.S).group(0)
    return {
        m.group(1): (m.group(2), [unescape(t) for t in re.findall(r"<text [^>]*>([^<]*)</text>", m.group(3))],
                     unescape(re.search(r'xlink:href="([^"]*)"', m.group(3)).group(1)))
        for m in NODE.finditer(svg)
    }


def test_an_append_that_keeps_the_drawings_shape_is_drawn_without_dot(tmp_path, monkeypatch):
    """The agent writes one more step of a turn: the step before it folds into the turn's node
    and the new one takes its place as the active leaf. The SVG of the page is the one laid out
    before, with the new figures of the turn and the active-leaf mark on the new entry, and it
    says what a fresh layout says; a user message (a new node) runs `dot` again."""
    runs = count_dot_runs(monkeypatch)
    b, last = turn_under_way()
    root = tmp_path / "root"
    root.mkdir()
    path = b.write(root / "s.jsonl")
    client = create_app(root).test_client()
    before = drawn_nodes(client.get("/s/s.jsonl?collapse=on").get_data(as_text=True))
    assert len(runs) == 1 and "active-leaf" in before[f"e-{last}"][0]
    turn = next(x for x in before if x.startswith("seg-"))
    assert before[turn][1][0].startswith("⚙ assistant · 4 entries")
    assert len(before) == 3  # the user's message, the turn's work folded, the active leaf

    new = Session.open(path).append_message({"role": "assistant", "content": [{"type": "text", "text": "All green."}]})
    after = drawn_nodes(client.get("/s/s.jsonl?collapse=on").get_data(as_text=True))
    assert len(runs) == 1  # no `dot`
    leaf = f"e-{new['id']}"
    assert f"e-{last}" not in after and "active-leaf" in after[leaf][0]
    assert after[leaf][1] == ["All green.", "● active leaf"] and after[leaf][2].startswith(f"?node={new['id']}")
    assert after[turn][1][0].startswith("⚙ assistant · 5 entries") and after[turn][1] != before[turn][1]
    fresh = drawn_nodes(create_app(root).test_client().get("/s/s.jsonl?collapse=on").get_data(as_text=True))
    assert len(runs) == 2 and after == fresh  # what a fresh layout shows, node for node

    Session.open(path).append_message({"role": "user", "content": "thanks, now the exporter"})
    client.get("/s/s.jsonl?collapse=on")
    assert len(runs) == 3  # a new node: laid out again


def test_a_cached_layout_answers_after_its_tree_is_let_go():
    """Places are kept for some entries only and found from the tree for the others: a layout
    the store keeps (for a file version) still answers once the session that made it was let go."""
    import gc

    lines = make_lines([("user", 0), *[("assistant", 0)] * 40, ("branch", 3)])
    tree = SessionTree(parse_bytes(b"".join(x + b"\n" for x in [orjson.dumps(header()), *lines])))
    layout = graph.build_layout(tree, "off")
    ids = [e.id for e in tree.entries]
    expected = {x: layout.dom_for(x) for x in ids}, layout.path_doms(ids[20])
    del tree
    gc.collect()
    assert ({x: layout.dom_for(x) for x in ids}, layout.path_doms(ids[20])) == expected
    assert expected[0][ids[20]] == graph.dom_id(ids[20]) and len(expected[1]) == 21
