"""The drawing's direction: chosen from the tree's shape, or asked for in the URL (`dir`)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import Builder
from webapp.core.session import Session
from webapp.web import graph
from webapp.web.app import create_app

PROJECT = "--home-ana-proj--"


def session_file(root, build) -> str:
    b = Builder()
    build(b)
    folder = root / PROJECT
    folder.mkdir(parents=True, exist_ok=True)
    b.write(folder / "s.jsonl")
    return f"{PROJECT}/s.jsonl"


def long_chain(b: Builder) -> None:
    for i in range(40):
        b.user(f"question {i}")
        b.assistant(f"answer {i}")


def bushy(b: Builder) -> None:
    first = b.user("one question, thirty tries")
    for i in range(30):
        b.assistant(f"try {i}", parent=first)


def layout_of(root, build):
    rel = session_file(root, build)
    tree = Session.open(root / rel).tree
    return graph.build_layout(tree, "off")


def test_a_long_thin_tree_is_drawn_top_down_and_a_bushy_one_left_to_right(tmp_path):
    assert graph.choose_rankdir(layout_of(tmp_path / "a", long_chain)) == "TB"
    assert graph.choose_rankdir(layout_of(tmp_path / "b", bushy)) == "LR"


@pytest.mark.parametrize("rankdir", graph.RANKDIRS)
def test_the_estimate_has_the_aspect_dot_draws(tmp_path, rankdir):
    """What "auto" weighs is the shape dot makes: wide where dot's drawing is wide."""
    for name, build in (("chain", long_chain), ("bushy", bushy)):
        rel = session_file(tmp_path / name, build)
        tree = Session.open(tmp_path / name / rel).tree
        layout = graph.build_layout(tree, "off")
        svg = graph.render_svg(tree, layout, lambda i: "?node=" + i, rankdir=rankdir)
        w, h = map(float, re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+) ([\d.]+)"', svg).groups())
        ew, eh = graph.drawing_extent(layout, rankdir)
        assert (w > h) == (ew > eh)


def graph_attrs(html: str) -> tuple[str, str]:
    rankdir = re.search(r'data-rankdir="([^"]*)"', html).group(1)
    state = re.search(r'<input type="hidden" name="dir" value="([^"]*)">', html).group(1)
    return rankdir, state


def test_the_url_sets_the_direction_and_a_bad_value_falls_back_to_the_choice(tmp_path):
    root = tmp_path / "sessions"
    rel = session_file(root, long_chain)
    client = create_app(root).test_client()
    page = client.get(f"/s/{rel}").get_data(as_text=True)
    assert graph_attrs(page) == ("TB", "")
    assert "↓ top-down" in page and "dir=LR" in page  # the toggle names the drawing and links to the other
    page = client.get(f"/s/{rel}?dir=LR").get_data(as_text=True)
    assert graph_attrs(page) == ("LR", "LR")
    assert "→ left-right" in page and "dir=TB" in page
    for bad in ("lr", "BT", "<script>", "x" * 500):
        response = client.get(f"/s/{rel}", query_string={"dir": bad})
        assert response.status_code == 200
        assert graph_attrs(response.get_data(as_text=True)) == ("TB", "")


def test_the_direction_is_part_of_the_drawing_cache(tmp_path):
    root = tmp_path / "sessions"
    rel = session_file(root, long_chain)
    client = create_app(root).test_client()
    shapes = []
    for rankdir in ("TB", "LR", "TB"):
        html = client.get(f"/s/{rel}/-/graph?dir={rankdir}", headers={"HX-Request": "true"}).get_data(as_text=True)
        w, h = map(float, re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+) ([\d.]+)"', html).groups())
        shapes.append(w > h)
        assert f"dir={rankdir}" in html  # the nodes' links carry it along
    assert shapes == [False, True, False]
