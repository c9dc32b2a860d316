"""Model calls through litellm against a local OpenAI-compatible server, and continuing a branch."""

import dataclasses

import pytest

from tests.conftest import lines_of
from tests.llm.conftest import MODEL, PATIENT, TIMEOUT, rich_session
from webapp.core.context import build_context
from webapp.core.session import Session
from webapp.model.llm import ModelConfig, ModelError, complete, continue_branch

HELLO = [{"role": "user", "content": "hi"}]


def sent(messages: list[dict]) -> list[dict]:
    """Messages as the server receives them: an assistant message with only tool calls carries
    `content: ""` (local servers' chat templates read it; OpenAI reads it as null)."""
    return [{**m, "content": ""} if m.get("role") == "assistant" and m.get("content") is None else m
            for m in messages]


# -- configuration ---------------------------------------------------------------------------------


def test_config_from_env_prefers_arguments(monkeypatch):
    assert not ModelConfig.from_env().configured
    monkeypatch.setenv("SESSION_TREE_MODEL", "anthropic/claude-x")
    monkeypatch.setenv("SESSION_TREE_API_BASE", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SESSION_TREE_API_KEY", "k")
    monkeypatch.setenv("SESSION_TREE_TIMEOUT", "2.5")
    c = ModelConfig.from_env()
    assert (c.model, c.api_base, c.api_key, c.timeout, c.configured) == (
        "anthropic/claude-x", "http://127.0.0.1:9/v1", "k", 2.5, True)
    c = ModelConfig.from_env("openai/other", "http://127.0.0.1:8/v1")
    assert (c.model, c.api_base) == ("openai/other", "http://127.0.0.1:8/v1")
    monkeypatch.setenv("SESSION_TREE_TIMEOUT", "soon")
    with pytest.raises(ModelError, match="SESSION_TREE_TIMEOUT"):
        ModelConfig.from_env()


def test_no_model_is_refused_before_any_call():
    with pytest.raises(ModelError) as e:
        complete(ModelConfig(None), HELLO)
    assert e.value.kind == "no-model" and "SESSION_TREE_MODEL" in str(e.value)


# -- complete --------------------------------------------------------------------------------------


def test_complete_returns_text_usage_and_ids(llm_server, config):
    reply = complete(config, HELLO)
    assert reply.text == "Hello from the test model." and reply.thinking == "" and reply.tool_calls == []
    assert reply.stop_reason == "stop" and reply.provider == "openai" and reply.model == "test-model"
    assert reply.response_id == "chatcmpl-test"
    assert reply.usage == {"input": 12, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 17,
                           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    body = llm_server.requests[-1]
    assert body["messages"] == HELLO and body["model"] == "test-model" and not body.get("stream")


def test_streamed_reply_passes_deltas_on_and_matches_the_whole(llm_server, config):
    llm_server.behave("stream", thinking=["Let me ", "see."], pieces=["Hel", "lo", " there"])
    deltas = []
    reply = complete(config, HELLO, stream=True, on_delta=lambda kind, text: deltas.append((kind, text)))
    assert deltas == [("thinking", "Let me "), ("thinking", "see."), ("text", "Hel"), ("text", "lo"),
                      ("text", " there")]
    assert reply.text == "Hello there" and reply.thinking == "Let me see." and reply.stop_reason == "stop"
    assert reply.usage["totalTokens"] == 17  # from the final usage chunk
    body = llm_server.requests[-1]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("stream", [False, True])
def test_tool_calls_come_back_parsed(llm_server, config, stream):
    llm_server.behave("tool", pieces=[])
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    reply = complete(config, HELLO, stream=stream, tools=tools)
    assert reply.tool_calls == [{"id": "call_1", "name": "read", "arguments": {"path": "src/app.py"}}]
    assert reply.stop_reason == "toolUse" and reply.text == ""
    assert llm_server.requests[-1]["tools"] == tools


def test_a_bare_model_name_with_an_api_base_is_an_openai_compatible_server_without_a_key(llm_server):
    config = ModelConfig("local-model", api_base=f"http://127.0.0.1:{llm_server.port}", timeout=PATIENT)
    reply = complete(config, HELLO)
    assert reply.text and (reply.provider, reply.model) == ("openai", "local-model")
    assert llm_server.requests[-1]["model"] == "local-model"
    assert llm_server.seen[-1] == ("/chat/completions", "Bearer none")  # a placeholder, not a real key


def test_the_api_key_is_sent(llm_server, config):
    complete(config, HELLO)
    assert llm_server.seen[-1] == ("/v1/chat/completions", "Bearer dummy")


def test_cost_comes_from_litellms_model_table(llm_server):
    import litellm

    config = ModelConfig("openai/gpt-4o-mini", api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT)
    usage = complete(config, HELLO).usage
    prompt_cost, completion_cost = litellm.cost_per_token(model="gpt-4o-mini", prompt_tokens=12,
                                                          completion_tokens=5)
    assert usage["cost"]["input"] == pytest.approx(prompt_cost)
    assert usage["cost"]["output"] == pytest.approx(completion_cost)
    assert usage["cost"]["total"] == pytest.approx(prompt_cost + completion_cost) and usage["cost"]["total"] > 0


def test_cached_tokens_are_counted_apart_from_input(llm_server, config):
    llm_server.behave("reply", usage={"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107,
                                      "prompt_tokens_details": {"cached_tokens": 60}})
    usage = complete(config, HELLO).usage
    assert (usage["input"], usage["cacheRead"], usage["output"], usage["totalTokens"]) == (40, 60, 7, 107)


def test_assistant_message_is_pi_shaped(llm_server, config):
    llm_server.behave("tool", text="Reading it.")
    msg = complete(config, HELLO).assistant_message()
    assert msg["role"] == "assistant" and msg["api"] == "litellm"
    assert msg["content"] == [{"type": "text", "text": "Reading it."},
                              {"type": "toolCall", "id": "call_1", "name": "read",
                               "arguments": {"path": "src/app.py"}}]
    assert (msg["provider"], msg["model"], msg["stopReason"], msg["responseId"]) == (
        "openai", "test-model", "toolUse", "chatcmpl-test")
    assert isinstance(msg["timestamp"], int) and msg["timestamp"] > 1_600_000_000_000
    assert set(msg["usage"]) == {"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}


# -- errors ----------------------------------------------------------------------------------------

ERROR_CASES = [
    ("401", "auth", ["refused the API key (401)", "Incorrect API key", "OPENAI_API_KEY", "SESSION_TREE_API_KEY"]),
    ("429", "rate-limit", ["rate-limiting", "(429)", "Rate limit reached"]),
    ("500", "server", ["failed (500)", "error while processing"]),
    ("400", "bad-request", ["rejected the request (400)", "must not be empty"]),
    ("404", "bad-request", ["(404)", "does not exist", "--model"]),
    ("hang", "timeout", [f"within {TIMEOUT:g} s", "SESSION_TREE_TIMEOUT"]),
]


def within_time_limit(config: ModelConfig, behaviour: str) -> ModelConfig:
    """A server that hangs is given up on after TIMEOUT; any other answers within the patient
    limit of `config`, however loaded the machine."""
    return dataclasses.replace(config, timeout=TIMEOUT) if behaviour == "hang" else config


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("behaviour,kind,words", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_map_to_a_kind_and_a_clear_message(llm_server, config, behaviour, kind, words, stream):
    llm_server.behave(behaviour)
    with pytest.raises(ModelError) as e:
        complete(within_time_limit(config, behaviour), HELLO, stream=stream)
    assert e.value.kind == kind
    message = str(e.value)
    assert all(w in message for w in words), message
    assert "litellm." not in message and "\n" not in message


def test_a_refused_connection_is_a_connection_error():
    config = ModelConfig(MODEL, api_base="http://127.0.0.1:1/v1", api_key="dummy", timeout=TIMEOUT)
    with pytest.raises(ModelError) as e:
        complete(config, HELLO)
    assert e.value.kind == "connection" and "http://127.0.0.1:1/v1" in str(e.value)


def test_a_missing_key_is_an_auth_error():
    with pytest.raises(ModelError) as e:
        complete(ModelConfig("openai/gpt-4o-mini", timeout=TIMEOUT), HELLO)
    assert e.value.kind == "auth" and "OPENAI_API_KEY" in str(e.value)


def test_a_stream_that_breaks_raises_instead_of_returning_part_of_a_reply(llm_server, config):
    llm_server.behave("break")
    deltas = []
    with pytest.raises(ModelError) as e:
        complete(config, HELLO, stream=True, on_delta=lambda kind, text: deltas.append(text))
    assert e.value.kind == "stream" and "discarded" in str(e.value)
    assert deltas  # it did break midway


# -- continue_branch -------------------------------------------------------------------------------


def test_continue_sends_exactly_the_core_context_and_appends_the_reply(llm_server, config, tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    session = Session.open(path)
    llm_server.behave("stream", pieces=["Line", " numbers", " added."])
    deltas = []
    result = continue_branch(session, config, "Also test them.", on_delta=lambda k, t: deltas.append(t))
    user, assistant = result["userEntry"], result["assistantEntry"]
    assert user["parentId"] == "u10" and user["message"]["role"] == "user"
    assert user["message"]["content"] == [{"type": "text", "text": "Also test them."}]
    assert assistant["parentId"] == user["id"] and deltas == ["Line", " numbers", " added."]
    msg = assistant["message"]
    assert msg["content"] == [{"type": "text", "text": "Line numbers added."}]
    assert (msg["provider"], msg["model"], msg["api"], msg["stopReason"]) == (
        "openai", "test-model", "litellm", "stop")
    assert msg["usage"]["totalTokens"] == 17 and msg["usage"]["cost"]["total"] == 0

    fresh = Session.open(path)
    assert lines_of(path.read_bytes())[-2:] == [user, assistant]
    assert fresh.tree.active_leaf == assistant["id"]
    expected = build_context(fresh.tree, user["id"]).llm_messages()
    assert llm_server.requests[-1]["messages"] == sent(expected)
    # the context really has every part: the compaction summary first, the tool turn, the branch summary
    assert expected[0]["role"] == "user" and "Build a config parser" in expected[0]["content"]
    assert [m["role"] for m in expected[1:]] == ["user", "assistant", "tool", "assistant", "user", "user", "user"]


def test_continue_at_another_leaf_branches_from_it(llm_server, config, tmp_path):
    session = Session.open(rich_session(tmp_path / "s.jsonl"))
    result = continue_branch(session, config, "Back to this one.", leaf="a8")
    assert result["userEntry"]["parentId"] == "a8"
    sent_messages = llm_server.requests[-1]["messages"]
    assert sent_messages[-2:] == [{"role": "assistant", "content": "A different approach."},
                                  {"role": "user", "content": "Back to this one."}]


def test_tool_calls_in_the_reply_are_stored_not_run(llm_server, config, tmp_path):
    session = Session.open(rich_session(tmp_path / "s.jsonl"))
    llm_server.behave("tool", pieces=["Let me look."])
    msg = continue_branch(session, config, "Check the file.")["assistantEntry"]["message"]
    assert msg["stopReason"] == "toolUse"
    assert msg["content"][-1] == {"type": "toolCall", "id": "call_1", "name": "read",
                                  "arguments": {"path": "src/app.py"}}
    assert len(llm_server.requests) == 1  # nothing ran the tool and called again


@pytest.mark.parametrize("behaviour", ["401", "429", "500", "hang", "break"])
def test_a_failed_call_keeps_the_user_message_and_writes_no_reply(llm_server, config, tmp_path, behaviour):
    path = rich_session(tmp_path / "s.jsonl")
    before = lines_of(path.read_bytes())
    llm_server.behave(behaviour)
    with pytest.raises(ModelError):
        continue_branch(Session.open(path), within_time_limit(config, behaviour), "Will this fail?")
    after = lines_of(path.read_bytes())
    assert after[:-1] == before and len(after) == len(before) + 1
    assert after[-1]["message"]["role"] == "user" and after[-1]["parentId"] == "u10"


def test_continue_without_a_model_writes_nothing(tmp_path):
    path = rich_session(tmp_path / "s.jsonl")
    before = path.read_bytes()
    with pytest.raises(ModelError) as e:
        continue_branch(Session.open(path), ModelConfig(None), "hello")
    assert e.value.kind == "no-model" and path.read_bytes() == before
