"""What real local servers (llama.cpp's, llama-cpp-python's) do that hosted APIs do not, each
taught to the fake server and met here: no usage in the stream, a small model that generates
until `max_tokens` or its window, a 400 for a request larger than the window, a server that
accepts a request and dies, and chat templates that read every assistant message's `content`.
(A client that closes the connection mid-stream stops the generation: the Cancel tests.)"""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import lines_of
from tests.fake_llm import request_tokens, strict_problem
from tests.llm.conftest import PATIENT, rich_session, run
from tests.llm.test_replay import recorded_session
from tests.llm.test_summarize import work_session
from tests.llm.test_web_summary_stream import RICH, SAMPLES, SSE, client_for
from webapp.core.session import Session
from webapp.model.llm import ModelConfig
from webapp.model.replay import prepare
from webapp.model.replay import run as run_replay


def test_a_stream_without_usage_is_written_with_its_usage_said_to_be_estimated(capsys, tmp_path, llm_server,
                                                                                model_env):
    llm_server.behave("reply", pieces=["Done."], usage=None)
    path = rich_session(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "continue", path, "--message", "Anything else?", *model_env)
    assert code == 0, err
    reply = lines_of(path.read_bytes())[-1]["message"]
    assert reply["usage"]["estimated"] is True and reply["usage"]["output"] > 0
    assert "usage" not in str(llm_server.stream_chunks("reply", {"usage": None}))  # the fake sent none


def test_a_model_that_would_not_stop_is_bounded_by_max_tokens_and_written_as_cut(capsys, tmp_path, llm_server,
                                                                                 model_env):
    llm_server.behave("generate")
    path = rich_session(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "continue", path, "--message", "Tell me everything.", "--max-tokens", "9",
                         *model_env)
    assert code == 0, err
    assert llm_server.requests[-1]["max_tokens"] == 9
    reply = lines_of(path.read_bytes())[-1]["message"]
    assert reply["stopReason"] == "length" and reply["content"][0]["text"] == " word" * 9
    assert "the reply was cut at the length limit (9 tokens): the model did not finish it" in err


def test_the_window_a_server_reports_bounds_the_reply_to_what_it_leaves(capsys, tmp_path, llm_server, model_env):
    llm_server.window = 3000
    llm_server.behave("generate", words=[" word", " more"])
    path = rich_session(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "continue", path, "--message", "Go on.", *model_env)
    assert code == 0, err
    sent = llm_server.requests[-1]
    assert 0 < sent["max_tokens"] < 3000  # what the window leaves after the request
    assert sent["max_tokens"] + request_tokens(sent) <= 3000 + 200  # (the two estimates differ a little)
    assert lines_of(path.read_bytes())[-1]["message"]["stopReason"] == "length"


def test_a_request_that_cannot_fit_the_window_is_refused_before_it_is_sent_and_writes_nothing(
        capsys, tmp_path, llm_server, model_env):
    llm_server.window = 100  # smaller than the branch's context
    path = rich_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    code, out, err = run(capsys, "continue", path, "--message", "One more thing.", *model_env)
    assert code == 2 and "cannot fit, so nothing was sent or written" in err and "window is 100" in err
    assert llm_server.requests == [] and path.read_bytes() == before  # no user message, no model_change


def test_a_server_that_refuses_an_oversized_request_says_so_in_one_line(capsys, tmp_path, llm_server, model_env):
    llm_server.window = 100
    path = rich_session(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "continue", path, "--message", "Hi", "--context-window", "100000", *model_env)
    assert code == 2 and "(400): the request exceeds the available context size" in err  # our window was wrong
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize("kind", ["crash", "empty"])
def test_a_server_that_dies_after_accepting_the_request_is_not_blamed_on_the_model(capsys, tmp_path, llm_server,
                                                                                 model_env, kind):
    llm_server.behave(kind)
    path = rich_session(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "continue", path, "--message", "Still there?", *model_env)
    assert code == 2 and "answered with neither text nor tool calls" not in err
    assert ("it may have crashed" in err) if kind == "empty" else ("its reply was cut short" in err)
    assert [e["message"]["role"] for e in lines_of(path.read_bytes())[-1:]] == ["user"]  # only the message kept


