"""Sharing: the export buttons lead to a review of what redaction replaces; the download is
redacted by default, says so on its first screen, and holds none of the planted secrets; the
command line does the same for `export` and `compare --html`."""

from __future__ import annotations

import re
from pathlib import Path
from html import unescape

import pytest

from tests.redaction_fixture import SECRETS, leaked, write_secret_session
from webapp.cli import main
from webapp.web.app import create_app

REL = "--proj--/s.jsonl"


@pytest.fixture
def shared(tmp_path):
    root = tmp_path / "sessions"
    (root / "--proj--").mkdir(parents=True)
    ids = write_secret_session(root / "--proj--" / "s.jsonl")
    return create_app(root), root / "--proj--" / "s.jsonl", ids


def test_the_export_buttons_lead_to_the_review(shared):
    app, _, ids = shared
    page = app.test_client().get(f"/s/{REL}?tab=transcript&node={ids['a3']}").text
    assert f'href="/s/{REL}/export/review"' in page and f'href="/s/{REL}/export/review?leaf={ids["a3"]}"' in page


def test_the_review_lists_every_redaction_with_redaction_on(shared):
    app, _, _ = shared
    r = app.test_client().get(f"/s/{REL}/export/review")
    assert r.status_code == 200
    html = unescape(r.text)
    assert re.search(r'<input type="checkbox" name="redact" value="1" id="share-redact" checked>', r.text)
    for tag in ("[REDACTED:aws-key#1]", "[REDACTED:github-token#1]", "[REDACTED:private-key#1]", "[REDACTED:url-password#1]",
                "[REDACTED:secret-assignment#1]", "[REDACTED:slack-token#1]", "[REDACTED:home#1]"):
        assert f'name="keep" value="{tag}"' in html, tag
    assert "<code>AKIA…</code>" in html and "s.jsonl line " in html
    # each row says what precedes the value (the name it is assigned to), and where else it is
    assert re.search(r'<span class="share-before">…AWS_ACCESS_KEY_ID=</span><code>AKIA…</code>', html)
    row = re.search(r'<td><code>\[REDACTED:github-token#1\]</code></td><td>github-token</td>(.*?)</tr>', html, re.S)[1]
    assert "line 2 (content)" in row and "<summary>1 more place</summary>" in row and "line 12 (label)" in row
    assert leaked(r.data) == []  # the review itself shows only the first characters


def test_the_download_is_redacted_and_says_so_on_its_first_screen(shared):
    app, path, _ = shared
    before = path.read_bytes()
    r = app.test_client().get(f"/s/{REL}/export?redact=1&reviewed=1")
    assert r.status_code == 200 and r.headers["Content-Disposition"].startswith("attachment;")
    assert leaked(r.data) == []
    note = re.search(r'<p class="redaction-note" role="note">(.*?)</p>', r.text).group(1)
    assert note.startswith("Redacted: ") and "found by detect-secrets" in note
    assert r.text.index("redaction-note") < r.text.index("export-layout")  # before everything else
    assert "[REDACTED:stripe-key#1]" in r.text  # in the title (the session's name) too
    assert "<title>Deploy [REDACTED:stripe-key#1]" in r.text
    assert path.read_bytes() == before  # the session is never written to


def test_kept_values_and_extra_rules_reach_the_download(shared):
    app, _, ids = shared
    r = app.test_client().get(f"/s/{REL}/export?redact=1&reviewed=1&keep=[REDACTED:aws-key%231]&rule=home"
                              f"&patterns=db%5C.internal&leaf={ids['a3']}")
    assert leaked(r.data) == ["aws-key"]
    assert "/home/ana" not in r.text and "db.internal" not in r.text and "[REDACTED:pattern#1]" in r.text
    assert "1 kept as they were by choice" in r.text


def test_unredacted_only_when_asked_and_bad_patterns_are_a_clear_400(shared):
    app, _, _ = shared
    assert SECRETS["aws-key"] in app.test_client().get(f"/s/{REL}/export?reviewed=1").text
    r = app.test_client().get(f"/s/{REL}/export/review?reviewed=1&redact=1&patterns=(")
    assert r.status_code == 400 and "is not a valid regular expression" in unescape(r.text)


