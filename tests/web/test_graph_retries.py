"""A session retried often (a fork point with a one-turn retry before every prompt of its active
path): past FOLD_PAST fork points along one path the skeleton folds them (and so does the
drawing by turns, when its path is over the cap), but for the most relevant ones, into one node per run of them ("⋯ 53 retries along turns 2–54 ⋯"); a click opens
some of its fork points and folds the parts between again, the URL keeps what is open, and
every leaf is always drawn or in the node that holds it."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import unquote

import pytest

import samplegen
from tests.conftest import Builder
from webapp.core.session import Session
from webapp.web import graph
from webapp.web.app import create_app
from webapp.web.graph.layout import SKELETON_DRAWN
from webapp.web.graph.retries import FOLD_PAST, KEPT_FORKS, OPEN_FORKS

TURNS = 60


@pytest.fixture
def retried(tmp_path):
    header, entries = samplegen.retry_session(TURNS)
    path = tmp_path / "sessions" / "p" / "retried.jsonl"
    path.parent.mkdir(parents=True)
    samplegen.write_jsonl(path, header, entries)
    return path


def drawn_doms(layout) -> set[str]:
    return ({graph.dom_id(e.id) for e in layout.nodes} | {s.id for s in layout.segments}
            | {m.id for m in layout.more} | {r.id for r in layout.retries})


def leaves(tree) -> list[str]:
    return [x for x in tree.leaves() if tree.by_id[x].type not in ("leaf", "label")]


def test_fork_points_along_one_path_fold_into_one_node_and_every_leaf_stays_reachable(retried):
    tree = Session.open(retried).tree
    assert len(leaves(tree)) == TURNS + 1
    layout = graph.build_layout(tree, "skeleton")
    assert layout.size() <= SKELETON_DRAWN
    (fold,) = layout.retries
    # The newest fork points stay drawn (the active leaf's among them), the others fold.
    assert len(fold.forks) == TURNS - 1 - KEPT_FORKS  # (the root, a fork point too, stays drawn)
    assert fold.branches == len(fold.forks) and fold.turns == (2, 1 + len(fold.forks))
    assert all(graph.dom_id(f) not in drawn_doms(layout) for f in fold.forks)
    assert all(layout.dom_for(x) in drawn_doms(layout) for x in leaves(tree))
    assert {layout.dom_for(x) for x in leaves(tree)} >= {fold.id}
    assert fold.id in layout.path_doms(tree.conversation_leaf(tree.active_leaf))
    # It is drawn once, on the path: an edge in, an edge out.
    assert [a for a, b in layout.edges if b == fold.id] and [b for a, b in layout.edges if a == fold.id]
    specs = graph.drawing_specs(tree, layout, lambda x: "?node=" + x)[0]
    assert specs[fold.id]["label"] == f"⋯ {fold.branches} retries along turns 2–{fold.turns[1]} ⋯"
    assert f"open={'%2C'.join(fold.opens())}" in specs[fold.id]["URL"]


def test_opening_a_fold_draws_some_of_its_fork_points_and_folds_the_rest_again(retried):
    tree = Session.open(retried).tree
    (fold,) = graph.build_layout(tree, "skeleton").retries
    opened = graph.build_layout(tree, "skeleton", frozenset(fold.opens()))
    assert len(fold.opens()) == OPEN_FORKS
    assert {graph.dom_id(f) for f in fold.opens()} <= drawn_doms(opened)
    assert len(opened.retries) > 1 and all(len(r.forks) < len(fold.forks) for r in opened.retries)
    assert opened.size() <= SKELETON_DRAWN
    assert all(opened.dom_for(x) in drawn_doms(opened) for x in leaves(tree))
    # Any leaf is a few clicks away: open the node that holds it (a fold, or a group of side
    # branches) until it is drawn.
    target = leaves(tree)[len(fold.forks) // 3]
    expand, layout = frozenset(), graph.build_layout(tree, "skeleton")
    for _ in range(6):
        holder = layout.dom_for(target)
        opens = {r.id: r.opens() for r in layout.retries} | {m.id: m.anchors for m in layout.more}
        if holder not in opens:
            break
        expand |= set(opens[holder])
        layout = graph.build_layout(tree, "skeleton", expand)
    assert graph.dom_id(target) in {graph.dom_id(e.id) for e in layout.nodes}


def test_a_selected_or_labelled_retry_is_drawn(retried):
    tree = Session.open(retried).tree
    layout = graph.build_layout(tree, "skeleton")
    (fold,) = layout.retries
    side = next(k for k in tree.conversation_children(fold.forks[10]) if k not in tree.path(tree.active_leaf))
    assert layout.dom_for(side) == fold.id
    assert layout.opening_for(side) == {side}  # what selecting it opens (sessions.layout_showing)
    shown = graph.build_layout(tree, "skeleton", frozenset({side}))
    assert graph.dom_id(side) in drawn_doms(shown) and fold.forks[10] in {e.id for e in shown.nodes}
    # A label on a retry keeps its fork point drawn.
    last = tree.entries[-1].id
    with open(retried, "ab") as f:
        f.write(b'{"type":"label","id":"lab1","parentId":"%s","timestamp":"2027-03-01T00:00:00.000Z",'
                b'"targetId":"%s","label":"the good one"}\n' % (last.encode(), side.encode()))
    labelled = graph.build_layout(Session.open(retried).tree, "skeleton")
    assert fold.forks[10] in {e.id for e in labelled.nodes} and len(labelled.retries) == 2
    assert labelled.dom_for(side) in drawn_doms(labelled) and labelled.dom_for(side) not in {r.id for r in labelled.retries}


def test_a_few_fork_points_along_a_path_stay_drawn(tmp_path):
    b = Builder()
    b.user("start")
    tip = b.assistant("ok")
    for i in range(FOLD_PAST):  # as many fork points along one path as a drawing holds
        b.assistant(f"no {i}", parent=b.user(f"try {i}", parent=tip))
        b.user(f"again {i}", parent=tip)
        tip = b.assistant(f"yes {i}")
    tree = Session.open(b.write(tmp_path / "few.jsonl")).tree
    layout = graph.build_layout(tree, "skeleton")
    assert not layout.retries
    forks = {x for x in tree.by_id if len(tree.conversation_children(x)) > 1}
    assert len(forks) == FOLD_PAST and forks <= {e.id for e in layout.nodes}


def test_the_page_draws_the_fold_and_its_link_opens_it_in_the_url(retried):
    root = retried.parents[1]
    client = create_app(root).test_client()
    html = unescape(client.get("/s/p/retried.jsonl").get_data(as_text=True))
    assert 'data-level="skeleton"' in html
    node = re.search(r'<g id="(retries-[^"]+)" class="node segment retries[^"]*">\n<g><a xlink:href="([^"]+)"', html)
    assert node, "the fold of fork points is drawn, with its link"
    assert re.search(r"⋯ \d+ retries along turns 2–\d+ ⋯", html)
    href = node.group(2)
    opens = unquote(re.search(r"open=([^&]+)", href).group(1)).split(",")
    after = unescape(client.get(f"/s/p/retried.jsonl/-/graph{href}", headers={"HX-Request": "true"}).get_data(as_text=True))
    assert f'name="expand" value="{",".join(sorted(opens))}"' in after  # kept in the state, so in the URL
    assert all(f'id="{graph.dom_id(x)}"' in after for x in opens)
    assert after.count('class="node segment retries') > 1


def test_by_turns_the_fork_points_along_one_path_fold_too_and_the_drawing_stays_bounded(retried):
    # By turns a drawing holds MAX_DRAWN nodes; 60 fork points fit that, so a smaller cap makes
    # them as many as the 10,000 of bench/skeleton.py's session are for the real one.
    tree = Session.open(retried).tree
    # At 150 the path folded by runs fits, but not with a "more branches" node at each fork point.
    assert graph.build_layout(tree, "auto", cap=150).size() <= 150
    cap = 100
    layout = graph.build_layout(tree, "auto", cap=cap)
    assert layout.level != "skeleton" and layout.size() <= cap
    (fold,) = layout.retries
    assert len(fold.forks) == TURNS - 1 - KEPT_FORKS
    assert all(layout.dom_for(x) in drawn_doms(layout) for x in leaves(tree))
    assert fold.id in layout.path_doms(tree.conversation_leaf(tree.active_leaf))
    # Opening it draws some of its fork points, and the drawing stays under the cap.
    opened = graph.build_layout(tree, "auto", frozenset(fold.opens()), cap=cap)
    assert {graph.dom_id(f) for f in fold.opens()} <= drawn_doms(opened) and opened.size() <= cap
    assert all(opened.dom_for(x) in drawn_doms(opened) for x in leaves(tree))
    # Where it fits, nothing folds: the by-turns drawing is what it was.
    assert not graph.build_layout(tree, "auto").retries


def test_the_page_by_turns_draws_the_fold_when_the_path_is_over_the_cap(tmp_path):
    # 600 fork points: by turns the active path alone is over the cap (MAX_DRAWN).
    header, entries = samplegen.retry_session(600)
    path = tmp_path / "sessions" / "p" / "retried.jsonl"
    path.parent.mkdir(parents=True)
    samplegen.write_jsonl(path, header, entries)
    client = create_app(path.parents[1]).test_client()
    html = unescape(client.get("/s/p/retried.jsonl?collapse=auto").get_data(as_text=True))
    assert 'data-level="skeleton"' not in html and "took too long" not in html
    assert re.search(r'<g id="retries-[^"]+" class="node segment retries', html), "the fold is drawn by turns"
    assert re.search(r"⋯ \d+ retries along turns 2–\d+ ⋯", html)
    assert 0 < html.count('class="node') <= graph.MAX_DRAWN
    assert "click a “⋯ retries” or “⊞ more branches” node to draw them" in html  # the banner names the fold
