"""Crafted query values and header types answer 4xx or a page, never a 500: digits that are not
ASCII (`"²".isdigit()` is true, `int("²")` fails), a parameter the redirect also sets, an empty
node, and a header whose `type` is a list or an object."""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import Builder
from webapp.web.app import create_app


@pytest.fixture
def client(tmp_path):
    b = Builder()
    b.user("hello", id="u1")
    b.assistant("hi", id="a1")
    b.write(tmp_path / "s.jsonl")
    rest = b.data().split(b"\n", 1)[1]
    for name, kind in (("list", ["session"]), ("object", {"a": 1})):
        (tmp_path / f"h-{name}.jsonl").write_bytes(orjson.dumps({"type": kind, "version": 3, "id": "x"}) + b"\n" + rest)
    return create_app(tmp_path).test_client()


@pytest.mark.parametrize("url, status", [
    ("/s/s.jsonl/present?turn=%C2%B2", 404),
    ("/s/s.jsonl/-/fork-form?node=&position=at", 400),
])
def test_crafted_values_are_refused_not_a_500(client, url, status):
    assert client.get(url).status_code == status


@pytest.mark.parametrize("query", ["start=%C2%B2", "start=0&size=%C2%B2", "start=99999999999999999999999"])
def test_a_transcript_window_with_digits_that_are_not_ascii_is_a_400(client, query):
    r = client.get(f"/s/s.jsonl/-/transcript?node=a1&{query}", headers={"HX-Request": "true"})
    assert r.status_code == 400


@pytest.mark.parametrize("query", ["node=a1&tab=x", "node=a1&rel=other.jsonl", "node=a1&_external=1", "start=%C2%B2"])
def test_a_transcript_window_opened_without_htmx_redirects_to_the_page(client, query):
    r = client.get(f"/s/s.jsonl/-/transcript?{query}")
    assert r.status_code == 302 and r.headers["Location"].startswith("/s/s.jsonl?")
    assert client.get(r.headers["Location"]).status_code == 200


@pytest.mark.parametrize("name", ["h-list.jsonl", "h-object.jsonl"])
def test_a_header_whose_type_is_not_a_string_shows_its_page(client, name):
    assert client.get(f"/s/{name}").status_code == 200
    assert client.get("/").status_code == 200
