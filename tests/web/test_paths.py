"""Any file name, loops, over-long names and unreadable files, on the read side:
a clear page with the reason, never a 500."""

from __future__ import annotations

import os
import re
from html import unescape

import pytest

from tests.conftest import Builder
from webapp.core.storage import JsonlStorage
from webapp.web.app import create_app


def session_bytes(text: str) -> bytes:
    b = Builder()
    b.user(text, id="u1")
    return b.data()


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "sessions"
    (root / "--proj--").mkdir(parents=True)
    (root / "--proj--" / "plain.jsonl").write_bytes(session_bytes("plain one"))
    # a name that is not UTF-8, one with a %, and one in UTF-8 beyond ASCII
    with open(os.path.join(os.fsencode(root / "--proj--"), b"\xff\xfe.jsonl"), "wb") as f:
        f.write(session_bytes("the one with bytes for a name"))
    (root / "--proj--" / "50%.jsonl").write_bytes(session_bytes("the one with a percent"))
    (root / "--proj--" / "café.jsonl").write_bytes(session_bytes("the one with an accent"))
    os.symlink("loop.jsonl", root / "loop.jsonl")
    return root


@pytest.fixture
def client(root):
    return create_app(root).test_client()


def test_the_index_lists_every_name_and_each_link_opens_its_session(client):
    r = client.get("/")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    links = [unescape(u) for u in re.findall(r'href="(/s/[^"?]+)"', html)]
    opened = {}
    for url in set(links):
        page = client.get(url)
        assert page.status_code == 200, url
        opened[url] = page.get_data(as_text=True)
    texts = " ".join(opened.values())
    for text in ("plain one", "the one with bytes for a name", "the one with a percent", "the one with an accent"):
        assert text in texts
    assert "loop.jsonl" not in html  # a loop is not a session file


def test_a_name_of_any_bytes_opens_in_every_view(client):
    base = "/s/--proj--/%25FF%25FE.jsonl"
    for url in (base, base + "/-/panel/context?node=u1", base + "/-/raw?id=u1", base + "/-/panel/problems"):
        r = client.get(url, headers={"HX-Request": "true"} if "/-/" in url else {})
        assert r.status_code == 200, url


@pytest.mark.parametrize("url,reason", [
    ("/s/loop.jsonl", "leads to itself"),
    ("/s/loop.jsonl/-/raw?id=u1", "leads to itself"),
    ("/s/loop.jsonl/-/panel/context", "leads to itself"),
    ("/s/" + "a" * 300 + ".jsonl", "File name too long"),
    ("/s/--proj--/" + "é" * 200 + ".jsonl", "File name too long"),
])
def test_loops_and_long_names_are_a_404_with_the_reason(client, url, reason):
    r = client.get(url, follow_redirects=True)  # a fragment URL without htmx redirects to the page
    assert r.status_code == 404
    assert reason in r.get_data(as_text=True)


def test_an_unreadable_file_is_a_403_with_the_reason(client, monkeypatch):
    def refuse(self, offset):
        raise PermissionError(13, "Permission denied", str(self.path))

    monkeypatch.setattr(JsonlStorage, "read_chunks", refuse)  # (tests run as root: chmod would not do)
    r = client.get("/s/--proj--/plain.jsonl")
    assert r.status_code == 403
    assert "cannot be read (Permission denied)" in r.get_data(as_text=True)
    assert client.get("/s/--proj--/plain.jsonl/-/raw?id=u1").status_code == 403
