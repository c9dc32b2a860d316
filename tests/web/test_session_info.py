"""The lines of a Claude Code session that are not nodes (titles, snapshots, last prompts) are
shown in the Problems tab's "Session info", a row each and within a budget; a sub-agent file beside
the session shows as its nodes."""

from __future__ import annotations

import hashlib

import orjson
import pytest

from webapp.web import budget
from webapp.web.app import create_app

REL = "-work-p/s1.jsonl"


def _lines(extra_meta: int = 0) -> list[dict]:
    base = {"sessionId": "s1", "cwd": "/work/p", "version": "2.1.0", "isSidechain": False}
    out = [
        {"type": "custom-title", "customTitle": "<script>alert(1)</script> my title", "sessionId": "s1"},
        {**base, "type": "user", "uuid": "u", "parentUuid": None, "timestamp": "2025-07-01T10:00:00Z",
         "message": {"role": "user", "content": "look around"}},
        {**base, "type": "assistant", "uuid": "a", "parentUuid": "u", "timestamp": "2025-07-01T10:01:00Z",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4", "stop_reason": "tool_use",
                     "content": [{"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "Explore"}}]}},
        {**base, "type": "user", "uuid": "r", "parentUuid": "a", "timestamp": "2025-07-01T10:02:00Z",
         "toolUseResult": {"status": "completed", "agentId": "ab12"},
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "found"}]}},
        {"type": "file-history-snapshot", "messageId": "m1", "isSnapshotUpdate": False, "snapshot": {"files": {}}},
        {"type": "last-prompt", "lastPrompt": "look around", "leafUuid": "r", "sessionId": "s1"},
    ]
    out += [{"type": "mode", "mode": f"plan {i}", "sessionId": "s1"} for i in range(extra_meta)]
    return out


def _root(tmp_path, extra_meta: int = 0):
    root = tmp_path / "sessions"
    main = root / REL
    main.parent.mkdir(parents=True)
    main.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in _lines(extra_meta)))
    agent = main.with_suffix("") / "subagents" / "agent-ab12.jsonl"
    agent.parent.mkdir(parents=True)
    agent.write_bytes(orjson.dumps({"type": "user", "uuid": "sub-u", "parentUuid": None, "isSidechain": True,
                                    "agentId": "ab12", "sessionId": "s1", "timestamp": "2025-07-01T10:01:30Z",
                                    "message": {"role": "user", "content": "Explore, as the sub-agent"}}) + b"\n")
    return root


@pytest.fixture
def client(tmp_path, monkeypatch):
    for var in ("SESSION_TREE_MODEL", "SESSION_TREE_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    root = _root(tmp_path)
    return create_app(root).test_client(), root


def test_the_problems_tab_lists_the_lines_that_are_not_nodes_escaped(client):
    c, root = client
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.jsonl")}
    r = c.get(f"/s/{REL}/-/panel/problems", headers={"HX-Request": "true"})
    html = r.get_data(as_text=True)
    assert r.status_code == 200
    assert "Session info: 3 lines that are not nodes" in html
    assert "<td><code>custom-title</code></td>" in html and "<td><code>last-prompt</code></td>" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; my title" in html and "<script>alert" not in html
    assert "lastPrompt: look around · leafUuid: r" in html
    assert "snapshot: {1 field}" in html  # a nested value is named, not dumped
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.jsonl")} == before


def test_the_stats_bar_links_to_the_session_info_and_the_subagent_is_drawn(client):
    c, _ = client
    html = c.get(f"/s/{REL}").get_data(as_text=True)
    assert "3 info lines</a>" in html and "tab=problems" in html and "#session-info" in html
    node = c.get(f"/s/{REL}/-/panel/node?node=sub-u", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "Explore, as the sub-agent" in node


def test_many_info_lines_are_listed_within_the_budget(tmp_path):
    root = _root(tmp_path, extra_meta=budget.METADATA_SHOWN + 50)
    c = create_app(root).test_client()
    html = c.get(f"/s/{REL}/-/panel/problems", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert html.count('<td class="line">') == budget.METADATA_SHOWN
    assert "53 more such lines are not listed here" in html
