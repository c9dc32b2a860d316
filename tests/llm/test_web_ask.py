"""Asking several models through the real app: the page, the estimates before anything is sent,
the columns' events streamed side by side, a failing column, and the form without JavaScript."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import lines_of
from tests.llm.conftest import PATIENT
from tests.llm.test_web_summary_stream import RICH, SAMPLES, SSE, client_for, events
from webapp.core.session import Session
from webapp.model.llm import ModelConfig


@pytest.fixture
def root(tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "s")
    return tmp_path / "s"


@pytest.fixture
def client(root, llm_server):
    llm_server.per_model("fast-model", "reply", pieces=["Fast", " answer."])
    llm_server.per_model("slow-model", "reply", pieces=["Slow", " one."], delay=0.2)
    llm_server.per_model("broken-model", "500")
    return client_for(root, ModelConfig("openai/fast-model", api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT),
                      models=("openai/slow-model", "openai/broken-model", "openai/gpt-4o-mini"))


def leaf(root):
    tree = Session.open(root / RICH).tree
    return tree.conversation_leaf(tree.active_leaf)


def test_the_page_offers_the_modes_and_the_configured_model(root, client):
    c, _ = client
    at = leaf(root)
    html = c.get(f"/s/{RICH}/ask?at={at}").get_data(as_text=True)
    assert 'value="new"' in html and 'value="again"' not in html  # an assistant answer: nothing waits
    assert 'name="model" value="openai/fast-model" checked' in html
    assert 'name="model" value="openai/slow-model">' in html  # offered, not picked
    assert 'name="more_models"' not in html  # no model is typed in: the server's are offered
    assert c.get(f"/s/{RICH}/ask?at=nope").status_code == 404
    node = c.get(f"/s/{RICH}?node={at}").get_data(as_text=True)
    assert f"/ask?at={at}" in node  # "Ask several models…" on the node's panel


def test_estimates_come_before_anything_is_sent(root, client, llm_server):
    c, token = client
    before = (root / RICH).read_bytes()
    r = c.post(f"/s/{RICH}/-/ask/estimate", data={"csrf_token": token, "at": leaf(root), "mode": "new",
                                                   "message": "Try again", "model": "openai/gpt-4o-mini",
                                                   "more_models": "openai/slow-model"})
    html = r.get_data(as_text=True)
    assert r.status_code == 200
    assert 'data-model="openai/gpt-4o-mini"' in html and "$0.00" in html
    slow = html.split('data-model="openai/slow-model"')[1].split("</tr>")[0]
    assert "unknown" in slow
    assert llm_server.requests == [] and (root / RICH).read_bytes() == before


def test_the_columns_stream_side_by_side_and_a_failed_one_writes_nothing(root, client, llm_server):
    c, token = client
    at = leaf(root)
    before = len(lines_of((root / RICH).read_bytes()))
    r = c.post(f"/s/{RICH}/-/ask", headers=SSE, data={
        "csrf_token": token, "at": at, "mode": "new", "message": "And the VAT?", "model": "openai/fast-model",
        "more_models": "openai/slow-model, openai/broken-model"})
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    got = events(r.get_data(as_text=True))
    assert got[0][0] == "start" and [col["model"] for col in got[0][1]["columns"]] == [
        "openai/fast-model", "openai/slow-model", "openai/broken-model"]
    ends = {d["col"]: e for e, d in got if e in ("done", "failed", "cancelled")}
    assert ends == {0: "done", 1: "done", 2: "failed"}
    text = {i: "".join(d["text"] for e, d in got if e == "delta" and d["col"] == i) for i in range(3)}
    assert text == {0: "Fast answer.", 1: "Slow one.", 2: ""}
    end = got[-1]
    assert end[0] == "end" and len(end[1]["answers"]) == 2 and "/compare?ids=" in end[1]["compare"]
    new = lines_of((root / RICH).read_bytes())[before:]
    assert [e["message"]["role"] for e in new if e["type"] == "message"].count("assistant") == 2
    assert [e["message"]["role"] for e in new if e["type"] == "message"].count("user") == 1
    assert llm_server.refused == []
    assert c.get(end[1]["compare"]).status_code == 200


def test_without_javascript_the_form_waits_and_opens_the_comparison(root, client, llm_server):
    c, token = client
    user = "019cadd4-11fc-768e-9ae0-a30dfef64997"  # the first user message: "the reply here, again"
    r = c.post(f"/s/{RICH}/-/ask", data={"csrf_token": token, "at": user, "mode": "again",
                                         "model": "openai/fast-model", "more_models": "openai/slow-model"})
    assert r.status_code == 303 and "/compare?ids=" in r.headers["Location"]
    assert llm_server.refused == []


def test_a_bad_ask_is_a_clear_400_and_writes_nothing(root, client, llm_server):
    c, token = client
    before = (root / RICH).read_bytes()
    r = c.post(f"/s/{RICH}/-/ask", data={"csrf_token": token, "at": leaf(root), "mode": "again", "model": "openai/fast-model"})
    assert r.status_code == 400 and "cannot ask for" in r.get_data(as_text=True)
    r = c.post(f"/s/{RICH}/-/ask", data={"csrf_token": token, "at": leaf(root), "mode": "new", "message": " "})
    assert r.status_code == 400 and "name at least one model" in r.get_data(as_text=True)
    assert c.post(f"/s/{RICH}/-/ask/cancel", data={"csrf_token": token, "run": "x", "col": "0"}).status_code == 404
    assert (root / RICH).read_bytes() == before and llm_server.requests == []


def test_with_no_model_picked_the_estimate_is_a_hint_not_an_error(root, client):
    c, token = client
    r = c.post(f"/s/{RICH}/-/ask/estimate", data={"csrf_token": token, "at": leaf(root), "mode": "new"})
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and "Pick or name a model" in html and "ask-problem" not in html
    r = c.post(f"/s/{RICH}/-/ask/estimate", data={"csrf_token": token, "at": leaf(root), "mode": "bogus",
                                                   "model": "openai/fast-model"})
    assert "ask-problem" in r.get_data(as_text=True)  # a form that is wrong still says so


def test_a_model_the_server_does_not_offer_is_refused_before_anything_is_written(root, client, llm_server):
    c, token = client
    before = (root / RICH).read_bytes()
    for form in ({"model": "ollama_chat/x"}, {"model": "openai/fast-model", "more_models": "ollama_chat/x"}):
        r = c.post(f"/s/{RICH}/-/ask", data={"csrf_token": token, "at": leaf(root), "mode": "new",
                                             "message": "hi", **form})
        said = r.get_data(as_text=True)
        assert r.status_code == 403 and "the model ollama_chat/x is not one this server offers" in said
        assert "serve --model ollama_chat/x" in said
    assert (root / RICH).read_bytes() == before and llm_server.requests == []


def test_compare_after_an_ask_says_the_context_sent_as_the_ask_page_did(root, llm_server):
    """One figure on both pages: the server's count of the prompt where it reported one, the
    estimate said to be one where it did not; and the growth is measured on the server's count
    (an estimate at the ancestor against the server's count at the tip read −3.9k)."""
    llm_server.per_model("counted-model", "reply", pieces=["Counted."],
                         usage={"prompt_tokens": 3016, "completion_tokens": 40, "total_tokens": 3056})
    llm_server.per_model("uncounted-model", "reply", pieces=["Not counted."], usage=None)
    c, token = client_for(root, ModelConfig("openai/counted-model", api_base=llm_server.api_base, api_key="dummy",
                                            timeout=PATIENT), models=("openai/uncounted-model",))
    got = events(c.post(f"/s/{RICH}/-/ask", headers=SSE, data={
        "csrf_token": token, "at": leaf(root), "mode": "new", "message": "And the VAT?",
        "model": "openai/counted-model", "more_models": "openai/uncounted-model"}).get_data(as_text=True))
    done = {d["col"]: d for e, d in got if e == "done"}
    assert (done[0]["sent_tokens"], done[0]["sent_estimated"]) == (3016, False)
    assert done[1]["sent_estimated"] is True
    page = c.get(got[-1][1]["compare"]).get_data(as_text=True)
    sent_row = page.split('data-row="context_sent"')[1].split("</tr>")[0]
    assert "3,016 tokens (the server&#39;s count)" in sent_row
    assert f"{done[1]['sent_tokens']:,} tokens (estimated)" in sent_row
    growth = page.split('data-row="context"')[1].split("</td>")[0]
    assert "<strong>+40</strong>" in growth  # the reply's own tokens on top of what was sent
