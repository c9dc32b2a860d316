"""The planted-secret corpus (tests/redaction_corpus.py) through every share path, with zero
leaks: the redacted copy, `export FILE --redact`, `export ROOT -o DIR --redact` (pages, index,
file names), `compare --html --redact`, and on the web the session's and a branch's export, the
comparison's export and the print view, each reached through its review as a person reaches it."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from tests.redaction_corpus import ORDINARY, PLANTED, leaked, write_corpus
from tests.share_form import download_after_review, review_form
from webapp.cli import main
from webapp.core.redact import Choice, redacted
from webapp.core.session import Session
from webapp.web.app import create_app

NAMES = ["file-name", "folder-name"]  # (a review page, seen by the person only, shows the session's own path)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    root = tmp_path_factory.mktemp("corpus") / "root"
    return root, write_corpus(root)


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _site(folder: Path) -> str:
    """Every file of a written folder, and their names."""
    files = [p for p in folder.rglob("*") if p.is_file()]
    return "\n".join([p.relative_to(folder).as_posix() for p in files] + [p.read_text(errors="replace") for p in files])


def test_the_corpus_plants_every_value_and_the_check_finds_each(corpus):
    root, paths = corpus
    planted = set()
    for path in paths.values():
        planted |= set(leaked(_site(path.parent) + _rel(root, path)))
    assert planted == set(PLANTED)


def test_the_redacted_copies_hold_none_and_keep_ordinary_text(corpus):
    root, paths = corpus
    for name, path in paths.items():
        with redacted(path, Choice(), name=_rel(root, path)) as (copy, _):
            written = _site(copy.parent)
            assert leaked(written) == [], name
            assert Session.open(copy).tree.entries, name  # still a session
    with redacted(paths["pi"], Choice()) as (copy, _):
        for text in ORDINARY:
            assert text in unescape(copy.read_text()).replace('\\"', '"'), text


def test_the_command_line_export_of_each_session(corpus, tmp_path, capsys, monkeypatch):
    root, paths = corpus
    for name, path in paths.items():
        out = tmp_path / f"{name}.html"
        assert main(["export", str(path), "-o", str(out), "--redact"]) == 0
        said = capsys.readouterr()
        assert leaked(out.read_bytes()) == [] and leaked(said.err) == [], name  # the file, and the review printed
    monkeypatch.chdir(tmp_path)
    assert main(["export", str(paths["named"]), "--redact"]) == 0  # the default name is the redacted copy's
    written = [p.name for p in tmp_path.glob("deploy-*.html")]
    assert written == ["deploy-[REDACTED:github-token#1].html"]


def test_the_project_export(corpus, tmp_path, capsys):
    root, _ = corpus
    site = tmp_path / "site"
    assert main(["export", str(root), "-o", str(site), "--redact"]) == 0
    said = capsys.readouterr()
    assert leaked(_site(site)) == []  # every page, the index, the styles, and every file's name
    assert leaked(said.out) == [] and leaked(said.err, [n for n in PLANTED if n not in NAMES]) == []
    assert len(list((site / "sessions").glob("*.html"))) == 5


def test_compare_html(corpus, tmp_path):
    _, paths = corpus
    tree = Session.open(paths["pi"]).tree
    out = tmp_path / "cmp.html"
    assert main(["compare", str(paths["pi"]), *tree.leaves()[:2], "--html", str(out), "--redact"]) == 0
    assert leaked(out.read_bytes()) == []
    html = out.read_text()
    assert 'class="redaction-note"' in html
    assert "Deploy please." in html and "max_tokens: 4096" in html  # the rest reads as it was (no one-letter value replaced)


@pytest.fixture(scope="module")
def web(corpus):
    root, paths = corpus
    return create_app(root).test_client(), root, paths


@pytest.mark.parametrize("name", ["pi", "pi-structure", "claude", "named", "codex"])
def test_the_web_shares_after_their_reviews(web, name):
    client, root, paths = web
    rel = _rel(root, paths[name])
    tree = Session.open(paths[name]).tree
    leaf = tree.conversation_leaf(tree.active_leaf)
    shares = [f"/s/{rel}/export/review", f"/s/{rel}/export/review?leaf={leaf}", f"/s/{rel}/print/review?leaf={leaf}"]
    if len(tree.leaves()) >= 2:
        shares.append(f"/s/{rel}/compare/export/review?ids={','.join(tree.leaves()[:2])}")
    for url in shares:
        review = client.get(url)
        assert review.status_code == 200, url
        assert leaked(review.data, [n for n in PLANTED if n not in NAMES]) == [], url  # it shows what it hides by 4 characters
        shared = client.get(review_form(review.get_data(as_text=True)))
        assert shared.status_code == 200, url
        assert leaked(shared.data) == [], url
        assert re.search(r'<p class="redaction-note" role="note">Redacted: \d+ values? \(', shared.get_data(as_text=True)), url


def test_a_kept_value_is_the_only_one_left(web):
    client, root, paths = web
    rel = _rel(root, paths["pi"])
    tree = Session.open(paths["pi"]).tree
    review = client.get(f"/s/{rel}/compare/export/review?ids={','.join(tree.leaves()[:2])}").get_data(as_text=True)
    tag = re.search(r'name="keep" value="(\[REDACTED:stripe-key#\d+\])"[^>]*>[^<]*</label></td>\s*<td><code>[^<]*</code></td><td>stripe-key</td>'
                    r'\s*<td class="share-found">(?:<span class="share-before">…The user deployed with </span>)', review)
    assert tag, "the compaction summary's Stripe key is listed with what precedes it"
    shared = client.get(review_form(review, keep=(unescape(tag[1]),)))
    assert leaked(shared.data) == ["compaction-summary"]


def test_every_share_link_leads_to_its_review(web):
    client, root, paths = web
    rel = _rel(root, paths["pi"])
    tree = Session.open(paths["pi"]).tree
    a, b = tree.leaves()[:2]
    for share, review in ((f"/s/{rel}/export", "/export/review"), (f"/s/{rel}/print?leaf={a}", "/print/review?leaf="),
                          (f"/s/{rel}/compare/export?ids={a},{b}", "/compare/export/review?ids=")):
        r = client.get(share)
        assert r.status_code == 302 and review in r.headers["Location"], share
    page = client.get(f"/s/{rel}/compare?ids={a},{b}").get_data(as_text=True)
    assert re.search(r'id="export-comparison" href="[^"]*/compare/export/review\?', page)
    transcript = client.get(f"/s/{rel}?tab=transcript").get_data(as_text=True)
    assert f'href="/s/{rel}/print/review?leaf=' in unescape(transcript)


def test_a_session_nested_1000_deep_is_shared(web, tmp_path):
    client, root, paths = web
    rel = _rel(root, paths["pi-structure"])
    r = download_after_review(client, f"/s/{rel}/export/review")
    assert r.status_code == 200 and leaked(r.data, ["nested-1000-deep"]) == []
    assert "[REDACTED:" in r.get_data(as_text=True)
    out = tmp_path / "deep.html"
    assert main(["export", str(paths["pi-structure"]), "-o", str(out), "--redact"]) == 0
    assert leaked(out.read_bytes(), ["nested-1000-deep"]) == []
