"""The chosen branch first: a branch a person marked "winner" is never left out of the skeleton
(nor its compactions and labels), selecting a leaf keeps the compactions and labels on the paths
that must stay, and an export opens on the winner (then the active leaf) with its verdicts."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from webapp.core.entries import COMPACTION
from webapp.core.session import Session
from webapp.core.verdicts import give_verdict
from webapp.web.app import create_app
from webapp.web.graph import build_layout, dom_id

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
LARGE = next(SAMPLES.glob("*/*019c6579-1ae3-78f7-9da1-494c73cf256d.jsonl"))


@pytest.fixture(autouse=True)
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


@pytest.fixture
def large(tmp_path) -> Path:
    folder = tmp_path / "sessions" / LARGE.parent.name
    folder.mkdir(parents=True)
    return Path(shutil.copy(LARGE, folder / LARGE.name))


def hidden_leaves(tree) -> list[str]:
    """The leaves the skeleton leaves in its "⊞ more branches" groups when nothing is marked."""
    drawn = {e.id for e in build_layout(tree, "skeleton").nodes}
    return [x for x in tree.leaves() if x not in drawn]


def drawn_in(page: str) -> set[str]:
    return set(re.findall(r'<g id="(e-[^"]+)" class="node', page))


def test_a_leaf_marked_winner_is_drawn_at_the_skeleton_with_what_is_on_its_path(large):
    session = Session.open(large)
    tree = session.tree
    hidden = hidden_leaves(tree)
    assert len(hidden) >= 3  # (the sample's skeleton groups most of its 7 branches)
    winner = next(x for x in hidden if any(e.id in tree.labels for e in tree.path(x)))
    give_verdict(session, winner, "winner")
    app = create_app(large.parent.parent)
    page = app.test_client().get("/s/" + large.relative_to(large.parent.parent).as_posix()).get_data(as_text=True)
    drawn = drawn_in(page)
    tree = Session.open(large).tree
    assert dom_id(winner) in drawn
    assert {dom_id(e.id) for e in tree.path(winner) if e.id in tree.labels} <= drawn
    assert {dom_id(e.id) for e in tree.path(winner) if e.type == COMPACTION} <= drawn
    active = tree.conversation_leaf(tree.active_leaf)
    assert dom_id(active) in drawn  # the active leaf stays too


def test_selecting_a_grouped_leaf_keeps_the_compactions_and_labels_of_the_paths_that_stay(large):
    tree = Session.open(large).tree
    compactions = {e.id for e in tree.entries if e.type == COMPACTION}
    for leaf in hidden_leaves(tree):
        layout = build_layout(tree, "skeleton", frozenset([leaf]))
        drawn = {e.id for e in layout.nodes}
        assert leaf in drawn
        assert compactions <= drawn  # (all three are on the active path)
        assert {e.id for e in tree.path(leaf) if e.id in tree.labels} <= drawn


def test_an_export_opens_on_the_winner_with_its_verdicts(large):
    session = Session.open(large)
    tree = session.tree
    winner = hidden_leaves(tree)[0]
    other = tree.leaves()[-1]
    give_verdict(session, winner, "winner", "kept: the smallest change")
    give_verdict(session, other, "worse")
    root = large.parent.parent
    client = create_app(root).test_client()
    html = client.get("/s/" + large.relative_to(root).as_posix() + "/export?reviewed=1").get_data(as_text=True)
    first = html[html.index('<section class="branch" id="b-0"'):html.index('<section class="branch" id="b-1"')]
    assert f"ends at <code>{winner[-8:]}</code>" in first
    assert 'class="verdict verdict-winner"' in first and "kept: the smallest change" in first
    assert html.count('class="verdict verdict-worse"') >= 1 and "worse than the others" in html
    sidebar = html[html.index('aria-label="Branches"'):]
    assert sidebar.index(winner[-8:]) < sidebar.index(tree.conversation_leaf(tree.active_leaf)[-8:])


def test_the_header_counts_the_branches_the_branches_tab_lists(tmp_path):
    """Claude Code's side lines after a reply (hook summaries, turn durations) are no branch of
    their own: the header's count is the Branches tab's."""
    import re as _re

    from tests.conftest import FIXTURES

    folder = tmp_path / "sessions" / "-home-ana-proj"
    folder.mkdir(parents=True)
    for name in ("reduced_2.1_parallel_tools_and_side_lines.jsonl", "agent-sessions_claude_small.jsonl"):
        path = Path(shutil.copy(FIXTURES / "claude-code" / name, folder / name))
        client = create_app(tmp_path / "sessions").test_client()
        url = "/s/" + path.relative_to(tmp_path / "sessions").as_posix()
        said = _re.search(r'<span class="stat">([\d,]+) branch(?:es)?</span>', client.get(url).text).group(1)
        listed = _re.search(r"<h3>(\d+) branch(?:es)?\s", client.get(url + "?tab=branches").text).group(1)
        assert int(said) == int(listed) == len(Session.open(path).tree.leaves()), name
