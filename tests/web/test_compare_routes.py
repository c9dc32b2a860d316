"""The comparison routes through the real app: the page, deep links, the summary POST and the
self-contained export."""

from __future__ import annotations

import re
from html import unescape

import pytest

from tests.share_form import download_after_review
from webapp.core.session import Session, create_session
from webapp.web.app import create_app

XSS = '<script>alert("x")</script> in a note'


def user(text):
    return {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant(text, calls=()):
    content = [{"type": "text", "text": text}] + [
        {"type": "toolCall", "id": f"c{i}", "name": name, "arguments": {"path": path}}
        for i, (name, path) in enumerate(calls)
    ]
    return {"type": "message", "message": {"role": "assistant", "content": content, "provider": "p", "model": "m1",
                                           "stopReason": "stop"}}


@pytest.fixture
def demo(tmp_path):
    """A session whose first answer is followed by three forks, one with an XSS instruction."""
    root = tmp_path / "sessions"
    path = create_session(root, "/home/ana/proj")
    s = Session.open(path)
    s.append(user("Fix the failing test"))
    shared = s.append(assistant("Found the cause."))["id"]
    s.append(user("Keep it minimal: one line"), parent=shared)
    a = s.append(assistant("Changed one line.", [("edit", "totals.py")]))["id"]
    s.append(user("Rewrite it properly"), parent=shared)
    b = s.append(assistant("Rewrote the module.", [("write", "totals.py")]))["id"]
    s.append(user(XSS), parent=shared)
    c = s.append(assistant("Shown as text."))["id"]
    app = create_app(root)
    return {"client": app.test_client(), "app": app, "path": path, "url": "/s/" + path.relative_to(root).as_posix(),
            "shared": shared, "a": a, "b": b, "c": c}


def test_compare_page_shows_a_column_per_branch_and_marks_the_divergence(demo):
    r = demo["client"].get(f"{demo['url']}/compare?ids={demo['a']},{demo['b']}")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert html.count('class="cmp-branch-head') == 2
    assert html.count("first divergence") == 1
    assert re.search(r'class="cmp-turn divergence[^"]*"', html)
    assert "shared: 2 entries, 1 turn" in html
    # the differing instructions as a word diff against the first column
    assert "<del>Keep</del><ins>Rewrite</ins> it <del>minimal: one line</del><ins>properly</ins>" in html


def test_the_branch_form_redirects_to_the_deep_link(demo):
    r = demo["client"].get(f"{demo['url']}/compare?id={demo['a']}&id={demo['b']}&id={demo['c']}")
    assert r.status_code == 302
    assert r.headers["Location"].endswith(f"/compare?ids={demo['a']},{demo['b']},{demo['c']}")


def test_three_branches_and_escaped_content(demo):
    html = demo["client"].get(f"{demo['url']}/compare?ids={demo['a']},{demo['b']},{demo['c']}").get_data(as_text=True)
    assert html.count('class="cmp-branch-head') == 3
    assert XSS not in html and "&lt;script&gt;" in html


def test_unknown_ids_are_404(demo):
    client, url = demo["client"], demo["url"]
    assert client.get(f"{url}/compare?ids={demo['a']},nope").status_code == 404
    assert client.get(f"{url}/compare/export?ids=nope,{demo['a']}").status_code == 404
    assert client.get("/s/--nope--/x.jsonl/compare?ids=a,b").status_code == 404
    assert client.get("/s/--nope--/x.jsonl/compare?ids=a").status_code == 404


@pytest.mark.parametrize("query", ["?id={a}", "?ids={a}", "", "/export?ids={a}"])
def test_fewer_than_two_picks_go_back_to_the_session_page_with_a_message(demo, query):
    client, url = demo["client"], demo["url"]
    r = client.get(f"{url}/compare" + query.format(a=demo["a"]))
    assert r.status_code == 302
    back = r.headers["Location"]
    assert back.startswith(url + "?") and "tab=branches" in back and "compare=too-few" in back
    html = client.get(back).get_data(as_text=True)
    message = re.search(r'<p class="compare-message" role="status">([^<]*)</p>', html)
    picked = 1 if "{a}" in query else 0
    assert message and message[1] == f"Pick at least two branches to compare ({picked} picked)."
    assert len(re.findall(r'name="id" value="[^"]+"[^>]*checked', html)) == picked
    # the Branches tab on its own says nothing
    plain = client.get(f"{url}?tab=branches").get_data(as_text=True)
    assert '<p class="compare-message" role="status" hidden>' in plain and " checked" not in plain


def test_branch_list_offers_checkboxes_that_submit_to_compare(demo):
    html = demo["client"].get(f"{demo['url']}?tab=branches").get_data(as_text=True)
    form = re.search(r'<form class="compare-form" method="get" action="([^"]+)">(.*?)</form>', html, re.S)
    assert form and unescape(form[1]) == f"{demo['url']}/compare"
    assert sorted(re.findall(r'type="checkbox" name="id" value="([^"]+)"', form[2])) == sorted(
        [demo["a"], demo["b"], demo["c"]]
    )
    assert "Compare selected" in form[2]


def test_a_turn_expands_to_its_full_content(demo):
    client = demo["client"]
    page = client.get(f"{demo['url']}/compare?ids={demo['a']},{demo['b']}").get_data(as_text=True)
    turn_url = unescape(re.search(r'hx-get="([^"]*/compare/turn[^"]*)"', page)[1])
    html = client.get(turn_url, headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "Keep it minimal: one line" in html and "Changed one line." in html and "totals.py" in html
    assert client.get(turn_url.replace("start=", "start=zz"), headers={"HX-Request": "true"}).status_code == 404


def _summarize(demo, tip, ids=None, **headers):
    ids = ids or f"{demo['a']},{demo['b']}"
    token = demo["app"].config["CSRF_TOKEN"]
    return demo["client"].post(f"{demo['url']}/compare/summarize?ids={ids}",
                               data={"tip": tip, "csrf_token": token}, headers=headers)


def test_summarize_shows_an_extractive_summary_and_writes_nothing(demo):
    before = demo["path"].read_bytes()
    r = _summarize(demo, demo["b"], Origin="http://localhost", **{"HX-Request": "true"})
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert "Rewrite it properly" in html and "Rewrote the module." in html and "totals.py" in html
    assert "Fix the failing test" not in html  # the goal is the first instruction after the divergence
    assert demo["path"].read_bytes() == before


def test_summarize_without_javascript_answers_the_whole_page(demo):
    html = _summarize(demo, demo["a"], Origin="http://localhost").get_data(as_text=True)
    assert html.count('class="cmp-branch-head') == 2
    assert "Keep it minimal: one line" in html.split('class="cmp-summaries"')[1].split("cmp-shared")[0]


def test_a_branch_that_ends_at_the_common_ancestor_has_nothing_to_summarize(demo):
    r = _summarize(demo, demo["shared"], ids=f"{demo['shared']},{demo['a']}", Origin="http://localhost",
                   **{"HX-Request": "true"})
    assert r.status_code == 200 and "nothing to summarize" in r.get_data(as_text=True)


def test_summarize_refuses_other_origins_and_unknown_tips(demo):
    assert _summarize(demo, demo["b"], Origin="http://evil.example").status_code == 403
    assert _summarize(demo, demo["c"], Origin="http://localhost").status_code == 404  # not compared


def test_export_is_one_self_contained_attachment(demo):
    asked = demo["client"].get(f"{demo['url']}/compare/export?ids={demo['a']},{demo['b']}")  # a link that skips the review leads to it
    assert asked.status_code == 302 and f"/compare/export/review?ids={demo['a']},{demo['b']}" in asked.headers["Location"].replace("%2C", ",")
    r = demo["client"].get(f"{demo['url']}/compare/export?reviewed=1&ids={demo['a']},{demo['b']},{demo['c']}")
    assert r.status_code == 200
    assert re.fullmatch(r'attachment; filename="comparison-[\w-]+-3-branches\.html"', r.headers["Content-Disposition"])
    html = r.get_data(as_text=True)
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)  # nothing fetched from a network
    assert not re.search(r"url\(\s*['\"]?(https?:)?//|@import", html, re.I)
    assert not re.search(r"<link\b", html, re.I)
    assert "<style>" in html and ".cmp-table" in html  # styles inline
    assert html.count('class="cmp-branch-head') == 3
    assert "Changed one line." in html and "Rewrote the module." in html  # turns in full
    assert 'href="/' not in html  # no links into the app, which is not there when the file is opened


def _heads(html):
    return re.findall(r'<th scope="col" class="cmp-branch-head([^"]*)" data-tip="([^"]+)"', html)


def test_the_outcome_row_comes_first_with_each_final_answer_and_its_status(demo):
    html = demo["client"].get(f"{demo['url']}/compare?ids={demo['a']},{demo['b']}").get_data(as_text=True)
    body = html.split('<tbody>', 2)[2]  # the side-by-side table (the figures matrix comes before it)
    first_row = body.split("</tr>")[0]
    assert 'class="cmp-outcome"' in first_row
    assert "Changed one line." in first_row and "Rewrote the module." in first_row
    assert first_row.count('data-status="waiting_tool"') == 2  # both end on tool calls without results
    # the answer differs from the baseline's: a word diff behind a toggle, the answer itself shown
    assert re.search(r'<details class="diff-toggle"><summary>word diff against branch 1</summary>', first_row)


def test_baseline_order_alignment_and_folded_columns_live_in_the_url(demo):
    client, url, a, b, c = demo["client"], demo["url"], demo["a"], demo["b"], demo["c"]
    page = client.get(f"{url}/compare?ids={a},{b},{c}").get_data(as_text=True)
    assert [(cls.strip(), tip) for cls, tip in _heads(page)] == [("baseline", a), ("", b), ("", c)]
    links = {}
    for m in re.finditer(r'<a href="([^"]+)" data-tool="(\w+)"', page):
        links.setdefault(m[2], unescape(m[1]).replace("%2C", ","))
    # "baseline" on branch 2 (the first such link), "→" on branch 1, "collapse" on branch 1
    assert links["baseline"].endswith(f"/compare?ids={a},{b},{c}&base={b}")
    assert links["right"].endswith(f"/compare?ids={b},{a},{c}&base={a}")  # the baseline moves with its branch
    assert links["fold"].endswith(f"/compare?ids={a},{b},{c}&fold={a}")

    based = client.get(links["baseline"]).get_data(as_text=True)
    assert [cls.strip() for cls, _ in _heads(based)] == ["", "baseline", ""]
    assert "word diff against branch 2" in based and "word diff against branch 1" not in based

    moved = client.get(links["right"]).get_data(as_text=True)
    assert [(cls.strip(), tip) for cls, tip in _heads(moved)] == [("", b), ("baseline", a), ("", c)]

    folded = client.get(links["fold"]).get_data(as_text=True)
    assert [cls.strip() for cls, _ in _heads(folded)] == ["folded baseline", "", ""]
    assert "Changed one line." not in folded.split('class="cmp-table"')[1]  # its cells are empty
    export = download_after_review(client, unescape(re.search(r'id="export-comparison" href="([^"]+)"', folded)[1]))
    export = export.get_data(as_text=True)
    assert "fold=" in re.search(r'id="export-comparison" href="([^"]+)"', folded)[1]
    assert "Changed one line." in export and "folded" not in "".join(cls for cls, _ in _heads(export))
    unfold = unescape(re.search(r'<a class="cmp-unfold" href="([^"]+)"', folded)[1])
    assert unfold.replace("%2C", ",").endswith(f"/compare?ids={a},{b},{c}")

    by_number = client.get(f"{url}/compare?ids={a},{b}&align=number").get_data(as_text=True)
    assert '<strong aria-current="true">by number</strong>' in by_number
    assert client.get(f"{url}/compare?ids={a},{b}&align=bogus&base=nope&fold=x").status_code == 200


def test_compare_every_leaf_sorts_by_each_figure(demo):
    client, url = demo["client"], demo["url"]
    html = client.get(f"{url}/compare/all").get_data(as_text=True)
    assert "<strong>3 branches</strong>" in html
    leaves = re.findall(r'<tr class="branch-row[^"]*" data-leaf="([^"]+)">', html)
    assert sorted(leaves) == sorted([demo["a"], demo["b"], demo["c"]])
    turns = client.get(f"{url}/compare/all?sort=calls&order=asc").get_data(as_text=True)
    calls = [int(x) for x in re.findall(r'data-figure="calls">(\d+)<', turns)]
    assert calls == sorted(calls) and calls[-1] == 1 and calls[0] == 0
    assert 'aria-sort="ascending"' in turns
    assert client.get(f"{url}/compare/all?sort=nonsense").status_code == 200
    form = re.search(r'<form class="compare-form" method="get" action="([^"]+)">', html)
    assert unescape(form[1]) == f"{url}/compare"


def test_the_branches_tab_links_to_every_leaf_and_shows_figures_from_the_walk(demo):
    html = demo["client"].get(f"{demo['url']}?tab=branches").get_data(as_text=True)
    assert "Compare every leaf" in html
    assert html.count('class="branch-row') == 3


def test_many_branches_the_tab_lists_the_latest_and_every_leaf_lists_them_all(tmp_path):
    import samplegen

    header, entries = samplegen.synthetic_session(12_000, seed=5, branches=305, tool_result_sizes=(40, 80))
    samplegen.write_jsonl(tmp_path / "many.jsonl", header, entries)
    client = create_app(tmp_path).test_client()
    leaves = Session.open(tmp_path / "many.jsonl").tree.leaves()
    assert len(leaves) > 300
    tab = client.get("/s/many.jsonl/-/panel/branches", headers={"HX-Request": "true"}).get_data(as_text=True)
    ticked = re.findall(r'type="checkbox" name="id" value="([^"]+)"', tab)
    assert ticked == leaves[-300:]
    assert f"The 300 latest of {len(leaves)} branches" in tab
    every = client.get("/s/many.jsonl/compare/all?sort=depth&order=asc").get_data(as_text=True)
    assert len(re.findall(r'data-leaf="([^"]+)"', every)) == len(leaves)
    depths = [int(d) for d in re.findall(r'data-figure="depth">(\d+)<', every)]
    assert depths == sorted(depths)
