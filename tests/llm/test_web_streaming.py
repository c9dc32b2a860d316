"""The one streaming path (webapp/web/streaming.py) through the real app: a browser that stops
reading cancels the model call (the model server sees its client go, nothing is written), a
silence is filled with comment lines so that a browser gone is noticed while the model is quiet,
and what the work lets out is said as an event."""

from __future__ import annotations

import json

from flask import Flask

from tests.llm.test_web_summary_stream import RICH, SSE, USER, client_for, events, root  # noqa: F401
from tests.llm.conftest import MODEL, PATIENT
from webapp.core.session import Session
from webapp.model.cancel import Cancel
from webapp.model.llm import ModelConfig
from webapp.web import streaming


def config_for(llm_server) -> ModelConfig:
    return ModelConfig(MODEL, api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT)


def test_a_browser_that_leaves_mid_reply_cancels_it_and_the_model_server_stops(root, llm_server):  # noqa: F811
    llm_server.behave("generate", delay=0.1, limit=500)
    client, token = client_for(root, config_for(llm_server))
    path = root / RICH
    before = Session.open(path).tree.entries
    r = client.post(f"/s/{RICH}/-/reply", data={"csrf_token": token, "node": USER}, headers=SSE, buffered=False)
    frames = iter(r.response)
    read = ""
    while read.count('"text": " word"') < 3:  # the reply has begun streaming
        frame = next(frames)
        read += frame.decode() if isinstance(frame, bytes) else frame
    r.close()  # what the server does when the browser's connection goes: the stream is closed
    assert llm_server.client_closed.wait(60) and llm_server.generated < 500
    after = Session.open(path).tree.entries
    assert [e.role or e.type for e in after[len(before):]] == []  # the user message was there already; no reply


def test_a_silence_is_filled_with_comments_that_a_browser_skips(llm_server):
    app = Flask(__name__)
    cancel = Cancel()

    def work(send) -> None:
        send("delta", {"text": "a"})
        cancel.wait(streaming.SILENCE_CHECK * 2.5)  # a model still reading its prompt
        send("done", {"node": "x"})

    with app.test_request_context():
        body = "".join(streaming.event_stream(work, cancel, first=[("user", {"node": "u"})]).response)
    assert body.count(": still working\n\n") >= 2
    assert events(body) == [("user", {"node": "u"}), ("delta", {"text": "a"}), ("done", {"node": "x"})]
    assert not cancel.is_set()  # the work ended by itself: nothing to cancel


def test_what_the_work_lets_out_is_said_as_an_event():
    app = Flask(__name__)

    def work(send) -> None:
        raise RuntimeError("the disk is full")

    with app.test_request_context():
        body = "".join(streaming.event_stream(work, Cancel()).response)
    assert events(body) == [("error", {"message": "RuntimeError: the disk is full", "kind": "server"})]
    assert json.loads(body.split("data: ")[1])["kind"] == "server"
