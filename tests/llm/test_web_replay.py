"""Replaying a branch through the real app: the page, the stream of its steps, the form without
JavaScript, a bad form's clear 400, and a read-only file, which is never written."""

from __future__ import annotations

import pytest

from tests.conftest import Builder, lines_of
from tests.llm.conftest import PATIENT
from tests.llm.test_replay import recorded_session, script
from tests.llm.test_web_summary_stream import SSE, client_for, events
from webapp.core.session import Session
from webapp.model.llm import ModelConfig


@pytest.fixture
def setup(tmp_path, llm_server):
    root = tmp_path / "sessions"
    root.mkdir()
    path, project = recorded_session(root)
    client, token = client_for(root, ModelConfig("openai/test-model", api_base=llm_server.api_base,
                                                 api_key="dummy", timeout=PATIENT), models=("openai/other-model", "m"))
    return client, token, path


def test_the_page_offers_the_branch_its_starts_and_the_configured_model(setup):
    client, _, _ = setup
    html = client.get("/s/s.jsonl/replay?from=a6").get_data(as_text=True)
    assert '<option value="a8" selected>' in html and '<option value="a6" selected>' in html
    assert "<option selected>openai/test-model</option>" in html and "<option>openai/other-model</option>" in html
    assert 'value="sandbox"' not in html and 'name="allow_bash"' not in html  # off unless the server allows them
    assert "Sandbox tools are off" in html and "--allow-sandbox" in html
    html = client.get("/s/s.jsonl/replay?leaf=a8&from=a8").get_data(as_text=True)
    assert '<option value="u1" selected>' in html  # nothing follows a8: the branch's own start instead
    assert client.get("/s/s.jsonl/replay?leaf=nope").status_code == 404


def test_the_stream_tells_each_step_and_ends_with_the_new_branch(setup, llm_server):
    client, token, path = setup
    script(llm_server, {"calls": [("read", {"path": "src/app.py"})]}, {"text": "Fixed."}, {"text": "Docs."})
    r = client.post("/s/s.jsonl/-/replay", headers=SSE, data={
        "csrf_token": token, "leaf": "a8", "from": "u1", "model": "openai/other-model", "tools": "recorded",
        "max_steps": "10"})
    got = events(r.get_data(as_text=True))
    names = [e for e, _ in got]
    assert names[0] == "start" and names[-1] == "end" and names.count("reply") == 3 and names.count("tool") == 1
    assert got[0][1]["prompts"] == 1 and got[0][1]["tools"] == "recorded"
    end = got[-1][1]
    assert end["hits"] == 1 and end["misses"] == 0 and end["stopped"] is None
    assert end["open"].endswith(f"?node={end['leaf']}&tab=branches") and end["compare"].endswith(f"a8,{end['leaf']}")
    assert Session.open(path).entry(end["first"]).get("details")["replayOf"] == "a8"
    assert llm_server.refused == []


def test_without_javascript_the_replay_is_waited_for_and_its_branch_opens(setup, llm_server):
    client, token, path = setup
    script(llm_server, {"text": "Once more."})
    r = client.post("/s/s.jsonl/-/replay", data={"csrf_token": token, "leaf": "a8", "from": "a6",
                                                 "model": "openai/other-model", "max_steps": "1"})
    leaf = lines_of(path.read_bytes())[-1]["id"]
    assert r.status_code == 303 and r.headers["Location"].endswith(f"node={leaf}&tab=branches")
    html = client.get(r.headers["Location"]).get_data(as_text=True)
    assert "replay of leaf a8 from a6 on other-model, recorded tools: 0 hits, 0 misses" in html


def test_a_bad_form_is_a_clear_400_and_writes_nothing(setup, llm_server):
    client, token, path = setup
    before = path.read_bytes()
    for form, said in [({"leaf": "a8", "from": "u1", "model": "m", "max_steps": "0"}, "at least 1"),
                       ({"leaf": "a8", "from": "u1", "model": "m", "max_cost": "lots"}, "is not a number"),
                       ({"leaf": "a6", "from": "a8", "model": "m"}, "not on the branch")]:
        r = client.post("/s/s.jsonl/-/replay", data={"csrf_token": token, **form})
        assert r.status_code == 400 and said in r.get_data(as_text=True), form
    allowing, token = client_for(path.parent, ModelConfig("m"), ALLOW_BASH=True)
    r = allowing.post("/s/s.jsonl/-/replay", data={"csrf_token": token, "leaf": "a8", "from": "u1", "allow_bash": "1"})
    assert r.status_code == 400 and "only in a sandbox" in r.get_data(as_text=True)
    assert path.read_bytes() == before and llm_server.requests == []


