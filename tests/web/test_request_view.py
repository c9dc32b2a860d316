"""The context inspector's "Request" view: the request as sent, with what was added or skipped."""

from __future__ import annotations

import html

import pytest

from tests.llm.test_request import broken_session
from webapp.core.request import ADD_RESULT, NO_RESULT, SKIP_ABORTED, SKIP_EMPTY
from webapp.web.app import create_app

REL = "--home-ana-proj--/s.jsonl"
HX = {"HX-Request": "true"}


@pytest.fixture
def client(tmp_path, monkeypatch):
    for var in ("SESSION_TREE_MODEL", "SESSION_TREE_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "--home-ana-proj--").mkdir()
    broken_session().write(tmp_path / REL)
    return create_app(tmp_path).test_client()


def test_the_request_view_marks_added_and_skipped_messages_with_the_reason(client):
    r = client.get(f"/s/{REL}/-/panel/context?node=u11&view=request", headers=HX)
    assert r.status_code == 200
    page = html.unescape(r.get_data(as_text=True))
    assert "1 added, 3 skipped" in page
    assert page.count('class="cm role-tool st-added"') == 1 and ADD_RESULT in page and NO_RESULT in page
    assert page.count("st-skipped") == 3 and SKIP_ABORTED in page and SKIP_EMPTY in page


def test_the_context_view_stays_the_context_and_points_to_the_request(client):
    page = html.unescape(client.get(f"/s/{REL}/-/panel/context?node=u11", headers=HX).get_data(as_text=True))
    assert "st-added" not in page and "st-skipped" not in page
    assert "1 added, 3 skipped (shown under “Request”)" in page
    assert "view=request" in page
