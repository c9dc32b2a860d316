"""The fake server refuses what OpenAI refuses, with OpenAI's words: the model tests rely on it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

CALL = {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{}"}}


def post(server, messages) -> tuple[int, dict]:
    req = urllib.request.Request(
        server.api_base + "/chat/completions",
        data=json.dumps({"model": "test-model", "messages": messages}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_accepts_a_tool_call_answered_by_its_result(llm_server):
    status, body = post(llm_server, [
        {"role": "user", "content": "read it"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "text"},
        {"role": "user", "content": "go on"},
    ])
    assert status == 200 and body["choices"][0]["message"]["content"]


@pytest.mark.parametrize("messages, words", [
    ([{"role": "user", "content": "x"}, {"role": "assistant", "content": None, "tool_calls": [CALL]},
      {"role": "user", "content": "y"}],
     "must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids "
     "did not have response messages: call_1"),
    ([{"role": "user", "content": "x"}, {"role": "assistant", "content": "", "tool_calls": [CALL]}],
     "did not have response messages: call_1"),
    ([{"role": "system", "content": "s"}, {"role": "tool", "tool_call_id": "call_1", "content": "r"},
      {"role": "user", "content": "y"}],
     "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"),
    ([{"role": "user", "content": "x"}, {"role": "assistant", "content": ""}, {"role": "user", "content": "y"}],
     "an assistant message must have 'content' or 'tool_calls'"),
    ([{"role": "user", "content": "x"}, {"role": "assistant", "content": None, "tool_calls": [CALL]},
      {"role": "tool", "tool_call_id": "call_1", "content": "r"},
      {"role": "tool", "tool_call_id": "call_1", "content": "again"}],
     "must be a response to a preceeding message with 'tool_calls'"),
])
def test_refuses_what_openai_refuses(llm_server, messages, words):
    status, body = post(llm_server, messages)
    assert status == 400
    assert body["error"]["type"] == "invalid_request_error"
    assert words in body["error"]["message"]
