"""The before/after page, the diff page, the timeline in the Context tab, and `context --diff`."""

from __future__ import annotations

import re
from html import unescape

import orjson
import pytest

from tests.context_session import SUMMARY, context_session
from webapp.cli import main
from webapp.web.app import create_app

REL = "--home-ana-proj--/s.jsonl"
HX = {"HX-Request": "true"}


@pytest.fixture
def root(tmp_path, monkeypatch):
    for var in ("SESSION_TREE_MODEL", "SESSION_TREE_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "--home-ana-proj--").mkdir()
    context_session().write(tmp_path / REL)
    return tmp_path


@pytest.fixture
def client(root):
    return create_app(root).test_client()


def _col(page: str, dom_id: str, until: str = "<h3") -> str:
    """The HTML of the element with `dom_id` up to `until` (the next section heading)."""
    start = page.index(f'id="{dom_id}"')
    end = page.find(until, start)
    return page[start:end if end > 0 else None]


def test_before_after_page_columns(client):
    r = client.get(f"/s/{REL}/context/compaction/k1")
    assert r.status_code == 200
    page = unescape(r.get_data(as_text=True))
    left = _col(page, "cx-left", 'id="cx-summary"')
    assert re.findall(r'href="[^"]*node=(\w+)"', left) == ["u1", "a1", "t1", "a2"]
    assert "4 messages" in left and "turn: please read config.toml" in left
    assert SUMMARY in _col(page, "cx-summary")
    stayed = re.findall(r'href="[^"]*node=(\w+)"', _col(page, "cx-stayed"))
    assert stayed == ["u2", "u2", "a3", "a3"]  # each message on both sides, one row each
    assert "4 entries (4 messages) left the context" in page


def test_before_after_of_what_is_no_compaction_is_a_clear_404(client):
    r = client.get(f"/s/{REL}/context/compaction/u1")
    assert r.status_code == 404 and "is not a compaction" in unescape(r.get_data(as_text=True))


def test_diff_page_in_the_url(client):
    r = client.get(f"/s/{REL}/context/diff?a=a3&b=b3")
    page = unescape(r.get_data(as_text=True))
    assert r.status_code == 200
    assert "4 messages in both, 2 changed, 0 only in A, 0 only in B" in page
    assert "<del>server</del><ins>parser</ins>" in page
    assert re.search(r"<th>thinking level</th><td>–</td><td>high</td>", page)
    assert "a=b3&amp;b=a3" in r.get_data(as_text=True)  # swap


def test_diff_page_with_an_unknown_id_says_which(client):
    r = client.get(f"/s/{REL}/context/diff?a=a3&b=nope")
    assert r.status_code == 404 and "no entry with id 'nope'" in unescape(r.get_data(as_text=True))


def test_context_tab_links_before_after_and_draws_the_timeline(client):
    page = unescape(client.get(f"/s/{REL}/-/panel/context?node=a4", headers=HX).get_data(as_text=True))
    assert "/context/compaction/k1" in page and "Before / after compaction" in page
    svg = page[page.index("<svg class=\"timeline\""):page.index("</svg>", page.index("<svg class=\"timeline\""))]
    points = re.findall(r'data-entry="(\w+)"[^>]*><circle class="tl-point ([\w-]+)', svg)
    assert points == [("a2", "tl-reported"), ("a3", "tl-reported"), ("k1", "tl-compaction"), ("a4", "tl-reported")]
    assert SUMMARY in svg  # the compaction's summary on hover
    assert 'href="/s/--home-ana-proj--/s.jsonl?node=a3&amp;tab=context"' in client.get(
        f"/s/{REL}/-/panel/context?node=a4", headers=HX).get_data(as_text=True)


def test_compaction_node_panel_and_lost_tab_link_the_before_after(client):
    for tab in ("node", "audit"):
        page = client.get(f"/s/{REL}/-/panel/{tab}?node=k1", headers=HX).get_data(as_text=True)
        assert "/context/compaction/k1" in page, tab


def test_timeline_points_match_the_context_command(root, capsys):
    page = create_app(root).test_client().get(f"/s/{REL}/-/panel/context?node=a4", headers=HX).get_data(as_text=True)
    shown = dict(re.findall(r'data-entry="(\w+)"[^>]*><circle[^>]*><title>[^<]*? · ([\d.k]+) tokens', page))
    for entry_id, text in shown.items():
        assert main(["context", str(root / REL), "--leaf", entry_id, "--json"]) == 0
        tokens = orjson.loads(capsys.readouterr().out)["tokens"]["context"]
        assert text == (f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens))
    assert len(shown) == 4


def test_cli_context_diff(root, capsys):
    assert main(["context", str(root / REL), "--diff", "a3", "b3", "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert data["counts"] == {"both": 4, "only-a": 0, "only-b": 0, "changed": 2}
    assert data["sharedUntil"] == "a2" and data["settings"] == [{"name": "thinking level", "a": None, "b": "high"}]
    assert main(["context", str(root / REL), "--diff", "a3", "a4"]) == 0
    out = capsys.readouterr().out
    assert "- user [u1]" in out and "+ user [k1]" in out and "  user [u2]" in out
    assert main(["context", str(root / REL), "--diff", "a3", "zz"]) == 2
    assert "no entry with id 'zz'" in capsys.readouterr().err


def test_the_export_holds_the_first_branch_timeline_linking_to_its_entries(root):
    """Each timeline walks its branch's whole path: the export draws the first branch's and says
    where the others are."""
    from webapp.web.app import export_session
    page = export_session(root / REL)
    links = re.findall(r'<a href="#(t-[^"]+)" class="tl-link"', page)
    assert sorted(links) == ["t-e-a2", "t-e-b3"]  # the first branch's turns
    assert all(f'id="{anchor}"' in page for anchor in links)
    assert page.count('class="timeline-box"') == 1
    assert page.count('class="muted timeline-note"') == 1 and "drawn in the app" in page
