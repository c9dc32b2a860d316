"""The skeleton: the tree's shape at a glance (root, branch points, leaves, compactions, labels,
the active leaf), each run between them one node saying what it holds; it opens to its turns,
then to its entries, and a wide tree groups side branches by fork point so that it fits."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

from tests.conftest import Builder
from webapp.core.entries import COMPACTION
from webapp.core.session import Session
from webapp.web import graph
from webapp.web.app import create_app
from webapp.web.graph.layout import SKELETON_PANE, _fits

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
RICH = next(SAMPLES.glob("*/*019cadd3-8025-7970-85d9-5954058b4714.jsonl"))
LARGE = next(SAMPLES.glob("*/*019c6579-1ae3-78f7-9da1-494c73cf256d.jsonl"))
LINEAR = next(SAMPLES.glob("*/*019a966d-4156-7b5f-a5c6-ef5f3ad16722.jsonl"))


def drawn_ids(layout) -> set[str]:
    return {e.id for e in layout.nodes}


def test_the_skeleton_draws_the_shape_and_folds_every_run_between():
    tree = Session.open(RICH).tree
    layout = graph.build_layout(tree, "skeleton")
    assert layout.level == "skeleton"
    drawn = drawn_ids(layout)
    leaves = [x for x in tree.leaves() if tree.by_id[x].type not in ("leaf", "label")]
    assert len(leaves) == 4 and set(leaves) <= drawn
    forks = {x for x in tree.by_id if len(tree.conversation_children(x)) > 1}
    assert forks and forks <= drawn
    assert {x for x, e in tree.by_id.items() if e.type == COMPACTION} <= drawn
    assert set(tree.labels) <= drawn
    # Everything else is folded: runs, each standing for the entries between two of those.
    assert layout.size() < len(graph.build_layout(tree, "auto").nodes) / 3
    runs = [s for s in layout.segments if s.opens]
    assert runs and all(s.key == s.ids[-1] for s in runs)
    assert sum(len(s.ids) for s in layout.segments) + len(layout.nodes) == graph.drawn_tree(tree).count


def test_a_run_opens_to_its_turns_then_to_its_entries():
    tree = Session.open(LARGE).tree
    skeleton = graph.build_layout(tree, "skeleton")
    run = max((s for s in skeleton.segments if s.opens), key=lambda s: s.turns)
    assert run.turns > 2
    users = [x for x in run.ids if tree.by_id[x].role == "user"]
    opened = graph.build_layout(tree, "skeleton", frozenset({run.key}))
    assert set(users) <= drawn_ids(opened)  # its turns: the user's words drawn
    work = next(s for s in opened.segments if s.ids[0] in run.ids and not s.opens)
    assert work.key == work.ids[0] and work.turns == 0  # the assistant's work of one turn, folded
    entries = graph.build_layout(tree, "skeleton", frozenset({run.key, work.key}))
    assert set(work.ids) <= drawn_ids(entries)
    # The selected entry deep inside a run is brought out the same way (opening_for).
    deep = work.ids[-1]
    assert skeleton.opening_for(deep) == {run.key}
    assert opened.opening_for(deep) == {work.key}


def test_sessions_with_branches_open_at_the_skeleton_unless_they_fit_by_turns(tmp_path):
    assert graph.default_level(Session.open(RICH).tree) == "skeleton"
    assert graph.default_level(Session.open(LARGE).tree) == "skeleton"
    assert graph.default_level(Session.open(LINEAR).tree) == "auto"  # one branch
    b = Builder()
    fork = b.user("which way?")
    b.assistant("this way", parent=fork)
    b.assistant("that way", parent=fork)
    small = b.write(tmp_path / "small.jsonl")
    assert graph.default_level(Session.open(small).tree) == "auto"  # drawn whole, it fits already


def test_a_wide_tree_groups_side_branches_by_fork_point_until_the_skeleton_fits(tmp_path):
    b = Builder()
    parent = None
    tips = []
    for i in range(5):  # a path of 5 turns, 12 other tries off each: 61 leaves
        parent = b.user(f"step {i}", parent=parent) if parent else b.user(f"step {i}")
        for j in range(12):
            side = b.assistant(f"try {j} of step {i}", parent=parent)
            tips.append(b.assistant(f"and then {j}", parent=b.user(f"go on {j}", parent=side)))
        parent = b.assistant(f"done {i}", parent=parent)
    tree = Session.open(b.write(tmp_path / "wide.jsonl")).tree
    layout = graph.build_layout(tree, "skeleton")
    assert _fits(layout) and layout.more
    assert layout.ranks()[1] * 200 <= SKELETON_PANE[0] or layout.ranks()[0] * 200 <= SKELETON_PANE[0]
    # Every leaf is drawn, or stands in the "more branches" node that holds it.
    drawn_doms = {graph.dom_id(e.id) for e in layout.nodes} | {m.id for m in layout.more}
    assert all(layout.dom_for(x) in drawn_doms for x in tips)


def test_the_page_opens_at_the_skeleton_and_a_run_link_opens_it(tmp_path):
    root = tmp_path / "sessions"
    (root / "p").mkdir(parents=True)
    rel = "p/" + RICH.name
    (root / rel).write_bytes(RICH.read_bytes())
    client = create_app(root).test_client()
    html = unescape(client.get(f"/s/{rel}").get_data(as_text=True))
    assert 'data-level="skeleton"' in html and 'name="collapse" value=""' in html
    link = re.search(r'<g id="(run-[^"]+)" class="node segment turns skeleton[^"]*">\n<g><a xlink:href="([^"]+)"', html)
    assert link, "a run of the skeleton links to its opening"
    href = link.group(2)
    opens = re.search(r"open=([^&]+)", href).group(1)
    tree = Session.open(root / rel).tree
    run = next(s for s in graph.build_layout(tree, "skeleton").segments if s.id == link.group(1))
    assert opens == run.key
    after = unescape(client.get(f"/s/{rel}/-/graph{href}", headers={"HX-Request": "true"}).get_data(as_text=True))
    assert f'name="expand" value="{opens}"' in after  # kept in the state, so in the URL
    users = [x for x in run.ids if tree.by_id[x].role == "user"]
    assert users and all(f'id="{graph.dom_id(x)}"' in after for x in users)