def test_a_form_cannot_turn_on_tools_or_name_a_model_the_server_was_not_started_with(setup, llm_server):
    client, token, path = setup
    before = path.read_bytes()
    form = {"csrf_token": token, "leaf": "a8", "from": "u1"}
    for extra, said in [({"tools": "sandbox"}, "sandbox tools are off on this server"),
                        ({"tools": "sandbox", "allow_bash": "1"}, "sandbox tools are off on this server"),
                        ({"tools": "recorded", "allow_bash": "1"}, "bash is off on this server"),
                        ({"model": "ollama_chat/x"}, "the model ollama_chat/x is not one this server offers")]:
        r = client.post("/s/s.jsonl/-/replay", data={**form, **extra})
        assert r.status_code == 403 and said in r.get_data(as_text=True), extra
    assert path.read_bytes() == before and llm_server.requests == []


def test_a_server_started_with_the_sandbox_offers_it_and_says_how_it_holds(tmp_path, llm_server):
    root = tmp_path / "sessions"
    root.mkdir()
    path, _ = recorded_session(root)
    config = ModelConfig("openai/test-model", api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT)
    client, token = client_for(root, config, ALLOW_SANDBOX=True)
    html = client.get("/s/s.jsonl/replay").get_data(as_text=True)
    assert 'value="sandbox"' in html and 'name="allow_bash"' not in html
    assert "each tool call runs in bubblewrap: no network" in html and "start the server with <code>--allow-bash" in html
    r = client.post("/s/s.jsonl/-/replay", data={"csrf_token": token, "leaf": "a8", "from": "u1", "allow_bash": "1",
                                                 "tools": "sandbox"})
    assert r.status_code == 403 and "bash is off" in r.get_data(as_text=True)
    script(llm_server, {"calls": [("bash", {"command": "id"})]}, {"text": "ok"})
    client, token = client_for(root, config, ALLOW_BASH=True)
    assert 'name="allow_bash"' in client.get("/s/s.jsonl/replay").get_data(as_text=True)
    r = client.post("/s/s.jsonl/-/replay", data={"csrf_token": token, "leaf": "a6", "from": "u1", "allow_bash": "1",
                                                 "tools": "sandbox", "max_steps": "2"})
    assert r.status_code == 303
    said = [e for e in lines_of(path.read_bytes()) if e.get("message", {}).get("role") == "toolResult"][-1]
    assert said["message"]["toolName"] == "bash" and not said["message"]["isError"]


def test_a_read_only_file_offers_no_replay_and_refuses_one(tmp_path, llm_server):
    root = tmp_path / "ro"
    root.mkdir()
    b = Builder(version=1)
    b.user("q")
    b.assistant("a")
    v1 = b.write(root / "v1.jsonl")
    before = v1.read_bytes()
    client, token = client_for(root, ModelConfig("openai/test-model", api_base=llm_server.api_base))
    html = client.get("/s/v1.jsonl/replay").get_data(as_text=True)
    assert "pi v1 session" in html and 'id="replay-form"' not in html
    r = client.post("/s/v1.jsonl/-/replay", data={"csrf_token": token, "leaf": "e2", "from": "e1", "model": "m"})
    assert r.status_code == 403 and v1.read_bytes() == before and llm_server.requests == []


def test_serve_takes_its_models_and_what_may_run_from_its_flags(tmp_path, monkeypatch, capsys):
    import signal

    import flask

    from webapp.cli import main

    root = tmp_path / "sessions"
    root.mkdir()
    recorded_session(root)
    served = []
    monkeypatch.setattr(flask.Flask, "run", lambda app, **_: served.append(app))
    monkeypatch.setattr(signal, "signal", lambda *_: None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert main(["serve", str(root), "--model", "openai/a", "--model", "openai/b", "--allow-bash", "--port", "8123"]) == 0
    out = capsys.readouterr().out
    assert "sandbox tools and bash allowed in replays; each tool call runs in bubblewrap" in out
    (app,) = served
    assert app.config["MODEL_CONFIG"].model == "openai/a" and app.config["MODELS"] == ("openai/b",)
    assert app.config["ALLOW_SANDBOX"] and app.config["ALLOW_BASH"]
    html = app.test_client().get("/s/s.jsonl/replay").get_data(as_text=True)
    assert "<option selected>openai/a</option>" in html and "<option>openai/b</option>" in html
    assert 'name="allow_bash"' in html
    served.clear()
    assert main(["serve", str(root), "--port", "8123"]) == 0
    assert not served[0].config["ALLOW_SANDBOX"] and "allowed in replays" not in capsys.readouterr().out
