"""The whole-session export: one self-contained file, every branch, escaped; and its CLI."""

from __future__ import annotations

import re

from tests.web.test_transcript_routes import app_and_ids  # noqa: F401 - the fixture
from webapp.cli import main


def test_the_export_holds_every_branch_once_and_fetches_nothing(app_and_ids):  # noqa: F811
    app, ids = app_and_ids
    r = app.test_client().get("/s/--proj--/s.jsonl/export")
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
    html = app.test_client().get(f"/s/--proj--/s.jsonl/export?leaf={ids['hidden']}").text
    assert html.count('<section class="branch"') == 1
    assert "the quokka lives here" in html and f'data-entry="{ids["a2"]}"' not in html
    assert app.test_client().get("/s/--proj--/s.jsonl/export?leaf=nope").status_code == 404


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
