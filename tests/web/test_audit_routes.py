"""The "Lost in compaction" tab, the score on a summary's node panel, and the preview's live audit."""

from __future__ import annotations

import re
import shutil
from html import unescape

import orjson
import pytest

from tests.conftest import FIXTURES, Builder
from tests.core.test_audit import work_data
from webapp.core.audit import audit_entry
from webapp.core.session import Session
from webapp.web.app import create_app
from webapp.web.audit import audit_rows
from webapp.web.graph import dom_id

WORK = "--home-ana-proj--/work.jsonl"
PI = "--home-ana-proj--/pi.jsonl"


@pytest.fixture
def root(tmp_path):
    folder = tmp_path / "sessions" / "--home-ana-proj--"
    folder.mkdir(parents=True)
    (folder / "work.jsonl").write_bytes(work_data())
    shutil.copy(FIXTURES / "pi" / "pi-mono_before-compaction.jsonl", folder / "pi.jsonl")
    return tmp_path / "sessions"


@pytest.fixture
def app(root):
    return create_app(root)


@pytest.fixture
def client(app):
    return app.test_client()


def overlay(html: str) -> dict:
    return orjson.loads(unescape(re.search(r'<script type="application/json" id="overlay">(.*?)</script>', html, re.S).group(1)))


def facts(html: str, kind: str) -> set[str]:
    return {unescape(t) for t in re.findall(rf'<li class="fact {kind}" data-fact="([^"]*)"', html)}


def test_the_tab_lists_lost_and_carried_facts_and_marks_their_entries(client):
    html = client.get(f"/s/{WORK}?tab=audit&node=c12").get_data(as_text=True)
    assert "Lost in compaction" in html and 'class="audit-pct band-fair">50%</strong> of the 9 facts' in html
    assert facts(html, "missing") == {"FAILED tests/test_report.py::test_export - AssertionError",
                                      "Could not find the exact text in src/report.py", "https://example.com/spec",
                                      "2.1.4", "Keep the column order stable."}
    assert facts(html, "covered") == {"src/report.py", "pytest -q tests/test_report.py", "export_csv",
                                      "Do not touch the database schema."}
    # Each lost fact links to the entry that holds it: it opens under the fact, marked on the graph.
    item = html.split('data-fact="Keep the column order stable."')[1].split("</li>")[0]
    assert 'hx-get="/s/--home-ana-proj--/work.jsonl/-/audit/entry?id=u8"' in item.replace("&amp;", "&")
    assert f'data-dom="{dom_id("u8")}"' in item and 'class="fact-entry"' in item
    marks = overlay(html)["audit"]
    assert marks["missing"] == sorted(dom_id(i) for i in ("t5", "t7", "u1", "u8"))
    assert marks["summary"] == dom_id("c12") and dom_id("a9") in marks["span"]
    assert dom_id("u10") not in marks["span"]  # kept, not summarized


def test_a_summary_node_panel_shows_its_score(client):
    html = client.get(f"/s/{WORK}?node=c12").get_data(as_text=True)
    line = html.split('<dd class="audit-score-line">')[1].split("</dd>")[0]
    assert "50%</strong> of 9 facts" in line and "/-/panel/audit?node=c12" in line
    assert "audit-score-line" not in client.get(f"/s/{WORK}?node=u1").get_data(as_text=True)
    assert overlay(html)["audit"] is None


def test_the_tab_on_another_node_offers_the_summaries_of_the_active_path(client):
    html = client.get(f"/s/{PI}?tab=audit&node=L2").get_data(as_text=True)
    assert "Select a compaction or a branch summary" in html
    listed = re.findall(r'/-/panel/audit\?node=(L\d+)', html)
    assert listed == ["L360", "L629"]


def test_the_real_pi_session_links_each_lost_fact_to_an_entry_of_the_span(client, root):
    tree = Session.open(root / PI).tree
    for comp in ("L360", "L629"):
        html = client.get(f"/s/{PI}/-/panel/audit?node={comp}", headers={"HX-Request": "true"}).get_data(as_text=True)
        audit = audit_entry(tree, comp)
        items = html.split('<li class="fact missing"')[1:]
        assert len(items) == len(audit.missing())
        shown = [f for row in audit_rows(audit) for f in ([f for g in row.groups for f in g.facts] or row.missing)]
        assert sorted(map(id, shown)) == sorted(map(id, audit.missing()))  # lost commands by kind
        for item, fact in zip(items, shown):
            linked = re.findall(r'/-/audit/entry\?id=([^"&]+)"', item.split("</li>")[0])
            assert linked == fact.sources[:3] and set(linked) <= set(audit.span)
        assert overlay(html)["audit"]["missing"]  # drawn nodes (or the folded runs holding them) marked