def test_the_command_line_reviews_then_writes_a_redacted_file(shared, tmp_path, capsys):
    _, path, ids = shared
    out = tmp_path / "out.html"
    assert main(["export", str(path), "--review"]) == 0
    listed = capsys.readouterr().out
    assert "[REDACTED:aws-key#1]  aws-key  'AKIA…'  s.jsonl line " in listed and not list(tmp_path.glob("*.html"))
    assert leaked(listed.encode()) == []
    assert main(["export", str(path), "-o", str(out), "--redact", "--keep", "hex-entropy#9"]) == 2
    assert "no redaction has that tag" in capsys.readouterr().err
    assert main(["export", str(path), "-o", str(out), "--redact", "--redact-rule", "email"]) == 0
    assert leaked(out.read_bytes()) == [] and "redaction-note" in out.read_text()
    assert "[REDACTED:aws-key#1]" in capsys.readouterr().err  # the review, printed before writing
    cmp = tmp_path / "cmp.html"
    assert main(["compare", str(path), ids["a3"], ids["side"], "--html", str(cmp), "--redact"]) == 0
    assert leaked(cmp.read_bytes()) == [] and 'class="redaction-note"' in cmp.read_text()
    assert main(["compare", str(path), ids["a3"], ids["side"], "--html", str(tmp_path / "plain.html")]) == 0
    assert leaked((tmp_path / "plain.html").read_bytes())  # (the check finds them when they are there)


def test_the_command_line_redacts_home_paths_by_default_as_the_web_review_ticks_them(shared, tmp_path, capsys):
    _, path, _ = shared
    assert "/home/ana" in path.read_text()
    out = tmp_path / "out.html"
    assert main(["export", str(path), "-o", str(out), "--redact"]) == 0
    assert "/home/ana" not in out.read_text() and "[REDACTED:home#1]" in capsys.readouterr().err
    assert main(["export", str(path), "--review"]) == 0
    assert "[REDACTED:home#1]  home  " in capsys.readouterr().out
    kept = tmp_path / "kept.html"
    assert main(["export", str(path), "-o", str(kept), "--redact", "--keep-home-paths"]) == 0
    assert "/home/ana" in kept.read_text() and "[REDACTED:home#" not in capsys.readouterr().err
    assert main(["export", str(path), "-o", str(kept), "--redact", "--keep-home-paths", "--redact-rule", "home"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "ask for opposite things" in err


def test_a_verdict_note_kept_in_the_data_folder_is_redacted_where_it_is_shown(tmp_path, monkeypatch, capsys):
    """A Claude Code file is never written: its verdicts live in the data folder, outside the
    copy that is redacted; their notes are scanned with it and shown redacted."""
    import shutil

    from tests.share_form import download_after_review
    from webapp.core.session import Session
    from webapp.core.verdicts import give_verdict

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    root = tmp_path / "sessions"
    (root / "-proj").mkdir(parents=True)
    path = root / "-proj" / "c.jsonl"
    shutil.copy(Path(__file__).parents[1] / "fixtures" / "claude-code" / "daaain_dag_compact_after_rewind.jsonl", path)
    session = Session.open(path)
    a, b = session.tree.leaves()[:2]
    token = "ghp_VerdictNoteXk9Qm2Vr7Lp4Ws8Zt1Nb6Hc3J"
    assert give_verdict(session, a, "winner", f"worked once I set {token}").where == "data folder"
    client = create_app(root).test_client()
    review = client.get(f"/s/-proj/c.jsonl/compare/export/review?ids={a},{b}").get_data(as_text=True)
    assert "a verdict&#39;s note" in review and "[REDACTED:github-token#1]" in review
    shared = download_after_review(client, f"/s/-proj/c.jsonl/compare/export/review?ids={a},{b}")
    assert token not in shared.get_data(as_text=True) and "worked once I set [REDACTED:github-token#1]" in shared.get_data(as_text=True)
    out = tmp_path / "cmp.html"
    assert main(["compare", str(path), a, b, "--html", str(out), "--redact"]) == 0
    assert token not in out.read_text() and "worked once I set [REDACTED:github-token#1]" in out.read_text()
    assert main(["compare", str(path), a, b, "--html", str(out)]) == 0
    assert token in out.read_text()  # (shown as it is when not redacted: the check finds it)


def test_the_download_after_its_review_does_not_scan_the_session_again(shared, monkeypatch):
    from tests.share_form import download_after_review
    from webapp.core import redact

    app, path, _ = shared
    scans = []
    real = redact.scan_into
    monkeypatch.setattr(redact, "scan_into", lambda *a, **k: scans.append(a[1]) or real(*a, **k))
    r = download_after_review(app.test_client(), f"/s/{REL}/export/review")
    assert r.status_code == 200 and leaked(r.data) == [] and scans == [path]
    with path.open("ab") as f:  # a session that changed is scanned again
        f.write(b'{"type":"message","id":"z9","parentId":null,"message":{"role":"user","content":"more"}}\n')
    assert download_after_review(app.test_client(), f"/s/{REL}/export/review").status_code == 200
    assert scans == [path, path]
