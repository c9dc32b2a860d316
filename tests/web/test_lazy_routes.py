"""Lazy entries through the app: a session file rewritten in place, replaced or deleted
while the server holds it gives the new content or a clear page, never a 500 or another line."""

from __future__ import annotations

import os

import pytest

from tests.conftest import Builder
from webapp.web.app import create_app


def session_bytes(text: str, n: int = 6) -> bytes:
    b = Builder()
    for i in range(n):
        b.user(f"{text} {i}", id=f"u{i}")
    return b.data()


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "sessions"
    root.mkdir()
    path = root / "s.jsonl"
    path.write_bytes(session_bytes("first words"))
    client = create_app(root).test_client()
    assert "first words 3" in client.get("/s/s.jsonl/-/raw?id=u3").get_data(as_text=True)
    return client, path


def views(client) -> list:
    return [client.get("/s/s.jsonl"), client.get("/s/s.jsonl/-/raw?id=u4"),
            client.get("/s/s.jsonl/-/panel/context?node=u4", headers={"HX-Request": "true"})]


def test_a_file_rewritten_in_place_shows_its_new_lines(served):
    client, path = served
    with open(path, "r+b") as f:  # the same inode, lines of other lengths
        f.write(session_bytes("other, longer words"))
    pages = views(client)
    assert [r.status_code for r in pages] == [200, 200, 200]
    assert "other, longer words 4" in pages[1].get_data(as_text=True)
    assert "first words" not in pages[1].get_data(as_text=True)


def test_a_replaced_file_shows_the_new_one(served, tmp_path):
    client, path = served
    new = tmp_path / "new.jsonl"
    new.write_bytes(session_bytes("replacement"))
    os.replace(new, path)
    pages = views(client)
    assert [r.status_code for r in pages] == [200, 200, 200]
    assert "replacement 4" in pages[1].get_data(as_text=True)


def test_a_deleted_file_is_a_clear_not_found(served):
    client, path = served
    path.unlink()
    for r in views(client):
        assert r.status_code == 404
        assert "s.jsonl" in r.get_data(as_text=True)


def test_a_line_that_changed_between_the_refresh_and_the_read_is_a_clear_page(served, monkeypatch):
    client, path = served
    with open(path, "r+b") as f:  # the same size and time as the app last saw: it does not notice
        st = os.stat(path)
        data = f.read()
        f.seek(0)
        f.write(data.replace(b'"u4"', b'"x4"', 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    monkeypatch.setattr("webapp.core.session.Session._rewritten", lambda self: False)  # (nor its fingerprint)
    r = client.get("/s/s.jsonl/-/raw?id=u4")
    assert r.status_code == 409
    assert "changed on disk since it was read" in r.get_data(as_text=True)
