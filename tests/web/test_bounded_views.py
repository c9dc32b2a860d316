"""The work of one view is bounded: a comparison of thousands of leaves compares the first few
and says so; a view of an entry whose line is huge parses that line once, not once per panel."""

from __future__ import annotations

import pytest

from tests.conftest import Builder
from webapp.core import bodies
from webapp.web import compare
from webapp.web.app import create_app


def test_a_comparison_of_more_branches_than_the_cap_compares_the_first_and_says_so(tmp_path):
    b = Builder()
    b.user("q", id="u0")
    tips = [b.assistant(f"answer {i}", id=f"a{i}", parent="u0") for i in range(compare.MAX_COMPARED + 8)]
    b.write(tmp_path / "s.jsonl")
    client = create_app(tmp_path).test_client()
    r = client.get("/s/s.jsonl/compare?ids=" + ",".join(tips))
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and 'id="compare-capped"' in html
    assert f"{len(tips)} branches were asked for; the first {compare.MAX_COMPARED} are compared" in html
    assert f"answer {compare.MAX_COMPARED - 1}<" in html and f"answer {compare.MAX_COMPARED}<" not in html
    capped = client.get("/s/s.jsonl/compare?ids=" + ",".join(tips[:compare.MAX_COMPARED])).get_data(as_text=True)
    assert len(html) < 1.1 * len(capped)
    export = client.get("/s/s.jsonl/compare/export?reviewed=1&ids=" + ",".join(tips))
    assert export.status_code == 200 and 'id="compare-capped"' in export.get_data(as_text=True)


def huge_line_session(tmp_path, monkeypatch) -> None:
    """s.jsonl with a tool result (`big`) too big for the body cache, made small here so that
    20 kB stand for a 50 MB tool output."""
    monkeypatch.setattr(bodies, "CACHE_BYTES", 4_000)
    monkeypatch.setattr(bodies, "BIG_BODY", 1_000)
    b = Builder()
    b.user("hello", id="u0")
    b.assistant("", calls=[{"id": "c1", "name": "read", "arguments": {"path": "big.txt"}}], id="a1")
    b.add("message", id="big", message={"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                                        "content": [{"type": "text", "text": "x" * 20_000}]})
    b.assistant("after", id="a2")
    b.write(tmp_path / "s.jsonl")


@pytest.mark.parametrize("url", ["/s/s.jsonl?node=big", "/s/s.jsonl/-/raw?id=big", "/s/s.jsonl?tab=transcript&node=big"])
def test_a_view_parses_a_huge_line_once(tmp_path, monkeypatch, url):
    """A line too big for the body cache to keep (a 50 MB tool output) is parsed once per view."""
    huge_line_session(tmp_path, monkeypatch)
    client = create_app(tmp_path).test_client()
    client.get("/s/s.jsonl")
    reads = []
    real = bodies.Bodies._read
    monkeypatch.setattr(bodies.Bodies, "_read", lambda self, entry: reads.append(entry.id) or real(self, entry))
    r = client.get(url)
    assert r.status_code == 200 and reads.count("big") <= 1, reads  # (0: still kept from the last view)
    assert bodies._view_bodies.get() is None  # let go of when the view ends


def test_several_views_of_a_huge_line_parse_it_once(tmp_path, monkeypatch):
    """Four people viewing one 50 MB tool output parsed it once per view, each parse holding every
    thread of the server (other pages waited seconds): the last big body read is kept across views."""
    huge_line_session(tmp_path, monkeypatch)
    reads = []
    real = bodies.Bodies._read
    monkeypatch.setattr(bodies.Bodies, "_read", lambda self, entry: reads.append(entry.id) or real(self, entry))
    client = create_app(tmp_path).test_client()
    for url in ["/s/s.jsonl", "/s/s.jsonl?node=big", "/s/s.jsonl?node=a1", "/s/s.jsonl/-/raw?id=big", "/s/s.jsonl?node=u0",
                "/s/s.jsonl?tab=transcript&node=big", "/s/s.jsonl?node=big"]:
        assert client.get(url).status_code == 200
    assert reads.count("big") == 1, reads
