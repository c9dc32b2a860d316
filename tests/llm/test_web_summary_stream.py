"""Model calls through the real app: a summary streamed as server-sent events (and the same
summary as the plain route answers it), and a failed reply on a plain form, with its details."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

import pytest

from tests.llm.conftest import MODEL, PATIENT
from webapp.core.session import Session
from webapp.model.llm import ModelConfig
from webapp.web.app import create_app

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
RICH = next(SAMPLES.rglob("*019cadd3-8025-7970-85d9-5954058b4714.jsonl")).relative_to(SAMPLES).as_posix()
USER = "019cadd4-11fc-768e-9ae0-a30dfef64997"  # a user message of RICH
SSE = {"Accept": "text/event-stream"}


@pytest.fixture
def root(tmp_path):
    shutil.copytree(SAMPLES, tmp_path / "s")
    return tmp_path / "s"


def client_for(root, config, models=(), **settings):
    """A test client of the app on `root` calling `config`'s model by default, `models` besides
    (as `serve --model` offers them), with app `settings` (ALLOW_SANDBOX=True, ...)."""
    app = create_app(root)
    app.config.update(MODEL_CONFIG=config, MODELS=tuple(models), **settings)
    return app.test_client(), app.config["CSRF_TOKEN"]


def events(body: str) -> list[tuple[str, dict]]:
    """The events of a stream, as a browser reads them (a ":" line is a comment: the server's
    check, during a silence, that the browser is still there)."""
    out = []
    for block in body.strip().split("\n\n"):
        if block.startswith(":"):
            continue
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def editor_text(fragment: str) -> str:
    return html.unescape(fragment.split("</textarea>")[0].split(">")[-1])


def test_a_model_summary_streams_its_deltas_then_the_editor_the_plain_route_gives(root, llm_server):
    pieces = ["## Goal\n", "Fix the rounding ", "of invoice totals."]
    llm_server.behave("reply", pieces=pieces, text="".join(pieces))  # streamed, or whole when not
    client, token = client_for(root, ModelConfig(MODEL, api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT))
    before = (root / RICH).read_bytes()
    form = {"csrf_token": token, "keep_recent_tokens": "300"}
    r = client.post(f"/s/{RICH}/-/compact/summary", data=form, headers=SSE)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    got = events(r.get_data(as_text=True))
    assert [e for e, _ in got] == ["delta"] * len(pieces) + ["done"]
    assert [d["text"] for _, d in got[:-1]] == pieces
    streamed = got[-1][1]["html"]
    assert editor_text(streamed) == "".join(pieces) and 'name="summarizer" value="model"' in streamed
    assert llm_server.requests[-1]["stream"] is True
    plain = client.post(f"/s/{RICH}/-/compact/summary", data=form).get_data(as_text=True)
    assert editor_text(plain) == "".join(pieces)  # the plain (htmx, no-JS) route answers the same editor
    assert (root / RICH).read_bytes() == before  # a summary to edit writes nothing


def test_a_failed_summary_stream_ends_with_an_error_event_and_its_details(root, llm_server):
    llm_server.behave("500")
    client, token = client_for(root, ModelConfig(MODEL, api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT))
    r = client.post(f"/s/{RICH}/-/compact/summary", data={"csrf_token": token, "keep_recent_tokens": "300"}, headers=SSE)
    [(event, data)] = events(r.get_data(as_text=True))
    assert event == "error" and "500" in data["message"] and "raw response" in data["details"]


def test_without_a_model_the_extractive_summary_comes_whole_in_one_event(root):
    client, token = client_for(root, ModelConfig(None))
    r = client.post(f"/s/{RICH}/-/compact/summary", data={"csrf_token": token, "keep_recent_tokens": "300"}, headers=SSE)
    [(event, data)] = events(r.get_data(as_text=True))
    assert event == "done" and editor_text(data["html"]).startswith("## Goal")
    assert 'name="summarizer" value="extractive"' in data["html"]


def test_a_failed_reply_on_a_plain_form_shows_the_request_and_raw_response_in_a_fold(root, llm_server):
    llm_server.behave("html")  # a web page with a 200: not a reply
    client, token = client_for(root, ModelConfig(MODEL, api_base=llm_server.api_base, api_key="dummy", timeout=PATIENT))
    before = len(Session.open(root / RICH).tree.entries)
    r = client.post(f"/s/{RICH}/-/reply", data={"csrf_token": token, "node": USER})
    page = r.get_data(as_text=True)
    assert r.status_code == 502 and "The message was kept" in page
    fold = page.split('<details class="error-details">')[1].split("</details>")[0]
    assert "details: the request and the raw response" in fold
    assert "content-type: text/html" in fold and "request messages:" in fold
    assert "&#34;role&#34;: &#34;user&#34;" in fold  # the messages sent, escaped
    new = Session.open(root / RICH).tree.entries[before:]
    assert "assistant" not in [e.role for e in new]  # no reply written


def test_a_drafted_summary_that_would_not_shrink_the_context_is_said_with_the_figures_before_commit(root, llm_server):
    long = "## Goal\n" + "Everything, at length. " * 20000
    llm_server.behave("reply", pieces=[long], text=long)
    client, token = client_for(root, ModelConfig(MODEL, api_base=llm_server.api_base, api_key="dummy", timeout=TIMEOUT))
    form = {"csrf_token": token, "keep_recent_tokens": "300"}
    for editor in (events(client.post(f"/s/{RICH}/-/compact/summary", data=form, headers=SSE).get_data(as_text=True))[-1][1]["html"],
                   client.post(f"/s/{RICH}/-/compact/summary", data=form).get_data(as_text=True)):
        said = html.unescape(editor)
        assert "data-refused" in editor and "This compaction would not shrink the context:" in said
        assert "tokens now," in said and "after (estimated, the summary included)" in said
        assert "Commit stays off until the summary is changed." in said
    # what the preview said is what the write refuses with
    refused = client.post(f"/s/{RICH}/-/compact", data={**form, "summary": editor_text(editor)})
    assert refused.status_code == 409
    figures = said.split("would not shrink the context: ")[1].split(" (estimated")[0]
    assert figures in html.unescape(refused.get_data(as_text=True))
    short = "## Goal\nFix the rounding of invoice totals."
    llm_server.behave("reply", pieces=[short], text=short)
    assert "data-refused" not in client.post(f"/s/{RICH}/-/compact/summary", data=form).get_data(as_text=True)
