"""Writes from the browser through the real app: CSRF, fork, resend, labels, settings, compaction."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from webapp.core.session import Session
from webapp.web.app import create_app

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
RICH = "--home-ana-projects-invoice-api--/2026-03-02T09-14-05-221Z_019cadd3-8025-7970-85d9-5954058b4714.jsonl"
EDITED_ORIGINAL = "019cadd4-11fc-768e-9ae0-a30dfef64997"  # a user message


@pytest.fixture
def root(tmp_path, monkeypatch):
    for var in ("SESSION_TREE_MODEL", "SESSION_TREE_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    shutil.copytree(SAMPLES, tmp_path / "s")
    return tmp_path / "s"


@pytest.fixture
def app(root):
    return create_app(root)


@pytest.fixture
def client(app):
    return app.test_client()


def post(client, app, url, data, **headers):
    data = {"csrf_token": app.config["CSRF_TOKEN"], **data}
    return client.post(url, data=data, headers=headers)


def lines(root):
    return (root / RICH).read_bytes().splitlines()


def test_a_write_without_the_token_or_from_another_site_is_refused(client, app, root):
    before = (root / RICH).read_bytes()
    r = client.post(f"/s/{RICH}/-/label", data={"node": EDITED_ORIGINAL, "label": "x"})
    assert r.status_code == 403
    r = post(client, app, f"/s/{RICH}/-/label", {"node": EDITED_ORIGINAL, "label": "x"}, Origin="http://evil.example")
    assert r.status_code == 403
    r = post(client, app, f"/s/{RICH}/-/label", {"node": EDITED_ORIGINAL, "label": "x"}, **{"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    assert (root / RICH).read_bytes() == before


def test_get_requests_never_write(client, root):
    before = (root / RICH).read_bytes()
    for url in (f"/s/{RICH}", f"/s/{RICH}?tab=compact", f"/s/{RICH}/-/fork-form?node={EDITED_ORIGINAL}&position=before",
                f"/s/{RICH}?tab=context", f"/s/{RICH}/-/label", f"/s/{RICH}/-/fork"):
        client.get(url)
    assert (root / RICH).read_bytes() == before


def test_fork_at_appends_exactly_one_leaf_line(client, app, root):
    before = lines(root)
    r = post(client, app, f"/s/{RICH}/-/fork", {"node": EDITED_ORIGINAL, "position": "at"},
             Origin="http://localhost")
    assert r.status_code == 303
    after = lines(root)
    assert after[: len(before)] == before and len(after) == len(before) + 1
    entry = orjson.loads(after[-1])
    assert entry["type"] == "leaf" and entry["targetId"] == EDITED_ORIGINAL
    assert Session.open(root / RICH).tree.active_leaf == EDITED_ORIGINAL
    assert f"node={EDITED_ORIGINAL}" in r.headers["Location"]


def test_edit_and_resend_adds_a_sibling_user_message(client, app, root):
    tree = Session.open(root / RICH).tree
    form = client.get(f"/s/{RICH}/-/fork-form?node={EDITED_ORIGINAL}&position=before").get_data(as_text=True)
    original_text = tree.by_id[EDITED_ORIGINAL].message["content"][0]["text"]
    assert original_text.split()[0] in form  # the composer is pre-filled
    r = post(client, app, f"/s/{RICH}/-/fork", {"node": EDITED_ORIGINAL, "position": "before", "message": "Try it with Decimal"},
             Accept="text/event-stream")
    body = r.get_data(as_text=True)
    assert "event: done" in body and "no model is configured" in body
    tree = Session.open(root / RICH).tree
    new = tree.by_id[tree.active_leaf]
    assert new.role == "user" and new.message["content"][0]["text"] == "Try it with Decimal"
    assert tree.parent[new.id] == tree.parent[EDITED_ORIGINAL]


def test_fork_with_an_edited_branch_summary(client, app, root):
    tree = Session.open(root / RICH).tree
    old_leaf = tree.active_leaf
    r = post(client, app, f"/s/{RICH}/-/branch-summary", {"new_leaf": EDITED_ORIGINAL})
    assert r.status_code == 200
    assert "extractive" in r.get_data(as_text=True) and "## Goal" in r.get_data(as_text=True)
    post(client, app, f"/s/{RICH}/-/fork", {"node": EDITED_ORIGINAL, "position": "at", "summary": "We tried the float fix.",
                                             "summarizer": "extractive"})
    tree = Session.open(root / RICH).tree
    summary = tree.by_id[tree.active_leaf]
    assert summary.type == "branch_summary"
    assert summary.get("fromId") == old_leaf and tree.parent[summary.id] == EDITED_ORIGINAL
    assert summary.get("summary").startswith("We tried the float fix.")
    # the text is not the draft the extractive summarizer made: a person wrote it
    assert summary.get("details")["summarizer"] == "edited" and summary.get("details")["draftedBy"] == "extractive"


def test_label_and_settings_append_entries(client, app, root):
    post(client, app, f"/s/{RICH}/-/label", {"node": EDITED_ORIGINAL, "label": "first try"})
    tree = Session.open(root / RICH).tree
    assert tree.labels[EDITED_ORIGINAL] == "first try"
    leaf = tree.conversation_leaf(tree.active_leaf)
    post(client, app, f"/s/{RICH}/-/settings", {"node": leaf, "model": "openai/gpt-4o-mini", "thinking": "low"})
    tree = Session.open(root / RICH).tree
    last_two = [tree.by_id[e.id] for e in tree.entries[-2:]]
    assert [e.type for e in last_two] == ["model_change", "thinking_level_change"]
    assert last_two[0].get("provider") == "openai" and last_two[0].get("modelId") == "gpt-4o-mini"
    assert last_two[1].get("thinkingLevel") == "low" and tree.parent[last_two[1].id] == last_two[0].id
    r = post(client, app, f"/s/{RICH}/-/settings", {"node": leaf, "thinking": "extreme"}, Accept="text/event-stream")
    assert "event: error" in r.get_data(as_text=True)


def test_compaction_preview_summary_and_commit(client, app, root):
    html = client.get(f"/s/{RICH}?tab=compact&keep_recent_tokens=300").get_data(as_text=True)
    assert "Commit the compaction" in html
    first_kept = html.split('name="first_kept" value="')[1].split('"')[0]
    r = post(client, app, f"/s/{RICH}/-/compact/summary", {"keep_recent_tokens": "300"})
    assert "## Goal" in r.get_data(as_text=True)
    before = lines(root)
    r = post(client, app, f"/s/{RICH}/-/compact", {"keep_recent_tokens": "300", "first_kept": first_kept,
                                                     "summary": "Edited summary: rounding fixed.", "summarizer": "extractive"})
    assert r.status_code == 303
    tree = Session.open(root / RICH).tree
    comp = tree.by_id[tree.active_leaf]
    assert len(lines(root)) == len(before) + 1
    assert comp.type == "compaction" and comp.get("firstKeptEntryId") == first_kept
    assert comp.get("summary").startswith("Edited summary: rounding fixed.")
    context_html = client.get(f"/s/{RICH}?tab=context").get_data(as_text=True)
    assert "Edited summary: rounding fixed." in context_html


def test_a_stale_compaction_is_refused_and_writes_nothing(client, app, root):
    before = (root / RICH).read_bytes()
    r = post(client, app, f"/s/{RICH}/-/compact", {"keep_recent_tokens": "300", "first_kept": "not-the-cut",
                                                     "summary": "x"}, Accept="text/event-stream")
    assert "event: error" in r.get_data(as_text=True) and "changed since the preview" in r.get_data(as_text=True)
    r = post(client, app, f"/s/{RICH}/-/compact", {"keep_recent_tokens": "300", "summary": " "})
    assert r.status_code == 409
    r = post(client, app, f"/s/{RICH}/-/compact", {"keep_recent_tokens": "300", "summary": "x",
                                                     "active_leaf": EDITED_ORIGINAL})  # the branch moved on since
    assert r.status_code == 409
    assert (root / RICH).read_bytes() == before


def test_regenerate_writes_a_new_summary_beside_the_old_one(client, app, root):
    tree = Session.open(root / RICH).tree
    old = next(e for e in tree.entries if e.type == "branch_summary")
    before = lines(root)
    post(client, app, f"/s/{RICH}/-/regenerate", {"node": old.id})
    after = lines(root)
    assert after[: len(before)] == before and len(after) == len(before) + 1
    tree = Session.open(root / RICH).tree
    new = tree.by_id[tree.active_leaf]
    assert new.type == "branch_summary" and new.get("fromId") == old.get("fromId")
    assert tree.parent[new.id] == tree.parent[old.id]
    assert new.get("details")["regenerates"] == old.id
    summaries = client.get(f"/s/{RICH}?tab=summaries").get_data(as_text=True)
    assert "extractive" in summaries


def test_a_regenerated_summary_is_drafted_without_writing_then_written_as_read(client, app, root):
    tree = Session.open(root / RICH).tree
    old = next(e for e in tree.entries if e.type == "branch_summary")
    before = lines(root)
    r = post(client, app, f"/s/{RICH}/-/regenerate/summary", {"node": old.id})
    assert r.status_code == 200 and lines(root) == before  # a draft only
    html = r.get_data(as_text=True)
    assert 'id="summary-text"' in html and 'name="summarizer" value="extractive"' in html
    stream = post(client, app, f"/s/{RICH}/-/regenerate/summary", {"node": old.id}, Accept="text/event-stream")
    assert "event: done" in stream.get_data(as_text=True) and lines(root) == before
    r = post(client, app, f"/s/{RICH}/-/regenerate", {"node": old.id, "summary": "## Goal\nRead and edited.",
                                                      "summarizer": "extractive", "draft_digest": "stale"})
    assert r.status_code == 303
    tree = Session.open(root / RICH).tree
    new = tree.by_id[tree.active_leaf]
    assert new.get("summary").startswith("## Goal\nRead and edited.")
    assert new.get("details")["summarizer"] == "edited" and new.get("details")["regenerates"] == old.id
    assert tree.parent[new.id] == tree.parent[old.id]
    r = post(client, app, f"/s/{RICH}/-/regenerate/summary", {"node": EDITED_ORIGINAL})
    assert r.status_code == 409 and "only a compaction or a branch summary" in r.get_data(as_text=True)


def test_reply_without_a_model_says_how_to_configure_one(client, app, root):
    html = client.get(f"/s/{RICH}/-/fork-form?node={EDITED_ORIGINAL}&position=at").get_data(as_text=True)
    assert "No model is configured" in html and "--model" in html


def test_asking_for_a_reply_is_offered_only_with_a_model(root):
    from webapp.model.llm import ModelConfig

    s = Session.open(root / RICH)
    user = s.append({"type": "message", "message": {"role": "user", "content": "unanswered question"}})
    without = create_app(root).test_client().get(f"/s/{RICH}?node={user['id']}").get_data(as_text=True)
    assert "Ask the model to answer this" not in without
    app = create_app(root, MODEL_CONFIG=ModelConfig("openai/some-model", api_base="http://127.0.0.1:9/v1"))
    with_model = app.test_client().get(f"/s/{RICH}?node={user['id']}").get_data(as_text=True)
    assert "Ask the model to answer this" in with_model
    answered = app.test_client().get(f"/s/{RICH}?node={EDITED_ORIGINAL}").get_data(as_text=True)
    assert "Ask the model to answer this" not in answered


def test_regenerating_a_compaction_keeps_its_place_and_its_cut(client, app, root):
    tree = Session.open(root / RICH).tree
    old = [e for e in tree.entries if e.type == "compaction"][-1]
    post(client, app, f"/s/{RICH}/-/regenerate", {"node": old.id})
    tree = Session.open(root / RICH).tree
    new = tree.by_id[tree.active_leaf]
    assert new.type == "compaction" and new.id != old.id
    assert tree.parent[new.id] == tree.parent[old.id]
    assert new.get("firstKeptEntryId") == old.get("firstKeptEntryId")
    assert new.get("details")["regenerates"] == old.id


def test_the_composer_offers_only_the_servers_models_and_refuses_another(root):
    from webapp.model.llm import ModelConfig

    app = create_app(root, MODEL_CONFIG=ModelConfig("openai/some-model", api_base="http://127.0.0.1:9/v1",
                                                    api_key="the-owners-key"), MODELS=("openai/second",))
    client = app.test_client()
    html = client.get(f"/s/{RICH}/-/fork-form?node={EDITED_ORIGINAL}&position=at").get_data(as_text=True)
    assert '<select name="model"><option selected>openai/some-model</option><option>openai/second</option>' in html
    before = (root / RICH).read_bytes()
    for url, form in ((f"/s/{RICH}/-/fork", {"node": EDITED_ORIGINAL, "message": "hi"}),
                      (f"/s/{RICH}/-/reply", {"node": EDITED_ORIGINAL})):
        r = post(client, app, url, {**form, "model": "ollama_chat/x"})
        assert r.status_code == 403 and "the model ollama_chat/x is not one this server offers" in r.get_data(as_text=True)
    assert (root / RICH).read_bytes() == before