def test_preview_audits_the_posted_summary_and_writes_nothing(client, app, root):
    before = (root / WORK).read_bytes()
    form = {"csrf_token": app.config["CSRF_TOKEN"], "leaf": "a11", "first_kept": "u10", "summary": "nothing"}
    html = client.post(f"/s/{WORK}/-/audit/preview", data=form).get_data(as_text=True)
    assert "Keep the column order stable." in facts(html, "missing")
    assert "src/report.py" in facts(html, "covered")  # the write appends the files it touched
    html = client.post(f"/s/{WORK}/-/audit/preview", data={**form, "summary": "Keep column order stable."}).get_data(as_text=True)
    assert "Keep the column order stable." in facts(html, "covered")
    assert "Keep the column order stable." not in facts(html, "missing")
    assert "data-select" not in html  # the preview keeps the user in the form
    assert (root / WORK).read_bytes() == before


def test_preview_bad_input_is_a_clear_error(client, app):
    token = app.config["CSRF_TOKEN"]
    assert client.post(f"/s/{WORK}/-/audit/preview", data={"summary": "x"}).status_code == 403
    r = client.post(f"/s/{WORK}/-/audit/preview", data={"csrf_token": token, "leaf": "ghost"})
    assert r.status_code == 404 and "no entry" in r.get_data(as_text=True)
    r = client.post(f"/s/{WORK}/-/audit/preview", data={"csrf_token": token, "keep_recent_tokens": "lots"})
    assert r.status_code == 400 and "not a whole number" in r.get_data(as_text=True)
    r = client.post(f"/s/{WORK}/-/audit/preview", data={"csrf_token": token, "leaf": "c12"})
    assert r.status_code == 409 and "nothing to compact" in r.get_data(as_text=True)


def test_session_text_is_escaped(tmp_path):
    b = Builder()
    b.user('Never run <script>alert("x")</script> on prod.', id="u1")
    b.assistant("ok", id="a2")
    b.user("next", id="u3")
    b.add("compaction", id="c4", summary="nothing", firstKeptEntryId="u3")
    (tmp_path / "s.jsonl").write_bytes(b.data())
    html = create_app(tmp_path).test_client().get("/s/s.jsonl?tab=audit&node=c4").get_data(as_text=True)
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html


def test_a_branch_summary_has_its_audit_too(tmp_path):
    b = Builder()
    b.user("Fix the login bug.", id="u1")
    b.assistant("Looking.", id="a2")
    b.user("Never push to main.", id="u3")
    b.assistant("Pushed.", id="a4")
    b.add("branch_summary", id="b5", parent="a2", fromId="a4", summary="Looked at the login bug.")
    (tmp_path / "s.jsonl").write_bytes(b.data())
    client = create_app(tmp_path).test_client()
    html = client.get("/s/s.jsonl?tab=audit&node=b5").get_data(as_text=True)
    assert facts(html, "missing") == {"Never push to main."}
    assert overlay(html)["audit"]["missing"] == [dom_id("u3")]
    assert re.findall(r'/-/panel/audit\?node=(\w+)', html) == ["b5"]  # the summaries of the active path
    assert "0%</strong> of 1 facts" in client.get("/s/s.jsonl?node=b5").get_data(as_text=True)


def test_the_compare_page_has_a_row_of_facts_lost_by_compactions(tmp_path):
    from tests.core.test_audit import lost_in_one_branch

    (tmp_path / "s.jsonl").write_bytes(lost_in_one_branch().storage.read_from(0))
    html = create_app(tmp_path).test_client().get("/s/s.jsonl/compare?ids=c6,a8").get_data(as_text=True)
    row = html.split('<tr data-row="lost_facts">')[1].split("</tr>")[0]
    assert "Facts lost by compactions" in row
    cells = re.findall(r'<td data-figure="lost_facts">(.*?)</td>', row, re.S)
    assert [re.sub(r"<[^>]+>", " ", c).split() for c in cells] == [["1", "1"], ["0", "0"]]


def test_a_lost_facts_entry_opens_as_a_fragment_and_as_a_link(client):
    r = client.get(f"/s/{WORK}/-/audit/entry?id=u8", headers={"HX-Request": "true"})
    assert r.status_code == 200 and 'class="audit-entry" data-entry="u8"' in r.get_data(as_text=True)
    assert "Keep the column order stable." in unescape(r.get_data(as_text=True))
    plain = client.get(f"/s/{WORK}/-/audit/entry?id=u8")
    assert plain.status_code == 302 and "node=u8" in plain.headers["Location"]
    assert client.get(f"/s/{WORK}/-/audit/entry?id=nope", headers={"HX-Request": "true"}).status_code == 404
