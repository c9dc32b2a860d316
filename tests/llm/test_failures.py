"""What a failed or odd model answer leaves: no reply written, a clear error, a safe retry."""

from __future__ import annotations

import pytest

from tests.conftest import lines_of
from tests.llm.conftest import rich_session, run
from webapp.core.session import Session
from webapp.model.llm import ModelError, complete


@pytest.mark.parametrize("behaviour, options, words", [
    ("html", {}, "answered with text/html, not a model reply. Check --api-base"),
    ("reply", {"pieces": [], "text": ""}, "answered with neither text nor tool calls, so nothing was written"),
])
def test_a_200_that_is_not_a_reply_writes_no_answer_and_exits_2(
        capsys, tmp_path, llm_server, model_env, behaviour, options, words):
    path = rich_session(tmp_path / "s.jsonl")
    before = lines_of(path.read_bytes())
    llm_server.behave(behaviour, **options)
    code, out, err = run(capsys, "continue", path, "--message", "Hello?", *model_env)
    assert code == 2 and out == ""
    assert words in err
    after = lines_of(path.read_bytes())
    assert after[:-1] == before and after[-1]["message"]["role"] == "user"  # the message only


def test_verbose_shows_the_request_and_the_raw_response(capsys, tmp_path, llm_server, model_env):
    path = rich_session(tmp_path / "s.jsonl")
    llm_server.behave("reply", pieces=[], text="")
    code, _, err = run(capsys, "continue", path, "--message", "Hello?", "--verbose", *model_env)
    assert code == 2
    request, _, raw = err.partition("raw response:")
    assert '"content": "Hello?"' in request and '"tool_call_id": "call_9"' in request
    assert '"finish_reason":"stop"' in raw and '"chat.completion.chunk"' in raw


def test_a_failed_continue_says_the_message_was_kept_and_retry_writes_it_once(
        capsys, tmp_path, llm_server, model_env):
    path = rich_session(tmp_path / "s.jsonl")
    llm_server.behave("500")
    code, _, err = run(capsys, "continue", path, "--message", "Add tests.", *model_env)
    kept = lines_of(path.read_bytes())[-1]
    assert code == 2
    assert f"Your message was kept as entry {kept['id']} with no reply" in err
    assert f"session-tree continue {path} --retry" in err
    llm_server.behave("stream", pieces=["Tests added."])
    code, out, err = run(capsys, "continue", path, "--retry", *model_env)
    assert code == 0, err
    assert out == "Tests added.\n"
    lines = lines_of(path.read_bytes())
    users = [e for e in lines if e.get("message", {}).get("content") == [{"type": "text", "text": "Add tests."}]]
    assert len(users) == 1
    assert lines[-1]["parentId"] == kept["id"] and lines[-1]["message"]["role"] == "assistant"
    assert llm_server.requests[-1]["messages"][-1] == {"role": "user", "content": "Add tests."}


def test_retry_refuses_when_nothing_waits_for_a_reply(capsys, tmp_path, llm_server, model_env):
    path = rich_session(tmp_path / "s.jsonl")
    llm_server.behave("stream")
    assert run(capsys, "continue", path, "--message", "One.", *model_env)[0] == 0
    size = len(path.read_bytes())
    code, _, err = run(capsys, "continue", path, "--retry", *model_env)
    assert code == 2 and "nothing waits for a reply there: it is assistant" in err
    assert len(path.read_bytes()) == size
    code, _, err = run(capsys, "continue", path, *model_env)
    assert code == 2 and "give either --message TEXT, or --retry" in err


def test_regenerate_writes_a_second_answer_beside_the_first(capsys, tmp_path, llm_server, model_env):
    path = rich_session(tmp_path / "s.jsonl")
    llm_server.behave("stream", pieces=["First."])
    run(capsys, "continue", path, "--message", "Name it.", *model_env)
    first = lines_of(path.read_bytes())[-1]
    llm_server.behave("stream", pieces=["Second."])
    code, out, err = run(capsys, "regenerate", path, first["id"], *model_env)
    assert code == 0 and out == "Second.\n", err
    second = lines_of(path.read_bytes())[-1]
    assert second["parentId"] == first["parentId"] and second["id"] != first["id"]
    assert Session.open(path).tree.active_leaf == second["id"]


def test_regenerate_a_compaction_writes_a_new_summary_beside_it(capsys, tmp_path, llm_server, model_env):
    path = rich_session(tmp_path / "s.jsonl")
    llm_server.behave("reply", text="## Goal\nA parser, again.")
    code, out, err = run(capsys, "regenerate", path, "c4", *model_env)
    assert code == 0, err
    entry = lines_of(path.read_bytes())[-1]
    assert out.strip() == entry["id"] and entry["type"] == "compaction" and entry["parentId"] == "u3"
    assert entry["firstKeptEntryId"] == "u3" and entry["details"]["regenerates"] == "c4"


@pytest.mark.parametrize("behaviour, says, never", [
    ("badjson", "answered with a body that is not valid JSON", ["(500)", "LegacyAPIResponse"]),
    ("cut", "answered, but its reply was cut short", ["Could not connect", "server is running"]),
    ("500", "The model server failed (500): The server had an error while processing your request. Try",
     ["!.", ".."]),
    ("anthropic404", "rejected the request (404): model: test-model. Check --model", ["b'", '{"type"']),
])
def test_error_messages_say_what_the_server_did(llm_server, config, behaviour, says, never):
    llm_server.behave(behaviour)
    with pytest.raises(ModelError) as e:
        complete(config, [{"role": "user", "content": "Hi"}], stream=behaviour != "badjson")
    assert says in str(e.value)
    assert not any(n in str(e.value) for n in never), str(e.value)
    assert e.value.request == [{"role": "user", "content": "Hi"}] and e.value.raw


def test_usage_a_server_did_not_report_is_marked_estimated(llm_server, config):
    llm_server.behave("stream", usage=None)
    assert complete(config, [{"role": "user", "content": "Hi"}], stream=True).usage["estimated"] is True
    llm_server.behave("stream")
    usage = complete(config, [{"role": "user", "content": "Hi"}], stream=True).usage
    assert "estimated" not in usage and usage["input"] == 12 and usage["output"] == 5
