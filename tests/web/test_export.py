"""The whole-session export: one self-contained file, every branch, escaped; and its CLI."""

from __future__ import annotations

import re

from tests.web.test_transcript_routes import app_and_ids  # noqa: F401 - the fixture
from webapp.cli import main


def test_the_export_holds_every_branch_once_and_fetches_nothing(app_and_ids):  # noqa: F811
    app, ids = app_and_ids
    asked = app.test_client().get("/s/--proj--/s.jsonl/export?leaf=" + ids["hidden"])  # a link that skips the review leads to it
    assert asked.status_code == 302 and asked.headers["Location"].endswith(f"/s/--proj--/s.jsonl/export/review?leaf={ids['hidden']}")
    r = app.test_client().get("/s/--proj--/s.jsonl/export?reviewed=1")
    assert r.status_code == 200 and r.headers["Content-Disposition"].startswith("attachment; filename=\"session-")
    html = r.text
    assert html.count('<section class="branch"') == 2
    for text in ("Please fix the rounding", "All green", "another way", "the quokka lives here", "Summary of the work"):
        assert html.count(text) >= 1, text
    assert html.count(f'data-entry="{ids["u1"]}"') == 1  # shared entries are shown once
    assert not re.search(r'(?:src|href)="(?:https?:)?//', html)  # nothing to fetch
    assert "<link" not in html and 'src="' not in html.replace('src="data:', "")
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    assert f'href="#t-e-{ids["side"]}"' in html  # the drawing's nodes lead to their entries


def test_a_branch_export(app_and_ids):  # noqa: F811
    app, ids = app_and_ids
    html = app.test_client().get(f"/s/--proj--/s.jsonl/export?reviewed=1&leaf={ids['hidden']}").text
    assert html.count('<section class="branch"') == 1
    assert "the quokka lives here" in html and f'data-entry="{ids["a2"]}"' not in html
    assert app.test_client().get("/s/--proj--/s.jsonl/export?reviewed=1&leaf=nope").status_code == 404


def drawing(html: str) -> str:
    return html[html.index("<svg"):html.index("</svg>")]


def drawn_ids(svg: str) -> set[str]:
    return set(re.findall(r'<g id="(e-[^"]+)" class="node', svg))


def test_a_branch_export_draws_only_that_branch_with_its_fork_points_marked(app_and_ids):  # noqa: F811
    app, ids = app_and_ids
    client = app.test_client()
    whole = drawing(client.get("/s/--proj--/s.jsonl/export?reviewed=1").text)
    assert {f"e-{ids[k]}" for k in ("u2", "a2", "side", "hidden")} <= drawn_ids(whole) and 'id="more-' not in whole
    one = client.get(f"/s/--proj--/s.jsonl/export?reviewed=1&leaf={ids['hidden']}").text
    assert "<dt>branches</dt><dd>2 (this export holds one)</dd>" in one  # the session's, not the file's
    svg = drawing(one)
    assert drawn_ids(svg) == {f"e-{ids[k]}" for k in ("u1", "a1", "side", "side_r", "hidden")}
    fork = re.search(r'<g id="more-e-' + ids["a1"] + r'" class="node segment more">(.*?)</g>\n</g>', svg, re.S).group(1)
    assert "⊞ 1 more branch here" in fork and "4 entries" in fork  # r1, the compaction, u2, a2
    assert f'xlink:href="#t-e-{ids["a1"]}"' in fork and "1 other branch forks here: this file holds one branch" in fork
    assert "click to draw" not in svg
    main = drawing(client.get(f"/s/--proj--/s.jsonl/export?reviewed=1&leaf={ids['a2']}").text)
    assert f"e-{ids['side']}" not in drawn_ids(main) and f"e-{ids['a2']}" in drawn_ids(main)
    assert "3 entries" in main  # the side branch, left out, counted at its fork point


def test_the_export_command(app_and_ids, tmp_path, capsys, monkeypatch):  # noqa: F811
    app, ids = app_and_ids
    session = next(p for p in (tmp_path / "sessions").rglob("*.jsonl"))
    before = session.read_bytes()
    out = tmp_path / "out.html"
    assert main(["export", str(session), "-o", str(out)]) == 0
    assert "All green" in out.read_text() and "another way" in out.read_text()
    assert f"wrote {out}" in capsys.readouterr().out
    monkeypatch.chdir(tmp_path / "sessions")
    assert main(["export", str(session), "--leaf", ids["hidden"]]) == 0  # default: in the current folder
    assert "the quokka lives here" in (tmp_path / "sessions" / (session.stem + ".html")).read_text()
    assert not session.with_suffix(".html").exists()  # nothing written into the session's folder
    assert main(["export", str(session), "--leaf", ids["side"][-2:] + "zz"]) == 2
    assert "error" in capsys.readouterr().err
    assert session.read_bytes() == before  # never written to


def test_an_export_whose_drawing_times_out_is_the_page_without_it(app_and_ids, monkeypatch):  # noqa: F811
    from webapp.web import export
    from webapp.web.graph import DotTimeout

    def slow(*args, **kwargs):
        raise DotTimeout("dot took longer than 8 s")

    monkeypatch.setattr(export, "render_svg", slow)
    app, ids = app_and_ids
    r = app.test_client().get("/s/--proj--/s.jsonl/export?reviewed=1")
    assert r.status_code == 200 and "The tree drawing took too long (dot took longer than 8 s)" in r.text
