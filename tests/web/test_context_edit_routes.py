"""Editing what the model sees from the context tab (pi 1.6's context edits): the preview with its
token figures (nothing written), the write at the node shown, undo, pi's refusals, a file we may not
write (a continuation), and how the tab shows system messages and edited or omitted entries."""

from __future__ import annotations

import re
import shutil
from html import unescape
from pathlib import Path

import pytest

from tests.conftest import Builder
from webapp.core.context import build_context
from webapp.core.session import Session
from webapp.core.tokens import context_tokens, token_text
from webapp.web.app import create_app

REL = "--home-ana-proj--/s.jsonl"
V1 = "--home-ana-projects-legacy-cli--/2025-11-18T10-05-33-910Z_019a966d-4156-7b5f-a5c6-ef5f3ad16722.jsonl"
SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
HX = {"HX-Request": "true"}
TOOL = {"name": "read", "description": "Read a file", "parameters": {"type": "object", "properties": {}}}


def session_file() -> Builder:
    b = Builder()
    b.add("message", id="s1", message={"role": "system", "content": "You are pi.\nBe brief.", "toolsAdded": [TOOL]})
    b.user("read big.log", id="u1")
    b.assistant("", calls=[{"id": "c1", "name": "read", "arguments": {"path": "big.log"}}], id="a1")
    b.tool_result("c1", "line of the log\n" * 400, id="t1")
    b.add("message", id="s2", message={"role": "system", "content": "", "sections": {"date": "Today is Monday."},
                                       "toolsRemoved": [{"name": "read"}]})
    b.assistant("The log is long.", usage=2400, id="a2")
    return b