def test_an_assistant_message_without_content_is_refused_as_local_servers_do():
    calls = [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": calls},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    assert "without 'content'" in strict_problem(messages)
    messages[1]["content"] = ""
    assert strict_problem(messages) is None


def test_a_summary_that_would_run_on_is_bounded_and_refused_when_cut(capsys, tmp_path, llm_server, model_env):
    llm_server.behave("generate", words=[" summary", " notes"])
    path = work_session().write(tmp_path / "s.jsonl")
    before = path.read_bytes()
    code, out, err = run(capsys, "compact", path, "--keep-recent-tokens", "220", *model_env)
    assert code == 2 and "The summary was cut at" in err and "nothing was written" in err
    sent = llm_server.requests[-1]
    assert sent["max_tokens"] < request_tokens(sent) / 2  # a share of what it replaces, which the prompt holds
    assert path.read_bytes() == before


def test_a_replay_step_cut_at_the_length_limit_stops_the_replay_and_says_so(tmp_path, llm_server, config):
    from dataclasses import replace

    path, _ = recorded_session(tmp_path)
    llm_server.behave("generate", words=[" thinking", " aloud"])
    replay = run_replay(prepare(Session.open(path), replace(config, model="openai/other-model", max_tokens=7),
                                "a8", "u1"))
    assert replay.stopped == "the reply was cut at the length limit (7 tokens): the model did not finish"
    stop = lines_of(path.read_bytes())[-1]
    assert stop["customType"] == "session-tree.replay-stop" and stop["data"]["reason"] == replay.stopped
    assert "; stopped: the reply was cut at the length limit" in replay.describe()


def test_keep_recent_and_reserve_fit_a_small_window(capsys, tmp_path):
    import orjson

    path = work_session().write(tmp_path / "s.jsonl")
    code, out, err = run(capsys, "compact", path, "--plan", "--json", "--context-window", "8192")
    plan = orjson.loads(out)
    assert (plan["contextWindow"], plan["reserveTokens"], plan["keepRecentTokens"]) == (8192, 2048, 3072)
    code, out, err = run(capsys, "compact", path, "--plan", "--json", "--context-window", "200000")
    plan = orjson.loads(out)
    assert (plan["reserveTokens"], plan["keepRecentTokens"]) == (16384, 20000)  # SPEC §6's, for a large window


def test_a_model_summary_that_would_not_shrink_the_context_is_refused_with_the_figures(capsys, tmp_path, llm_server,
                                                                                       model_env):
    llm_server.behave("reply", text="## Goal\n" + "Everything, at length. " * 400)
    path = work_session().write(tmp_path / "s.jsonl")
    before = path.read_bytes()
    code, out, err = run(capsys, "compact", path, "--keep-recent-tokens", "220", *model_env)
    assert code == 2 and "this compaction would not shrink the context:" in err
    assert "tokens now" in err and "after (estimated, the summary included)" in err
    assert path.read_bytes() == before


def test_the_page_and_ask_refuse_a_message_that_cannot_fit_before_writing_it(tmp_path, llm_server):
    root = tmp_path / "s"
    shutil.copytree(SAMPLES, root)
    llm_server.window = 500  # the sample's branch alone is larger
    client, token = client_for(root, ModelConfig("openai/test-model", llm_server.api_base, "dummy", timeout=PATIENT))
    before = (root / RICH).read_bytes()
    leaf = Session.open(root / RICH).tree.active_leaf
    r = client.post(f"/s/{RICH}/-/fork", data={"csrf_token": token, "node": leaf, "message": "And now?"}, headers=SSE)
    assert '"kind": "too-long"' in r.get_data(as_text=True) and "cannot fit" in r.get_data(as_text=True)
    r = client.post(f"/s/{RICH}/-/ask", data={"csrf_token": token, "at": leaf, "mode": "new", "model": "openai/test-model",
                                              "message": "And now?"}, headers=SSE)
    assert r.status_code == 400 and "cannot fit" in r.get_data(as_text=True)
    assert (root / RICH).read_bytes() == before and llm_server.requests == []


def test_the_timeout_is_on_silence_not_on_the_whole_answer(llm_server):
    from webapp.model.llm import complete

    llm_server.behave("generate", delay=0.4, limit=6, words=[" slow", " but", " steady"])  # 2.4 s in all
    config = ModelConfig("openai/test-model", llm_server.api_base, "dummy", timeout=1.0)
    reply = complete(config, [{"role": "user", "content": "Take your time."}], stream=True)
    assert reply.text == " slow but steady slow but steady" and reply.cut
