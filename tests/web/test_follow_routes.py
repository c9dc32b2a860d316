"""The version route live follow polls, and the note a rewritten file gets (#13.6, #14.13)."""

from __future__ import annotations

import os

from tests.conftest import Builder
from webapp.core.session import Session
from webapp.web.app import create_app


def test_the_version_changes_with_the_file_and_names_the_new_active_leaf(tmp_path):
    b = Builder()
    b.user("hello", id="u1")
    path = b.write(tmp_path / "s.jsonl")
    client = create_app(tmp_path).test_client()
    first = client.get("/s/s.jsonl/-/version").get_json()
    assert first["activeLeaf"] == "u1" and first["entries"] == 1
    assert client.get("/s/s.jsonl/-/version").get_json() == first  # nothing changed
    entry = Session.open_for_append(path).append({"type": "message", "message": {"role": "assistant", "content": "hi"}})
    second = client.get("/s/s.jsonl/-/version").get_json()
    assert second["version"] != first["version"]
    assert second["activeLeaf"] == entry["id"] and second["entries"] == 2


def test_a_file_rewritten_in_place_is_read_again_and_the_page_says_so(tmp_path):
    b = Builder()
    b.user("the old text", id="u1")
    path = b.write(tmp_path / "s.jsonl")
    client = create_app(tmp_path).test_client()
    assert "the old text" in client.get("/s/s.jsonl").get_data(as_text=True)
    new = Builder()
    new.user("the new text", id="n1")
    with open(path, "r+b") as f:  # same inode, written over
        f.write(new.data())
        f.truncate()
    os.utime(path, ns=(10**18, 10**18))
    html = client.get("/s/s.jsonl?node=n1").get_data(as_text=True)
    assert "the new text" in html and "the old text" not in html
    assert "rewritten in place" in html
