"""Memory a server keeps is bounded and given back: following a growing file keeps the views of
its latest version only, and the index page's content filter keeps at most its budget of text
(a file bigger than a quarter of it is read through and kept nowhere) when it reads the files
itself, without the search index."""

from __future__ import annotations

import pytest

from tests.conftest import Builder
from webapp.web import search
from webapp.web.app import create_app


def test_following_a_growing_file_keeps_only_the_latest_versions_views(tmp_path):
    b = Builder()
    b.user("q", id="u0")
    b.assistant("a", id="a0")
    path = b.write(tmp_path / "s.jsonl")
    app = create_app(tmp_path)
    client = app.test_client()
    views = app.extensions["session_store"].views
    for i in range(1, 8):
        b.user(f"q{i}", id=f"u{i}")  # another program appends
        b.write(path)
        for url in ("/s/s.jsonl", "/s/s.jsonl/-/version", "/s/s.jsonl/compare/all"):
            assert client.get(url).status_code == 200
        versions = {k[2] for k in views._data if len(k) > 2 and k[1] == "s.jsonl" and k[0] != "drawing"}
        assert len(versions) == 1, versions


def _without_corpus(root):
    """The index page as it reads the files (when the search index cannot be opened)."""
    app = create_app(root)
    app.extensions["corpus"] = None
    return app.test_client()


@pytest.fixture
def small_budget(monkeypatch):
    monkeypatch.setattr(search, "FILE_TEXT_CHARS", 40_000)
    search._file_indexes.clear()
    yield
    search._file_indexes.clear()


def test_the_index_filter_keeps_at_most_its_budget_of_text(tmp_path, small_budget):
    for i in range(12):
        b = Builder()
        b.user(f"file {i} " + "words " * 1_000, id="u1")
        b.write(tmp_path / f"s{i}.jsonl")
    client = _without_corpus(tmp_path)
    html = client.get("/?q=file 7 ").get_data(as_text=True)
    assert "s7.jsonl" in html and "s3.jsonl" not in html
    assert 0 < search.file_text_held() <= 40_000


def test_a_file_bigger_than_a_quarter_of_the_budget_is_searched_and_kept_nowhere(tmp_path, small_budget):
    b = Builder()
    b.user("needle " + "hay " * 5_000, id="u1")
    b.write(tmp_path / "big.jsonl")
    client = _without_corpus(tmp_path)
    assert "big.jsonl" in client.get("/?q=NEEDLE").get_data(as_text=True)
    assert "big.jsonl" not in client.get("/?q=absent").get_data(as_text=True)
    assert search.file_text_held() == 0