@pytest.fixture
def app(tmp_path, monkeypatch):
    for var in ("SESSION_TREE_MODEL", "SESSION_TREE_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "--home-ana-proj--").mkdir()
    session_file().write(tmp_path / REL)
    shutil.copytree(SAMPLES / V1.split("/")[0], tmp_path / V1.split("/")[0])
    app = create_app(tmp_path)
    app.config["ROOT_PATH"] = tmp_path
    return app


def post(app, url, data, **headers):
    return app.test_client().post(url, data={"csrf_token": app.config["CSRF_TOKEN"], **data}, headers=headers)


def panel(app, node: str, rel: str = REL) -> str:
    """The context panel at `node` as a person reads it (its text, tags left out)."""
    html = app.test_client().get(f"/s/{rel}/-/panel/context?node={node}", headers=HX).get_data(as_text=True)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_the_tab_shows_system_messages_as_the_prompt_and_tools_from_there_on(app):
    page = panel(app, "a2")
    assert "Tools from here on: read" in page  # the first one
    assert "removed read" in page and "Tools from here on: none" in page  # the second one
    assert "+ Today is Monday." in page and "You are pi. Be brief." in page  # the diff against the prompt before
    assert "Omit from context…" in page and "Replace content…" in page


def test_omit_previews_the_token_figures_then_writes_one_edit_at_the_node(app, tmp_path):
    path = tmp_path / REL
    before = path.read_bytes()
    r = post(app, f"/s/{REL}/-/context-edit/preview", {"node": "a2", "target": "t1", "action": "omit"}, **HX)
    assert r.status_code == 200 and path.read_bytes() == before  # a preview writes nothing
    preview = unescape(r.get_data(as_text=True))
    tree = Session.open(path).tree
    now = context_tokens(build_context(tree, "a2"))
    assert token_text(now) in preview and "(nothing: taken out of the context)" in preview
    after = re.search(r'class="tok-after">([^<]+)<', preview)[1]
    r = post(app, f"/s/{REL}/-/context-edit", {"node": "a2", "target": "t1", "action": "omit"})
    assert r.status_code == 303
    tree = Session.open(path).tree
    edit = tree.by_id[tree.active_leaf]
    assert (edit.type, edit.parent_id, edit.get("targetId"), edit.get("replacement")) == ("context_edit", "a2", "t1", None)
    assert r.headers["Location"].endswith(f"node={edit.id}&tab=context") or f"node={edit.id}" in r.headers["Location"]
    shown = context_tokens(build_context(tree, edit.id))
    assert token_text(shown) == after and shown.context < now.context
    page = panel(app, edit.id)
    assert "Taken out of the context by edits (1)" in page and "Undo…" in page


def test_replace_sends_the_new_text_and_keeps_the_old_one_reachable_and_undo_puts_it_back(app, tmp_path):
    r = post(app, f"/s/{REL}/-/context-edit", {"node": "a2", "target": "t1", "action": "replace", "text": "(400 log lines)"})
    assert r.status_code == 303
    tree = Session.open(tmp_path / REL).tree
    edit = tree.active_leaf
    assert tree.by_id[edit].get("replacement") == {"content": [{"type": "text", "text": "(400 log lines)"}]}
    page = panel(app, edit)
    assert "edited by context edit" in page and "What the file holds line of the log" in page
    assert "the model is sent the text below. What the file holds" in page and "(400 log lines)" in page
    r = post(app, f"/s/{REL}/-/context-edit", {"node": edit, "target": "t1", "action": "undo"})
    tree = Session.open(tmp_path / REL).tree
    ctx = build_context(tree, tree.active_leaf)
    assert next(m["content"] for m in ctx.messages if m["entryId"] == "t1") == "line of the log\n" * 400


def test_an_edit_pi_refuses_is_refused_with_pis_words(app, tmp_path):
    before = (tmp_path / REL).read_bytes()
    r = post(app, f"/s/{REL}/-/context-edit/preview", {"node": "a2", "target": "s2", "action": "omit"})
    assert r.status_code == 409 and "Entry s2 does not contribute editable model content" in r.get_data(as_text=True)
    r = post(app, f"/s/{REL}/-/context-edit", {"node": "a2", "target": "s2", "action": "omit"})
    assert r.status_code == 409 and (tmp_path / REL).read_bytes() == before


def test_a_file_we_may_not_write_gets_the_edit_in_a_continuation(app, tmp_path):
    path = tmp_path / V1
    before = path.read_bytes()
    tree = Session.open(path).tree
    leaf = tree.conversation_leaf(tree.active_leaf)
    target = next(e for e in reversed(build_context(tree, leaf).sources) if e.role == "user")
    r = post(app, f"/s/{V1}/-/context-edit/preview", {"node": leaf, "target": target.id, "action": "omit"}, **HX)
    assert "the edit is written in a new file that continues it" in unescape(r.get_data(as_text=True))
    r = post(app, f"/s/{V1}/-/context-edit", {"node": leaf, "target": target.id, "action": "omit"})
    assert r.status_code == 303 and path.read_bytes() == before
    new = tmp_path / r.headers["Location"].split("/s/", 1)[1].split("?")[0]
    copy = Session.open(new).tree
    edit = copy.by_id[copy.active_leaf]
    assert edit.type == "context_edit" and copy.header["parentSession"] == str(path.resolve())
    assert copy.by_id[edit.get("targetId")].message == target.message
    assert len(build_context(copy, edit.id).messages) == len(build_context(tree, leaf).messages) - 1


def test_the_transcript_marks_what_edits_changed_and_shows_system_messages(app, tmp_path):
    session = Session.open(tmp_path / REL)
    session.append_context_edit("t1", None, parent="a2")
    edit = session.append_context_edit("u1", {"content": "read it"})
    html = app.test_client().get(f"/s/{REL}/-/panel/transcript?node={edit['id']}", headers=HX).get_data(as_text=True)
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())
    assert "edited for the model" in text and "omitted for the model its result t1" in text
    assert "system prompt" in text and "tools added read" in text and "tools removed read" in text
    assert "section date" in text and "Today is Monday." in text


def test_the_transcript_offers_the_same_edit_at_its_leaf(app, tmp_path):
    html = app.test_client().get(f"/s/{REL}/-/panel/transcript?node=a2", headers=HX).get_data(as_text=True)
    item = html[html.index('data-entry="u1"'):html.index('data-entry="a1"')]
    assert "Edit what the model is sent…" in item and 'name="node" value="a2"' in item and "Send other text…" in item
    form = re.search(r'hx-get="([^"]*context-edit/form[^"]*)"', item)[1]
    form = app.test_client().get(unescape(form), headers=HX).get_data(as_text=True)
    assert ">read big.log</textarea>" in form and 'hx-target="#t-edit-' in form
    r = post(app, f"/s/{REL}/-/context-edit/preview", {"node": "a2", "target": "u1", "action": "replace", "text": "read it"}, **HX)
    assert r.status_code == 200 and "read it" in r.get_data(as_text=True)


def test_without_javascript_the_replacement_form_and_its_preview_are_pages(app):
    client = app.test_client()
    page = client.get(f"/s/{REL}/-/context-edit/form?node=a2&target=u1").get_data(as_text=True)
    assert "<html" in page and ">read big.log</textarea>" in page and "hx-post" not in page.split("<main")[-1]
    r = post(app, f"/s/{REL}/-/context-edit/preview", {"node": "a2", "target": "u1", "action": "replace", "text": "x"})
    assert r.status_code == 200 and "<html" in r.get_data(as_text=True) and "Write this edit" in r.get_data(as_text=True)
