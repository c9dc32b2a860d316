"""Presenter mode through the real app: turns in the URL, a node opens its turn, no write control."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from tests.web.test_transcript_routes import app_and_ids  # noqa: F401 - the fixture


def test_turns_are_in_the_url_and_read_only(app_and_ids):  # noqa: F811
    app, ids = app_and_ids
    client = app.test_client()
    r = client.get(f"/s/--proj--/s.jsonl/present?leaf={ids['a2']}&turn=1")
    assert r.status_code == 200
    assert "Turn 1 of 2" in r.text and "Please fix the rounding" in r.text
    assert f'data-entry="{ids["u1"]}"' in r.text and f'data-entry="{ids["u2"]}"' not in r.text
    assert "&lt;script&gt;alert" in r.text and "<script>alert" not in r.text
    assert 'rel="next"' in r.text and 'rel="prev"' not in r.text
    assert "<form" not in r.text and "<button" not in r.text  # nothing here writes
    r = client.get(f"/s/--proj--/s.jsonl/present?leaf={ids['a2']}&turn=2&view=turn")
    assert "Turn 2 of 2" in r.text and "All green" in r.text and "<svg" not in r.text
    assert client.get(f"/s/--proj--/s.jsonl/present?leaf={ids['a2']}&turn=3").status_code == 404
    assert client.get("/s/--proj--/s.jsonl/present?turn=x").status_code == 404
    assert client.get("/s/--proj--/s.jsonl/present?leaf=nope").status_code == 404


def test_a_node_opens_the_turn_that_holds_it(app_and_ids):  # noqa: F811
    app, ids = app_and_ids
    r = app.test_client().get(f"/s/--proj--/s.jsonl/present?node={ids['hidden']}")
    assert r.status_code == 302
    q = parse_qs(urlparse(r.headers["Location"]).query)
    assert q == {"leaf": [ids["hidden"]], "turn": ["2"]}  # the side branch's own user turn
