"""The table of tabs (web/tabs.py) is what the page, the panel fragment and the cache follow: the
tab bar lists its rows on the bar with their titles, each tab's fragment shows its own partial,
and the views a tab keeps between requests are those its row declares, keyed by the names it
gives."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from webapp.web.app import create_app
from webapp.web.tabs import BAR, TABS

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
REL = "--home-ana-projects-invoice-api--/2026-03-02T09-14-05-221Z_019cadd3-8025-7970-85d9-5954058b4714.jsonl"
SUMMARY = "019cadda-63b4-7269-a6ec-f7182fd34599"  # a branch summary: the node and Lost tabs audit it
GRAPH_VIEWS = {"layout", "svg", "drawing"}  # what the graph keeps, whichever tab is open


@pytest.fixture
def app(tmp_path):
    return create_app(Path(shutil.copytree(SAMPLES, tmp_path / "s")))


def test_the_tab_bar_is_the_tables_rows_in_order(app):
    html = app.test_client().get(f"/s/{REL}").get_data(as_text=True)
    bar = html[html.index('<nav class="tabs"'):html.index("</nav>", html.index('<nav class="tabs"'))]
    assert re.findall(r'role="tab"[^>]*>([^<]+)</a>', bar) == [t.title for t in BAR]
    assert [t.name for t in BAR] == ["node", "transcript", "search", "context", "branches", "summaries",
                                     "problems", "audit"]
    assert "compact" in TABS and not TABS["compact"].on_bar


@pytest.mark.parametrize("name", list(TABS))
def test_each_tab_keeps_the_views_its_row_declares(app, name):
    client = app.test_client()
    response = client.get(f"/s/{REL}/-/panel/{name}?node={SUMMARY}", headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert f'data-tab="{name}"' in response.get_data(as_text=True)
    kept = {(k.kind, tuple(n for n, _ in k.depends)) for k in app.extensions["session_store"].views._data
            if k.kind not in GRAPH_VIEWS}
    assert kept == set(TABS[name].keeps)


def test_the_empty_conversation_says_so_on_the_context_tab(tmp_path):
    (tmp_path / "empty.jsonl").write_text('{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00Z",'
                                          '"cwd":"/w"}\n')
    html = create_app(tmp_path).test_client().get("/s/empty.jsonl?tab=context").get_data(as_text=True)
    assert TABS["context"].empty in html
