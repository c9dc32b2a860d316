"""Short ids in URLs: what the graph and `tree` show (eight characters, or any unique start or
end of an id, as the CLI takes) opens the entry; an ambiguous one says so."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from webapp.core.entries import short_id
from webapp.core.session import Session, create_session
from webapp.web.app import create_app


def msg(role, text):
    return {"type": "message", "message": {"role": role, "content": [{"type": "text", "text": text}]}}


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "sessions"
    path = create_session(root, "/w")
    s = Session.open(path)
    ids = [s.append(msg("user", "Fix the test"))["id"], s.append(msg("assistant", "Done."))["id"]]
    app = create_app(root)
    app.config["TESTING"] = True
    return app.test_client(), path.relative_to(root).as_posix(), ids


def test_a_short_node_id_opens_the_node(site):
    client, rel, ids = site
    full = ids[1]
    for short in (short_id(full), full[-5:]):
        r = client.get(f"/s/{rel}?node={short}&tab=context")
        assert r.status_code == 302
        query = parse_qs(urlsplit(r.headers["Location"]).query)
        assert query == {"node": [full], "tab": ["context"]}
        page = client.get(r.headers["Location"])
        assert page.status_code == 200 and full in page.get_data(as_text=True)


def test_short_ids_in_fragments_and_lists(site):
    client, rel, ids = site
    r = client.get(f"/s/{rel}/compare?ids={short_id(ids[0])},{short_id(ids[1])}")
    assert r.status_code == 302
    assert parse_qs(urlsplit(r.headers["Location"]).query)["ids"] == [f"{ids[0]},{ids[1]}"]
    r = client.get(f"/s/{rel}/-/panel/context?node={short_id(ids[0])}", headers={"HX-Request": "true"})
    assert r.status_code == 302 and ids[0] in r.headers["Location"]


def test_an_unknown_or_ambiguous_short_id_is_a_clear_404(site, tmp_path):
    client, rel, ids = site
    r = client.get(f"/s/{rel}?node=zzzzzzzz")
    assert r.status_code == 404 and "zzzzzzzz" in r.get_data(as_text=True)
    # Two ids with one same start (written by hand: pi makes its ids at random).
    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"},
             {**msg("user", "q"), "id": "abcd0001", "parentId": None, "timestamp": "2026-01-01T00:00:01Z"},
             {**msg("assistant", "a"), "id": "abcd0002", "parentId": "abcd0001", "timestamp": "2026-01-01T00:00:02Z"}]
    (tmp_path / "sessions" / "twins.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = client.get("/s/twins.jsonl?node=abcd")
    assert r.status_code == 404 and "could be 2 entries" in r.get_data(as_text=True)
    r = client.get("/s/twins.jsonl?node=0002")
    assert r.status_code == 302 and "node=abcd0002" in r.headers["Location"]


def test_short_ids_in_a_path_and_in_the_context_diff(site, tmp_path):
    client, rel, ids = site
    r = client.get(f"/s/{rel}/context/diff?a={short_id(ids[0])}&b={short_id(ids[1])}")
    assert r.status_code == 302
    assert parse_qs(urlsplit(r.headers["Location"]).query) == {"a": [ids[0]], "b": [ids[1]]}
    lines = [{"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"},
             {**msg("user", "q"), "id": "u0000001", "parentId": None, "timestamp": "2026-01-01T00:00:01Z"},
             {"type": "compaction", "id": "c0000002", "parentId": "u0000001", "timestamp": "2026-01-01T00:00:02Z",
              "summary": "s", "firstKeptEntryId": "u0000001", "tokensBefore": 10}]
    (tmp_path / "sessions" / "compacted.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = client.get("/s/compacted.jsonl/context/compaction/c000")
    assert r.status_code == 302 and urlsplit(r.headers["Location"]).path == "/s/compacted.jsonl/context/compaction/c0000002"
