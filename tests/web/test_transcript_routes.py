"""Transcript, search and the index page's content filter, through the real app."""

from __future__ import annotations

import re
from html import unescape

import pytest

from tests.conftest import Builder
from webapp.web.app import create_app

XSS = '<script>alert("xss")</script><img src=x onerror="alert(1)">'


@pytest.fixture
def app_and_ids(tmp_path):
    root = tmp_path / "sessions"
    (root / "--proj--").mkdir(parents=True)
    b = Builder()
    u1 = b.user("Please fix the rounding " + XSS)
    a1 = b.assistant("Looking", calls=[{"id": "c1", "name": "bash", "arguments": {"command": "grep -r total"}}])
    r1 = b.tool_result("c1", "line\n" * 60 + "platypus", name="bash")
    b.add("compaction", summary="Summary of the work", firstKeptEntryId=u1, tokensBefore=10059, tokensAfter=800)
    u2 = b.user("Now the tests")
    a2 = b.assistant("All green")
    side = b.user("another way", parent=a1)
    side_r = b.assistant("", calls=[{"id": "c9", "name": "read", "arguments": {"path": "x.py"}}])
    hidden = b.tool_result("c9", "the quokka lives here")
    b.add("leaf", targetId=a2)
    b.write(root / "--proj--" / "s.jsonl")
    app = create_app(root)
    return app, dict(u1=u1, a1=a1, r1=r1, u2=u2, a2=a2, side=side, side_r=side_r, hidden=hidden)


def test_the_transcript_tab_reads_the_path_with_results_folded_and_summaries_inline(app_and_ids):
    app, ids = app_and_ids
    r = app.test_client().get(f"/s/--proj--/s.jsonl?tab=transcript&node={ids['u1']}")
    assert r.status_code == 200
    body = r.text[r.text.index('class="transcript-panel"'):]
    assert "Please fix the rounding" in body and "All green" in body
    assert f'data-entry="{ids["side"]}"' not in body  # the side branch is only linked to
    assert "<script>alert" not in r.text and "&lt;script&gt;alert" in body
    assert re.search(r'<details class="t-result"[^>]*><summary>result · 61 lines</summary>', body)
    assert "show all 61 lines" in body  # long output cut, the rest expandable
    assert "Compacted from 10.1k tokens" in unescape(body)
    assert "1 other branch here" in body and f'data-select="{ids["side"]}"' in body


def test_filter_and_toggles_are_in_the_url(app_and_ids):
    app, ids = app_and_ids
    client = app.test_client()
    r = client.get("/s/--proj--/s.jsonl/-/panel/transcript?filter=user&output=hide", headers={"HX-Request": "true"})
    assert r.status_code == 200
    assert "Now the tests" in r.text and "All green" not in r.text
    assert "filter=user" in r.headers["HX-Push-Url"] and "output=hide" in r.headers["HX-Push-Url"]
    r = client.get("/s/--proj--/s.jsonl?tab=transcript&output=hide")
    assert "All green" in r.text and "t-result" not in r.text


def test_more_of_a_transcript_loads_by_window(app_and_ids):
    app, ids = app_and_ids
    client = app.test_client()
    r = client.get(f"/s/--proj--/s.jsonl/-/transcript?node={ids['u1']}&start=2&size=1", headers={"HX-Request": "true"})
    assert r.status_code == 200 and r.text.count('class="t-item') == 1
    assert "earlier entr" in r.text and "more entr" in r.text
    assert client.get(f"/s/--proj--/s.jsonl/-/transcript?node={ids['u1']}&start=x", headers={"HX-Request": "true"}).status_code == 400
    assert client.get("/s/--proj--/s.jsonl/-/transcript?node=nope", headers={"HX-Request": "true"}).status_code == 404
    plain = client.get(f"/s/--proj--/s.jsonl/-/transcript?node={ids['u1']}")
    assert plain.status_code == 302 and "tab=transcript" in plain.headers["Location"]


def test_search_finds_a_tool_result_on_a_side_branch_and_links_to_its_transcript(app_and_ids):
    app, ids = app_and_ids
    r = app.test_client().get("/s/--proj--/s.jsonl?tab=search&q=QUOKKA")
    assert r.status_code == 200
    assert "1 entry mention" in r.text
    hit = re.search(r'<a class="hit-link" href="([^"]+)" data-select="([^"]+)"', r.text)
    assert hit.group(2) == ids["hidden"] and "tab=transcript" in unescape(hit.group(1))
    assert "<mark>quokka</mark>" in r.text


def test_search_escapes_the_query_and_the_snippet(app_and_ids):
    app, _ = app_and_ids
    r = app.test_client().get("/s/--proj--/s.jsonl", query_string={"tab": "search", "q": "<script>alert"})
    assert "1 entry mention" in r.text
    assert "<script>alert" not in r.text and "<mark>&lt;script&gt;alert</mark>" in r.text


def test_the_index_filter_searches_the_content_of_every_session(app_and_ids):
    app, _ = app_and_ids
    client = app.test_client()
    assert "1 session matching" in client.get("/?q=platypus").text  # only in a tool result
    assert "0 sessions matching" in client.get("/?q=wombat").text


def test_a_pi_bash_execution_reads_as_the_users_command(tmp_path):
    import shutil

    from tests.conftest import FIXTURES

    root = tmp_path / "sessions"
    (root / "--pi--").mkdir(parents=True)
    shutil.copyfile(FIXTURES / "pi" / "pi-mono_before-compaction.jsonl", root / "--pi--" / "s.jsonl")
    client = create_app(root).test_client()
    page = client.get("/s/--pi--/s.jsonl/-/panel/transcript?node=L1002", headers={"HX-Request": "true"}).text
    item = page[page.index('data-entry="L1002"'):]
    assert re.search(r'class="t-select kind k-bashExecution"[^>]*>bash \(user\)</a>', item)
    context = client.get("/s/--pi--/s.jsonl/-/panel/context?node=L1002", headers={"HX-Request": "true"}).text
    assert "What the model sees at" in context and ">bash (user) L1002</a>" in context
