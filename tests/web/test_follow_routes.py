"""The version route live follow polls, and the note a rewritten file gets."""

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


def test_the_events_stream_tells_the_version_at_once_and_when_the_file_changes(tmp_path, monkeypatch):
    import time

    import orjson

    from webapp.web import follow

    monkeypatch.setattr(follow, "LIFETIME", 3.0)  # the stream ends on its own (the browser reopens it)
    slept: list[float] = []  # the stream's own waits: what it takes to look, whatever the machine's load

    class Clock:
        monotonic = staticmethod(time.monotonic)

        @staticmethod
        def sleep(seconds):
            slept.append(seconds)
            time.sleep(seconds)

    monkeypatch.setattr(follow, "time", Clock)
    b = Builder()
    b.user("hello", id="u1")
    path = b.write(tmp_path / "s.jsonl")
    client = create_app(tmp_path).test_client()
    r = client.get("/s/s.jsonl/-/events", buffered=False)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    chunks = iter(r.response)
    assert next(chunks).decode() == "retry: 1000\n\n"
    first = next(chunks).decode()
    assert first.startswith("event: version\ndata: ")
    told = orjson.loads(first.split("data: ", 1)[1])
    assert told == client.get("/s/s.jsonl/-/version").get_json()
    entry = Session.open_for_append(path).append({"type": "message", "message": {"role": "assistant", "content": "hi"}})
    slept.clear()
    second = orjson.loads(next(chunks).decode().split("data: ", 1)[1])
    assert 0 < sum(slept) < 1.0  # the stream looked within a second
    assert second["activeLeaf"] == entry["id"] and second["entries"] == 2
    assert list(chunks) == []  # nothing more changed: no event until the stream ends
    r.close()
