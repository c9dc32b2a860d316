"""The compaction lab through the real app: its page, a run streamed (the model's text first,
then each card, then the table) and one without JavaScript, its refusals in one line, keeping a
candidate (beside the recorded compaction, or in a new file for a file the app never writes),
the diff of two candidates, and the report (JSON, HTML, redacted)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import lines_of
from tests.lab_session import SUMMARY, TURNS, lab_session
from tests.llm.conftest import PATIENT
from tests.llm.test_lab import script
from tests.llm.test_web_summary_stream import SSE, client_for, events
from webapp.core.session import Session
from webapp.model.llm import ModelConfig

MODEL = "openai/test-model"
SECRET = "AKIAIOSFODNN7EXAMPLE"


@pytest.fixture
def setup(tmp_path, llm_server):
    root = tmp_path / "sessions"
    root.mkdir()
    path = lab_session(secret=SECRET).write(root / "s.jsonl")
    client, token = client_for(root, ModelConfig(MODEL, api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT),
                               models=("openai/other-model",))
    llm_server.behave("script", script=script)
    return client, token, path


def form(token: str, **more) -> dict:
    return {"csrf_token": token, "at": "k1", "model": [MODEL], "prompt": ["pi", "ours"], "keep": "", "turns": "1",
            "concurrency": "2", **more}


def test_the_page_shows_the_cut_the_recorded_summary_and_the_choices(setup):
    client, _, _ = setup
    html = client.get("/s/s.jsonl/lab?at=k1").get_data(as_text=True)
    assert "At the compaction" in html and SUMMARY.splitlines()[1] in html
    assert 'value="pi" form="lab-form" checked' in html and 'value="ours" form="lab-form" checked' in html
    assert f'value="{MODEL}" checked' in html and 'value="openai/other-model"' in html
    assert '<option value="u2">' in html  # a cut the person may move to
    assert "3 turns of the branch" in html and TURNS[0] in html
    # The budgets say what they do in a user's words, not by a section of our charter.
    assert "the cut pi makes when it keeps that many recent tokens" in html and "SPEC" not in html
    assert client.get("/s/s.jsonl/lab?at=nope").status_code == 404


def test_a_streamed_run_sends_the_summary_as_it_comes_then_each_card_then_the_table(setup, llm_server):
    client, token, path = setup
    before = path.read_bytes()
    r = client.post("/s/s.jsonl/-/lab", headers=SSE, data=form(token))
    got = events(r.get_data(as_text=True))
    names = [e for e, _ in got]
    assert names[0] == "run" and names[1] == "target" and names[-1] == "end"
    target = got[1][1]
    assert len(target["candidates"]) == 3  # the recorded summary, pi's, ours
    first_delta = names.index("delta")
    ids = {c["id"] for c in target["candidates"]}
    model_card = next(i for i, (e, d) in enumerate(got) if e == "card" and d["event"] == "candidate" and
                      d["id"] == got[first_delta][1]["id"])
    assert first_delta < model_card  # the text shows before its card
    cards = {d["id"] for e, d in got if e == "card"}
    assert cards == ids
    end = got[-1][1]
    assert end["reason"] == "finished" and 'class="lab-table"' in end["html"]
    assert end["html"].count('<article class="lab-card') == 3 and "as well" in end["html"]
    assert path.read_bytes() == before  # the tests ran in a copy held in memory
    assert llm_server.refused == []
    page = client.get(end["page"]).get_data(as_text=True)  # the run's page, drawn from its file
    assert page.count('<article class="lab-card') == 3 and "Earlier runs here" in page


def test_without_javascript_the_run_is_waited_for_and_its_page_opens(setup):
    client, token, _ = setup
    r = client.post("/s/s.jsonl/-/lab", data=form(token, model=["extractive"], prompt=["ours"], keep="50", turns="0"))
    assert r.status_code == 303 and "run=lab-" in r.headers["Location"]
    html = client.get(r.headers["Location"]).get_data(as_text=True)
    assert "extractive · extractive · keep 50" in html and "recorded · recorded · recorded cut" in html


@pytest.mark.parametrize("change, status, words", [
    ({"model": ["openai/elsewhere"]}, 403, "not one this server offers"),
    ({"prompt": ["nobody's"]}, 400, "no summary prompt named"),
    ({"prompt": []}, 400, "at least one summary prompt"),
    ({"cut": "t1"}, 400, "not a cut point"),
    ({"turns": "99"}, 400, "turns: between 0 and 10"),
    ({"max_usd": "1"}, 400, "needs a price"),
    ({"concurrency": "x"}, 400, "not a number"),
])
def test_a_bad_form_is_refused_in_one_line_and_no_run_is_made(setup, change, status, words):
    client, token, _ = setup
    r = client.post("/s/s.jsonl/-/lab", headers=SSE, data={**form(token), **change})
    assert r.status_code == status
    text = r.get_data(as_text=True)
    assert words in text and "\n" not in text.strip()


def test_keeping_a_candidate_writes_a_sibling_of_the_recorded_compaction(setup):
    client, token, path = setup
    r = client.post("/s/s.jsonl/-/lab", data=form(token, prompt=["ours"], turns="0"))
    run = r.headers["Location"].split("run=")[1]
    state_html = client.get(r.headers["Location"]).get_data(as_text=True)
    cid = next(part.split('"')[0] for part in state_html.split('name="candidate" value="')[1:])
    before = lines_of(path.read_bytes())
    r = client.post("/s/s.jsonl/-/lab/keep", data={"csrf_token": token, "run": run, "at": "k1", "candidate": cid})
    assert r.status_code == 303
    after = lines_of(path.read_bytes())
    assert after[:len(before)] == before  # nothing read was changed
    [new] = after[len(before):]
    assert new["type"] == "compaction" and new["parentId"] == "e2" and new["firstKeptEntryId"] == "u3"
    assert new["details"]["lab"]["run"] == run and new["details"]["lab"]["prompt"] == "ours"
    assert new["systemMessage"]["content"] and f"node={new['id']}" in r.headers["Location"]
    again = client.post("/s/s.jsonl/-/lab/keep", data={"csrf_token": token, "run": run, "at": "k1", "candidate": "cnope"})
    assert again.status_code == 409 and "no finished candidate" in again.get_data(as_text=True)


def test_a_file_the_app_never_writes_gets_a_continuation_with_the_kept_compaction(tmp_path, llm_server):
    root = tmp_path / "sessions"
    root.mkdir()
    path = lab_session(version=2).write(root / "old.jsonl")
    client, token = client_for(root, ModelConfig(None))
    before = path.read_bytes()
    r = client.post("/s/old.jsonl/-/lab", data={"csrf_token": token, "at": "k1", "model": ["extractive"],
                                                "prompt": ["ours"], "turns": "0"})
    run = r.headers["Location"].split("run=")[1]
    html = client.get(r.headers["Location"]).get_data(as_text=True)
    cid = next(part.split('"')[0] for part in html.split('name="candidate" value="')[1:])
    r = client.post("/s/old.jsonl/-/lab/keep", data={"csrf_token": token, "run": run, "at": "k1", "candidate": cid})
    assert r.status_code == 303 and path.read_bytes() == before
    [made] = [p for p in root.iterdir() if p != path]
    lines = lines_of(made.read_bytes())
    assert lines[0]["parentSession"] == str(path.resolve())
    assert lines[-1]["type"] == "compaction" and lines[-1]["details"]["lab"]["candidate"] == cid
    kept = Session.open(made).tree
    assert kept.by_id[lines[-1]["firstKeptEntryId"]].message["content"] == "Now add a --strict flag."


def test_two_summaries_diff_word_by_word(setup):
    client, token, _ = setup
    r = client.post("/s/s.jsonl/-/lab", data=form(token, model=["extractive", MODEL], prompt=["ours"], turns="0"))
    run = r.headers["Location"].split("run=")[1]
    html = client.get(r.headers["Location"]).get_data(as_text=True)
    ids = [part.split('"')[0] for part in html.split('name="candidate" value="')[1:]]
    diff = client.get(f"/s/s.jsonl/lab/diff?run={run}&at=k1&a={ids[0]}&b={ids[1]}").get_data(as_text=True)
    assert "<ins>" in diff and "<del>" in diff
    assert "Diff against the recorded summary" in html
    assert client.get(f"/s/s.jsonl/lab/diff?run={run}&at=k1&a=recorded&b=nope").status_code == 404


def test_the_report_is_json_and_html_and_a_redacted_one_hides_what_was_said(setup):
    client, token, _ = setup
    r = client.post("/s/s.jsonl/-/lab", data=form(token, model=["extractive"], prompt=["ours"], turns="0"))
    run = r.headers["Location"].split("run=")[1]
    got = json.loads(client.get(f"/lab/{run}/report.json").get_data())
    assert got["targets"][0]["table"][0]["rank"] == 1 and got["status"] == "finished"
    assert SECRET in json.dumps(got)  # the extractive summary quotes the user
    page = client.get(f"/lab/{run}/report.html").get_data(as_text=True)
    assert SECRET in page and "attachment" in client.get(f"/lab/{run}/report.html").headers["Content-Disposition"]
    hidden = client.get(f"/lab/{run}/report.html?redact=1").get_data(as_text=True)
    assert SECRET not in hidden and "Redacted: " in hidden
    assert SECRET not in client.get(f"/lab/{run}/report.json?redact=1").get_data(as_text=True)
    assert client.get("/lab/nope/report.json").status_code == 404


def test_a_prompt_saved_by_name_is_offered_and_sent_after_the_conversation(setup, llm_server):
    client, token, _ = setup
    words = "Summarize in three bullets. Keep every command."
    fragment = client.post("/s/s.jsonl/-/lab/prompt", headers={"HX-Request": "true"},
                           data={"csrf_token": token, "name": "three bullets", "text": words}).get_data(as_text=True)
    assert 'value="three bullets" form="lab-form" checked' in fragment and 'value="pi"' in fragment
    assert 'value="three bullets"' in client.get("/s/s.jsonl/lab?at=k1").get_data(as_text=True)
    bad = client.post("/s/s.jsonl/-/lab/prompt", data={"csrf_token": token, "name": "pi", "text": "x"})
    assert bad.status_code == 400 and "built-in name" in bad.get_data(as_text=True)
    r = client.post("/s/s.jsonl/-/lab", data=form(token, prompt=["three bullets"], turns="0"))
    assert r.status_code == 303
    [sent] = [b["messages"] for b in llm_server.requests]
    assert sent[1]["content"].startswith("<conversation>\n[User]: Build a CSV importer")
    assert sent[1]["content"].endswith("</conversation>\n\n" + words)
