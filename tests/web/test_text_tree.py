"""The text tree (outline.py): one line per drawn node in pi's /tree style, on the session page
(`view=text|both`, at the drawing's level: the skeleton, or turns) as plain links, and in the
export's sidebar (the skeleton)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from tests.conftest import Builder
from webapp.core.session import Session
from webapp.web import graph
from webapp.web.app import create_app, export_session
from webapp.web.outline import text_tree, view_of

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
RICH = next(SAMPLES.rglob("*019cadd3-8025-7970-85d9-5954058b4714.jsonl"))  # 101 entries, 4 leaves
LARGE = next(SAMPLES.rglob("*019c6579-1ae3-78f7-9da1-494c73cf256d.jsonl"))  # 3,000 entries, 7 leaves


def forked() -> Builder:
    """root → u1 → a1, which forks: the first branch (u2 → a2) and the active one (u3 → a3, labelled)."""
    b = Builder()
    b.user("start here", id="u1")
    b.assistant("first answer", id="a1")
    b.user("the old way", id="u2", parent="a1")
    b.assistant("old answer", id="a2")
    b.user("the new way", id="u3", parent="a1")
    b.assistant("new answer", id="a3")
    b.add("label", id="l1", targetId="a3", label="keep")
    return b


def rendered(lines) -> list[str]:
    return [line.prefix + ("• " if line.on_active else "") + (f"[{line.label}] " if line.label else "")
            + f"{line.role} {line.text}".strip() + (f" ({line.leaf})" if line.leaf else "") for line in lines]


def test_a_fork_reads_like_pis_tree_with_the_active_branch_first(tmp_path):
    tree = Session.open(forked().write(tmp_path / "s.jsonl")).tree
    lines = text_tree(tree, graph.build_layout(tree, "off"), lambda x: "?node=" + x)
    assert rendered(lines) == [
        "• user: start here",
        "• assistant: first answer",
        "├─ • user: the new way",
        "│     • [keep] assistant: new answer (active)",  # (a branch's lines indent under its first)
        "└─ user: the old way",
        "      assistant: old answer (leaf)",
    ]
    assert [line.href for line in lines] == ["?node=" + x for x in ("u1", "a1", "u3", "a3", "u2", "a2")]
    fork, new, old = lines[1], lines[2], lines[4]
    assert fork.fork and fork.foldable and fork.end == 5  # folding the fork point hides both branches
    assert new.branch_head and new.end == 3 and old.end == 5
    assert [line.level for line in lines] == [1, 1, 2, 2, 2, 2]
    assert not lines[3].foldable and not lines[0].foldable


@pytest.mark.parametrize("path", [RICH, LARGE])
def test_every_node_of_a_skeleton_is_one_line_and_each_subtree_ends_where_its_nodes_do(path):
    tree = Session.open(path).tree
    layout = graph.build_layout(tree, "skeleton")
    lines = text_tree(tree, layout, lambda x: "?node=" + x)
    assert len(lines) == layout.size() and len({line.dom for line in lines}) == len(lines)
    kids: dict[str, list[str]] = {}
    for a, b in layout.edges:
        kids.setdefault(a, []).append(b)

    def below(dom: str) -> int:
        return sum(1 + below(k) for k in kids.get(dom, ()))

    for i, line in enumerate(lines):
        assert line.end - i == below(line.dom), line
    active = tree.conversation_leaf(tree.active_leaf)
    assert [line.select for line in lines if line.leaf == "active"] == [active]
    leaf_doms = {layout.dom_for(x) for x in tree.leaves() if tree.by_id[x].type not in ("leaf", "label")}
    assert leaf_doms <= {line.dom for line in lines}  # every leaf: its line or its group's
    on_path = [line.dom for line in lines if line.on_active]
    assert on_path == layout.path_doms(active)  # the active path is the first line of every fork on it
    assert all(line.prefix.endswith(("├─ ", "└─ ")) for line in lines if line.branch_head)


@pytest.fixture
def client(tmp_path):
    root = tmp_path / "sessions"
    folder = root / "--home-ana-projects-invoice-api--"
    folder.mkdir(parents=True)
    (folder / RICH.name).write_bytes(RICH.read_bytes())
    return create_app(root).test_client(), f"/s/--home-ana-projects-invoice-api--/{RICH.name}"


def test_the_text_view_lists_the_tree_as_links_and_draws_nothing(client):
    c, url = client
    html = c.get(url + "?view=text").get_data(as_text=True)
    tree = Session.open(RICH).tree
    links = [unescape(h) for h in re.findall(r'<a role="treeitem"[^>]* href="([^"]+)"', html)]
    assert len(links) == graph.build_layout(tree, "skeleton").size()
    assert all("view=text" in h for h in links)
    assert "<svg" not in html.split('id="graph"')[1].split("</section>")[0]  # no drawing: no dot run
    assert 'data-view="text" aria-current="true"' in html  # the toolbar says which view this is
    active = tree.conversation_leaf(tree.active_leaf)
    assert re.search(r'class="tt-line[^"]* selected"[^>]*data-select="' + active, html)  # the selected node's line


def test_both_views_show_the_drawing_and_the_text_and_the_graph_view_only_the_drawing(client):
    c, url = client
    both = c.get(url + "?view=both").get_data(as_text=True)
    assert 'id="text-tree"' in both and "<svg" in both
    for plain in ("", "?view=nonsense"):
        page = c.get(url + plain).get_data(as_text=True)
        assert 'id="text-tree"' not in page and "<svg" in page
    assert view_of({"view": "nonsense"}) == "graph"


def test_the_text_tree_follows_the_level_the_toolbar_shows(client):
    c, url = client
    tree = Session.open(RICH).tree
    for level, query in (("skeleton", ""), ("auto", "&collapse=auto")):
        html = unescape(c.get(url + "?view=both" + query).get_data(as_text=True))
        keys = re.findall(r'<a role="treeitem"[^>]* data-key="([^"]+)"', html)
        drawn = set(re.findall(r'<g id="([^"]+)" class="node', html))
        layout = graph.build_layout(tree, level)
        assert len(keys) == layout.size() and set(keys) == drawn  # a line per drawn node, the same nodes
    assert len(keys) > graph.build_layout(tree, "skeleton").size()  # by turns lists more than the skeleton
    # The toolbar offers the other level, in the text view too, and the way back to the skeleton.
    text = unescape(c.get(url + "?view=text&collapse=auto").get_data(as_text=True))
    back = re.search(r'<a class="button level" href="([^"]+)"[^>]*>Skeleton</a>', text)
    assert back and "collapse" not in back.group(1) and "view=text" in back.group(1)
    assert re.search(r'<a class="button level" href="[^"]*collapse=auto[^"]*"[^>]*>By turns</a>',
                     unescape(c.get(url + "?view=text").get_data(as_text=True)))


def test_a_fold_of_fork_points_is_a_line_that_opens_it(tmp_path):
    import samplegen

    header, entries = samplegen.retry_session(60)
    path = tmp_path / "sessions" / "p" / "retried.jsonl"
    path.parent.mkdir(parents=True)
    samplegen.write_jsonl(path, header, entries)
    tree = Session.open(path).tree
    layout = graph.build_layout(tree, "skeleton")
    (fold,) = layout.retries
    lines = text_tree(tree, layout, lambda x: "?node=" + x, lambda anchors: "?open=" + ",".join(anchors))
    assert len(lines) == layout.size()  # the fold too: one tree, not the part below it cut off
    (line,) = [x for x in lines if x.dom == fold.id]
    assert line.kind == "retries" and line.text == fold.words() and line.href == "?open=" + ",".join(fold.opens())
    assert line.on_active and lines.index(line) < next(i for i, x in enumerate(lines) if x.leaf == "active")


def test_a_redrawn_graph_brings_its_text_tree_out_of_band(client):
    c, url = client
    fragment = c.get(url + "/-/graph?view=both", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert re.search(r'<nav id="text-tree" class="text-tree" hx-swap-oob="true"', fragment)
    plain = c.get(url + "/-/graph", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert 'id="text-tree"' not in plain


def test_the_export_sidebar_holds_the_text_tree_linked_to_the_transcript():
    html = export_session(LARGE)
    side = html.split('<aside class="export-side">')[1].split("</aside>")[0]
    hrefs = re.findall(r'<a role="treeitem"[^>]* href="#([^"]+)"', side)
    tree = Session.open(LARGE).tree
    assert len(hrefs) == graph.build_layout(tree, "skeleton").size()
    ids = set(re.findall(r' id="([^"]+)"', html))
    assert set(hrefs) <= ids  # every line leads to its entry in the file
