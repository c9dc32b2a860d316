"""A node with 100,000 children (a script that retried one prompt, or a crafted file) still
gives its page: the skeleton is drawn a bounded number of times, whatever the width, and the
node panel links the first children and counts the rest, not one link each."""

from __future__ import annotations

import orjson

from webapp.web.app import create_app
from webapp.web.graph import layout
from webapp.web.views import NAV_CHILDREN

CHILDREN = 20_000  # (the drawings counted do not depend on the width: 100,000 were drawn 8 times too)


def wide_session(path) -> None:
    lines = [{"type": "session", "version": 3, "id": "wide", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"},
             {"type": "message", "id": "u0", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z",
              "message": {"role": "user", "content": "hi"}}]
    lines += [{"type": "message", "id": f"a{i}", "parentId": "u0", "timestamp": "2026-01-01T00:00:01.000Z",
               "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]}}
              for i in range(CHILDREN)]
    path.write_bytes(b"\n".join(orjson.dumps(x) for x in lines) + b"\n")


def test_a_node_with_thousands_of_children_gives_its_page(tmp_path, monkeypatch):
    wide_session(tmp_path / "wide.jsonl")
    drawings = []
    bounded = layout._bounded

    def counted(*args, **kwargs):
        drawings.append(args[6])  # (the cap)
        return bounded(*args, **kwargs)

    monkeypatch.setattr(layout, "_bounded", counted)
    client = create_app(tmp_path).test_client()
    page = client.get("/s/wide.jsonl")
    assert page.status_code == 200 and "more branches" in page.text
    # Each drawing ranks every side branch: shrinking the skeleton a fifth at a time drew it 8 times.
    assert len(drawings) <= 3, drawings
    panel = client.get("/s/wide.jsonl?node=u0").text
    links = panel.split('class="node-nav"')[1].split("</nav>")[0]
    assert links.count("↓ child") == NAV_CHILDREN
    assert f"and {CHILDREN - NAV_CHILDREN:,} more children" in links
