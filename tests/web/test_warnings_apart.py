"""Warnings are not problems: an aborted turn's tool call without a result is ordinary in pi
sessions. The index badge, the stats bar, the Problems tab and `validate` agree: grey
"N warnings" for those, red "N problems" for damage only."""

from __future__ import annotations

import re

import pytest

from tests.test_cli import run
from webapp.core.session import Session, create_session
from webapp.web.app import create_app


def text(role, t):
    return {"type": "message", "message": {"role": role, "content": [{"type": "text", "text": t}]}}


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "sessions"
    ordinary = create_session(root, "/w/ordinary")
    s = Session.open(ordinary)
    s.append(text("user", "list the files"))
    s.append({"type": "message", "message": {
        "role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}],
        "provider": "openai", "model": "gpt-4o-mini", "stopReason": "aborted"}})
    s.append(text("user", "never mind"))
    damaged = create_session(root, "/w/damaged")
    Session.open(damaged).append(text("user", "hi"))
    with damaged.open("ab") as f:
        f.write(b'{"type": "message", "broken\n')
    return root, ordinary, damaged


def badges(html: str) -> list[str]:
    return [re.sub(r"\s+", " ", b).strip() for b in re.findall(r'class="badge [a-z]+"[^>]*>([^<]*)<', html)]


def test_index_badges_tell_warnings_from_damage(root):
    root, ordinary, damaged = root
    html = create_app(root).test_client().get("/").get_data(as_text=True)
    rows = {name: next(r for r in html.split("<tr") if "session-row" in r and f"--w-{name}--" in r)
            for name in ("ordinary", "damaged")}
    assert 'class="badge warning"' in rows["ordinary"] and "1 warning<" in rows["ordinary"]
    assert 'class="badge bad"' not in rows["ordinary"]
    assert 'class="badge bad"' in rows["damaged"] and "1 problem<" in rows["damaged"]


def test_the_session_page_and_problems_tab_agree_with_validate(root, capsys):
    root, ordinary, damaged = root
    client = create_app(root).test_client()
    rel = ordinary.relative_to(root).as_posix()
    page = client.get(f"/s/{rel}").get_data(as_text=True)
    assert 'id="warnings-badge"' in page and 'id="problems-badge"' not in page
    tab = client.get(f"/s/{rel}/-/panel/problems", headers={"HX-Request": "true"}).get_data(as_text=True)
    assert re.search(r"<h3>0 problems · <span class=\"warning-count\">1 warning</span></h3>", tab)
    assert 'class="problem-item k-unanswered-tool-call is-warning"' in tab
    code, out, _ = run(capsys, "validate", ordinary)
    assert code == 0 and "warning: " in out
    code, _, _ = run(capsys, "validate", damaged)
    assert code == 1
    dpage = client.get(f"/s/{damaged.relative_to(root).as_posix()}").get_data(as_text=True)
    assert 'id="problems-badge"' in dpage and 'id="warnings-badge"' not in dpage
